// Loading result sets (docs/result-set.md) for the analysis commands. The loader reads the typed
// set (common/schema/result_set_doc.h: the schema, the version and every block), parses its cases
// into views (analysis/results/case_view.h) and checks every name and text.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/results/case_view.h"
#include "common/schema/config.h"
#include "common/schema/result_set.h"  // kResultSchema, kResultSchemaVersion
#include "common/schema/result_set_doc.h"
#include "common/system/topology.h"

namespace wb {

// One level of one CPU's recorded sched domains (environment.sched_domains[]); a field the entry
// lacks is empty.
struct RecordedDomain {
  int cpu = 0;
  std::optional<int> domain;        // the level's number
  std::optional<std::string> name;  // "SMT", "MC", "PKG", ...
  std::string flags;                // its flags, each followed by a space
};

// What the analysis reads of a set's environment (and of context and topology where the
// environment lacks it), read once by the loader: no analysis file indexes those blocks by key.
struct EnvironmentView {
  std::string hostname;         // environment.hostname, else context.host_name
  std::string cpu_model;        // environment.cpu_model
  std::string kernel_release;   // environment.kernel_release (or environment.kernel.release)
  std::string kernel_cmdline;   // environment.kernel.cmdline ("" when not recorded)
  std::string topology_source;  // topology.source
  std::string config_hash;      // environment.config_hash: which suite ran
  // environment.fair_placement.why where it says the fair class did not place the run's tasks
  // (a sched_ext scheduler, an RT policy: docs/policy-model.md#not-fair); "" where it did.
  std::string not_fair;
  std::optional<TopologyCounts> counts;  // topology.counts
  int smt_width = 0;                     // topology.smt.width; 0 = not recorded
  bool emulated = false;   // environment.emulated: a lab guest under qemu TCG (emulated timings)
  std::string lab_policy;  // environment.lab_kernel.policy ("gated", "sync-core", ...); "" if none
  // environment.sched_features {NAME: on}; nullopt when absent or {"unavailable": why}.
  std::optional<std::map<std::string, bool>> sched_features;
  // environment.sched_domains: its entries with an integer cpu, in the set's order;
  // `no_sched_domains` set when it is no array of entries: its "unavailable" reason, or "".
  std::vector<RecordedDomain> sched_domains;
  std::optional<std::string> no_sched_domains;
};

// "pus 80, cores 80, llcs 1, numa 1, smt 1" (empty if the set has no topology counts).
std::string format_counts(const EnvironmentView& m);
// "host; CPU model; Linux 6.1.0; pus 2, cores 2, ..." (the parts the set records), or
// "(no machine description in the result set)".
std::string machine_line(const EnvironmentView& m);

// One policy's word on one entry of a set's recorded predictions.
struct RecordedPolicy {
  bool has_classes = false;                             // `classes` recorded
  std::vector<std::pair<std::string, double>> classes;  // its numeric shares, in recorded order
  bool uncertain = false;                               // `uncertain` recorded
  std::string verdict;  // the predictor's word on the kernel's placements; "" when none
  std::optional<double> predicted_rtt_ns;
};

// One entry of a set's recorded `predictions` (open JSON: older sets hold older fields).
struct RecordedPrediction {
  std::string label;  // its case; in sets before per-case entries mechanism/mode[/placement]
  std::vector<std::pair<std::string, RecordedPolicy>> policies;  // in recorded order
  std::optional<double> measured_rtt_ns;                         // `measured.rtt_ns`
};

struct ResultSet {
  std::string path;         // as given, for messages
  ResultSetDoc set;         // the typed set (`set.ab`: a set of an A/B run, docs/result-set.md#ab)
  EnvironmentView machine;  // who ran it, from the set's open blocks
  std::vector<CaseView> views;  // cases[], parsed once (analysis/results/case_view.h)
  // predictions' per-case entries as the set recorded them (the entries that are objects); empty
  // when it records none. `run` fills its own after the reader (ResultsPrediction, typed).
  std::vector<RecordedPrediction> predictions;
  std::vector<Claim> claims;  // its config's claims (config.document.claims), checked
};

// The per-case entries of a recorded predictions block (open JSON): "cases" from schema version
// 4, "mechanisms" before; null when absent or not an array.
const nlohmann::json* prediction_cases(const nlohmann::json& predictions);

// Reads and validates a result set. Throws std::runtime_error with one line naming the file:
// "results FILE: invalid JSON at byte 1234: ...", "results FILE: schema_version 3 is not
// supported (this wakebench reads versions 1 to 2)", "results FILE: cases[3]: missing \"mode\"".
ResultSet load_result_set(const std::string& path);
// The checks both make, on a parsed document: the typed set (read_result_set_doc), every case
// (parse_cases; an emulated set's hardware counters labelled as qemu TCG counts them: cycles
// noted as virtual time, a cache or TLB event reading 0 unavailable), every name and text. Throws
// std::invalid_argument with one line (no file name).
ResultSet check_result_set(const nlohmann::json& doc);
// A set built in memory (`run`'s): its cases' views and who ran it, without a JSON document.
// Throws std::invalid_argument with one line for a case that does not parse, `set` then untouched.
ResultSet typed_result_set(ResultSetDoc&& set, const std::string& path);
// Same checks on a document already in memory; `path` is only used in messages.
ResultSet parse_result_set(const std::string& text, const std::string& path);

// Params as "key=value" joined by ' ', restricted to `keys` when not empty. Strings unquoted.
std::string format_params(const nlohmann::json& params, const std::vector<std::string>& keys = {});

}  // namespace wb
