// Suites as versioned JSON (docs/configs.md#configs): parsing with errors that name the file and
// the key, and expansion into cases on a topology.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/schema/case.h"
#include "common/system/topology.h"

namespace wb {

inline constexpr int kConfigSchemaVersion = 1;

struct RunDefaults {
  int64_t round_trips = kDefaultRoundTrips;
  int64_t warmup = kDefaultWarmup;
  int repetitions = kDefaultRepetitions;
  double timeout_s = kDefaultTimeoutS;  // per repetition of a case, setup included
};

struct ConfigEntry {
  std::string where;  // "cases[2]", for error messages
  std::vector<std::string> mechanisms, modes, placements;
  std::vector<std::pair<std::string, std::vector<nlohmann::json>>> params;  // knob -> values
  RunDefaults run;  // the config's defaults, overridden by the entry's own keys
};

// A seed experiment's claim (docs/configs.md), printed after `run`'s summary beside this
// machine's measured counterparts (analysis/report/summary.cpp claims_table).
struct Claim {
  std::string seed, text;
  std::string metric = "median";  // median, mean, p99, tps or placement
  std::string policy;             // the patch the claim is about ("" when none)
  bool needs_hardware = false;    // about cost: an emulated guest's timings do not test it
  std::vector<std::string> cases;
};

struct Config {
  std::string path;  // as given; "" for text parsed from memory
  std::string text;  // the file's bytes (hashed into the result set)
  std::string name;
  RunDefaults defaults;
  std::vector<ConfigEntry> entries;
  std::vector<Claim> claims;
  nlohmann::json json;  // the parsed document, embedded in the result set
};

// The claims of a config document (its `claims`, none when absent), checked. Throws like
// load_config, naming `path` ("config PATH: claims[1].policy: unknown policy ...").
std::vector<Claim> parse_claims(const nlohmann::json& document, const std::string& path);

// Throws std::runtime_error "config PATH: <key path>: <problem>" (one line).
Config load_config(const std::string& path);
Config parse_config(const std::string& text, const std::string& path);

// Every case of the config on `topo`: the cross product of each entry's lists, pinned classes
// resolved to `pairs_per_class` CPU pairs, unavailable classes as skipped cases with the reason.
// `known_mechanisms` validates mechanism ids. Throws like load_config for what only the topology
// can reveal (a CPU that is not online or not allowed, a duplicate case name).
std::vector<CaseSpec> expand_cases(const Config& config, const Topology& topo,
                                   const std::vector<std::string>& known_mechanisms,
                                   int pairs_per_class = 1);

}  // namespace wb
