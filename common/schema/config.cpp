#include "common/schema/config.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "common/schema/registry.h"
#include "common/util/cpulist.h"
#include "common/util/input.h"
#include "common/util/text.h"

namespace wb {

namespace {

[[noreturn]] void fail_config(const std::string& path, const std::string& where,
                              const std::string& what) {
  throw std::runtime_error("config " + (path.empty() ? std::string("<text>") : path) + ": " +
                           (where.empty() ? "" : where + ": ") + what);
}

// check_name or check_text (common/util/input.h) of a string of the config, as its one-line error.
void safe(const std::string& path, const std::string& where, const std::string& value,
          void (*check)(const std::string&, const std::string&)) {
  try {
    check("value", value);
  } catch (const std::invalid_argument& e) {
    fail_config(path, where, e.what());
  }
}

std::vector<std::string> string_list(const std::string& path, const std::string& where,
                                     const nlohmann::json& v) {
  if (!v.is_array() || v.empty()) fail_config(path, where, "expected a non-empty array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      fail_config(path, where + "[" + std::to_string(i) + "]",
                  "expected a string, got " + v[i].dump());
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

void read_run_keys(const std::string& path, const std::string& where, const nlohmann::json& obj,
                   RunDefaults& run, const std::set<std::string>& other_keys) {
  for (const auto& [key, v] : obj.items()) {
    const std::string at = where.empty() ? key : where + "." + key;
    auto positive_int = [&](int64_t max) {
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max)
        fail_config(path, at,
                    "expected an integer in [1, " + std::to_string(max) + "], got " + v.dump());
      return v.get<int64_t>();
    };
    if (key == "round_trips") {
      run.round_trips = positive_int(100'000'000);
    } else if (key == "warmup") {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 100'000'000)
        fail_config(path, at, "expected an integer in [0, 100000000], got " + v.dump());
      run.warmup = v.get<int64_t>();
    } else if (key == "repetitions") {
      run.repetitions = static_cast<int>(positive_int(1000));
    } else if (key == "timeout_s") {
      if (!v.is_number() || v.get<double>() <= 0 || v.get<double>() > 1e6)
        fail_config(path, at, "expected a number of seconds in (0, 1000000], got " + v.dump());
      run.timeout_s = v.get<double>();
    } else if (!other_keys.count(key)) {
      fail_config(path, at, "unknown key");
    }
  }
}

// One claim, checked.
Claim parse_claim(const std::string& path, const std::string& at, const nlohmann::json& claim) {
  if (!claim.is_object()) fail_config(path, at, "expected an object");
  Claim c;
  for (const auto& [key, v] : claim.items()) {
    if (key == "seed" || key == "text") {
      if (!v.is_string()) fail_config(path, at + "." + key, "expected a string");
      safe(path, at + "." + key, v.get<std::string>(), key == "seed" ? check_name : check_text);
      (key == "seed" ? c.seed : c.text) = v.get<std::string>();
    } else if (key == "policy") {
      // The patch the claim is about: `run` prints its prediction beside the claim.
      const std::vector<std::string> ids = registry().policy_ids();
      if (!v.is_string() || std::find(ids.begin(), ids.end(), v.get<std::string>()) == ids.end())
        fail_config(
            path, at + ".policy",
            (v.is_string() ? "unknown policy " + v.dump() : std::string("expected a string")) +
                " (known: " + join(ids, ", ") + ")");
      c.policy = v.get<std::string>();
    } else if (key == "cases") {
      string_list(path, at + ".cases", v);
      for (size_t k = 0; k < v.size(); ++k)
        safe(path, at + ".cases[" + std::to_string(k) + "]", v[k].get<std::string>(), check_name);
      c.cases = v.get<std::vector<std::string>>();
    } else if (key == "metric") {
      if (!v.is_string() ||
          (v != "median" && v != "mean" && v != "p99" && v != "tps" && v != "placement"))
        fail_config(path, at + ".metric", "expected one of median, mean, p99, tps, placement");
      c.metric = v.get<std::string>();
    } else if (key == "needs_hardware") {
      if (!v.is_boolean()) fail_config(path, at + ".needs_hardware", "expected true or false");
      c.needs_hardware = v.get<bool>();
    } else {
      fail_config(path, at + "." + key, "unknown key");
    }
  }
  for (const char* key : {"seed", "text", "cases"})
    if (!claim.contains(key)) fail_config(path, at + "." + key, "missing");
  return c;
}

// The top level's own keys: schema_version, name, description, search, defaults, claims.
void read_header(const std::string& path, const nlohmann::json& j, Config& c) {
  if (!j.is_object()) fail_config(path, "", "expected a JSON object at the top level");
  for (const auto& [key, v] : j.items())
    if (key != "schema_version" && key != "name" && key != "defaults" && key != "cases" &&
        key != "description" && key != "claims" && key != "search")
      fail_config(path, key, "unknown key");
  if (!j.contains("schema_version")) fail_config(path, "schema_version", "missing");
  if (!j["schema_version"].is_number_integer() ||
      j["schema_version"].get<int64_t>() != kConfigSchemaVersion)  // 4294967297 is not 1
    fail_config(path, "schema_version",
                "unsupported value " + j["schema_version"].dump() + " (this wakebench reads " +
                    std::to_string(kConfigSchemaVersion) + ")");
  if (j.contains("name")) {
    if (!j["name"].is_string()) fail_config(path, "name", "expected a string");
    c.name = j["name"].get<std::string>();
    safe(path, "name", c.name, check_name);
  }
  if (j.contains("description") && !j["description"].is_string())
    fail_config(path, "description", "expected a string");
  if (j.contains("description"))
    safe(path, "description", j["description"].get<std::string>(), check_text);
  // `wakebench search`'s record of how the cases were found (docs/policy-model.md#search): read
  // by the lab, embedded in the result set with the rest of the document.
  if (j.contains("search") && !j["search"].is_object())
    fail_config(path, "search", "expected an object");
  if (j.contains("defaults")) {
    if (!j["defaults"].is_object()) fail_config(path, "defaults", "expected an object");
    read_run_keys(path, "defaults", j["defaults"], c.defaults, {});
  }
  c.claims = parse_claims(j, path);
}

// A duty cycle belongs to the background: every background value of an entry with duty or
// period_ms must be one (check_duty says so for a case).
void check_duty_cycles(const std::string& path, const ConfigEntry& entry) {
  const auto values_of = [&](const std::string& key) -> const std::vector<nlohmann::json>* {
    for (const auto& [k, v] : entry.params)
      if (k == key) return &v;
    return nullptr;
  };
  if (!values_of("duty") && !values_of("period_ms")) return;
  const std::vector<nlohmann::json> none = {"none"};
  const std::vector<nlohmann::json>* bg = values_of("background");
  for (const nlohmann::json& v : bg ? *bg : none) {
    Params p;
    p.background = v.get<std::string>();
    p.duty = values_of("duty") ? std::optional<int>(1) : std::nullopt;
    p.period_ms = values_of("period_ms") ? std::optional<int>(1) : std::nullopt;
    try {
      check_duty(p);
    } catch (const std::invalid_argument& ex) {
      fail_config(path, entry.where, ex.what());
    }
  }
}

// One entry's params: each key a parameter set_param knows, each value one it accepts.
void read_params(const std::string& path, const nlohmann::json& params, ConfigEntry& entry) {
  if (!params.is_object()) fail_config(path, entry.where + ".params", "expected an object");
  for (const auto& [key, values] : params.items()) {
    const std::string at = entry.where + ".params." + key;
    if (!values.is_array() || values.empty())
      fail_config(path, at, "expected a non-empty array of values");
    Params probe;
    for (const auto& v : values) {
      try {
        set_param(probe, key, v);
      } catch (const std::invalid_argument& ex) {
        fail_config(path, entry.where, ex.what());
      }
    }
    entry.params.emplace_back(key, std::vector<nlohmann::json>(values.begin(), values.end()));
  }
  check_duty_cycles(path, entry);
}

ConfigEntry read_entry(const std::string& path, size_t i, const nlohmann::json& e,
                       const RunDefaults& defaults) {
  ConfigEntry entry;
  entry.where = "cases[" + std::to_string(i) + "]";
  if (!e.is_object()) fail_config(path, entry.where, "expected an object");
  entry.run = defaults;
  read_run_keys(path, entry.where, e, entry.run, {"mechanisms", "modes", "placements", "params"});
  for (const char* key : {"mechanisms", "modes", "placements"})
    if (!e.contains(key)) fail_config(path, entry.where + "." + key, "missing");
  entry.mechanisms = string_list(path, entry.where + ".mechanisms", e["mechanisms"]);
  entry.modes = string_list(path, entry.where + ".modes", e["modes"]);
  for (size_t m = 0; m < entry.modes.size(); ++m)
    if (!parse_mode(entry.modes[m]))
      fail_config(path, entry.where + ".modes[" + std::to_string(m) + "]",
                  "unknown mode \"" + entry.modes[m] + "\" (known: threads, processes)");
  entry.placements = string_list(path, entry.where + ".placements", e["placements"]);
  if (e.contains("params")) read_params(path, e["params"], entry);
  return entry;
}

}  // namespace

std::vector<Claim> parse_claims(const nlohmann::json& document, const std::string& path) {
  std::vector<Claim> out;
  if (!document.is_object() || !document.contains("claims")) return out;
  const auto& claims = document["claims"];
  if (!claims.is_array()) fail_config(path, "claims", "expected an array of objects");
  for (size_t i = 0; i < claims.size(); ++i)
    out.push_back(parse_claim(path, "claims[" + std::to_string(i) + "]", claims[i]));
  return out;
}

Config parse_config(const std::string& text, const std::string& path) {
  Config c;
  c.path = path;
  c.text = text;
  try {
    c.json = parse_input_json(text);
  } catch (const std::invalid_argument& e) {
    fail_config(path, "", e.what());
  }
  const auto& j = c.json;
  read_header(path, j, c);
  if (!j.contains("cases")) fail_config(path, "cases", "missing");
  if (!j["cases"].is_array() || j["cases"].empty())
    fail_config(path, "cases", "expected a non-empty array of objects");
  for (size_t i = 0; i < j["cases"].size(); ++i)
    c.entries.push_back(read_entry(path, i, j["cases"][i], c.defaults));
  return c;
}

Config load_config(const std::string& path) {
  return parse_config(read_input_file("config", path), path);
}

namespace {

// Every combination of the entry's knob values.
std::vector<Params> param_product(const ConfigEntry& e) {
  std::vector<Params> out{Params{}};
  for (const auto& [key, values] : e.params) {
    std::vector<Params> next;
    for (const Params& base : out)
      for (const auto& v : values) {
        Params p = base;
        set_param(p, key, v);
        next.push_back(p);
      }
    out = std::move(next);
  }
  return out;
}

struct Placement {
  std::string id;    // the case's `placement` field: a class id, "kernel", "kernel:..."
  std::string name;  // in the case name: no CPU ids
  PlacementKind kind = PlacementKind::kPinned;
  std::vector<CpuPair> pairs;
  std::vector<int> cpuset;
  std::string skip_reason;
  std::string pair_suffix;  // "/pair1" when --pairs-per-class > 1
};

// The topology's pairs of class `cls` (choose_pairs lists every class).
const ClassPairs& class_pairs(const std::string& path, const std::string& where,
                              const std::vector<ClassPairs>& classes, PlacementClass cls) {
  for (const auto& cp : classes)
    if (cp.cls == cls) return cp;
  fail_config(path, where, "internal: class missing from the topology's pairs");
}

// The CPU list `list` of a placement, each CPU usable here; `expected` names the placement's
// forms for a list that does not parse.
std::vector<int> usable_cpu_list(const std::string& path, const std::string& where,
                                 const std::string& list, const Topology& topo,
                                 const std::string& expected) {
  std::vector<int> set;
  try {
    set = parse_cpu_list(list);
  } catch (const std::invalid_argument& e) {
    fail_config(path, where, std::string(e.what()) + " (expected " + expected + ")");
  }
  for (int c : set)
    if (!topo.find(c))
      fail_config(path, where,
                  "CPU " + std::to_string(c) +
                      " is offline or not allowed for this process (usable: " +
                      format_cpu_list(topo.cpus()) + ")");
  return set;
}

// A pinned class: one placement per pair of the class, or the class skipped with its reason.
std::vector<Placement> class_placements(const std::string& text, const ClassPairs& cp,
                                        int pairs_per_class) {
  if (!cp.available)
    return {{.id = text, .name = text, .skip_reason = "unavailable: " + cp.reason}};
  std::vector<Placement> out;
  for (size_t i = 0; i < cp.pairs.size(); ++i)
    out.push_back({.id = text,
                   .name = text,
                   .pairs = {cp.pairs[i]},
                   .pair_suffix = pairs_per_class > 1 ? "/pair" + std::to_string(i) : ""});
  return out;
}

// kernel:<class> (the class's first pair is the cpuset and the start) or kernel:<cpu list> (the
// list is the cpuset, its first two CPUs the start).
Placement kernel_placement(const std::string& path, const std::string& where,
                           const std::string& text, const Topology& topo,
                           const std::vector<ClassPairs>& classes) {
  const std::string arg = text.substr(7);
  if (auto cls = parse_class(arg)) {
    const ClassPairs& cp = class_pairs(path, where, classes, *cls);
    const std::string name = "kernel-" + arg;
    if (!cp.available)
      return {.id = text,
              .name = name,
              .kind = PlacementKind::kKernel,
              .skip_reason = "unavailable: " + cp.reason};
    const CpuPair pr = cp.pairs.front();
    std::vector<int> set = {pr.first, pr.second};
    if (pr.first == pr.second) set.pop_back();
    return {.id = text, .name = name, .kind = PlacementKind::kKernel, .pairs = {pr}, .cpuset = set};
  }
  const std::vector<int> set =
      usable_cpu_list(path, where, arg, topo, "kernel, kernel:<class> or kernel:<cpu list>");
  if (set.empty()) fail_config(path, where, "empty CPU list");
  const int a = set.front(), b = set.size() > 1 ? set[1] : set.front();
  return {.id = text,
          .name = "kernel-" + std::to_string(set.size()) + "cpus",
          .kind = PlacementKind::kKernel,
          .pairs = {{a, b}},
          .cpuset = set};
}

// Every ordered (waker, wakee) pair of the CPUs (all of them, or matrix:<cpu list>), the diagonal
// included: the kernel-wakeup version of a core-to-core latency map. Cells are named by their
// CPUs.
std::vector<Placement> matrix_placements(const std::string& path, const std::string& where,
                                         const std::string& text, const Topology& topo) {
  const std::vector<int> set = text == "matrix" ? topo.cpus()
                                                : usable_cpu_list(path, where, text.substr(7), topo,
                                                                  "matrix or matrix:<cpu list>");
  std::vector<Placement> out;
  for (int a : set)
    for (int b : set) {
      const std::string cell = std::to_string(a) + "-" + std::to_string(b);
      out.push_back({.id = "cpu:" + std::to_string(a) + "," + std::to_string(b),
                     .name = "matrix/" + cell,
                     .kind = PlacementKind::kMatrix,
                     .pairs = {{a, b}}});
    }
  return out;
}

// Resolves one placement string to one or more concrete placements.
std::vector<Placement> resolve_placement(const std::string& path, const std::string& where,
                                         const std::string& text, const Topology& topo,
                                         const std::vector<ClassPairs>& classes,
                                         int pairs_per_class) {
  if (auto cls = parse_class(text))
    return class_placements(text, class_pairs(path, where, classes, *cls), pairs_per_class);
  if (text == "kernel") {
    const std::vector<int> all = topo.cpus();
    const int a = all.front(), b = all.size() > 1 ? all[1] : all.front();
    return {{.id = "kernel",
             .name = "kernel",
             .kind = PlacementKind::kKernel,
             .pairs = {{a, b}},
             .cpuset = all}};
  }
  if (text.rfind("kernel:", 0) == 0) return {kernel_placement(path, where, text, topo, classes)};
  if (text == "matrix" || text.rfind("matrix:", 0) == 0)
    return matrix_placements(path, where, text, topo);
  fail_config(path, where,
              "unknown placement \"" + text +
                  "\" (known: same-cpu, smt-sibling, cluster, llc, cross-llc, cross-numa, kernel, "
                  "kernel:<class>, kernel:<cpu list>, matrix, matrix:<cpu list>)");
}

// The K concurrent pairs of a case with the `pairs` knob, spread: for a pinned class, the class's
// CPU-disjoint pairs (choose_pairs: different nodes, LLCs, cores first), starting with the
// placement's own pair; when the machine has fewer than K disjoint pairs, the list repeats with
// waker and wakee swapped on every other round, so each CPU carries as many wakers as wakees. For
// kernel placement, the start CPUs of pair i are cpuset[2i], cpuset[2i+1], wrapping (swapped on
// every other round).
std::vector<CpuPair> spread_pairs(const Placement& pl, int k, const Topology& topo) {
  if (k <= 1 || pl.pairs.empty()) return pl.pairs;
  if (pl.kind == PlacementKind::kKernel) {
    std::vector<CpuPair> out;
    const size_t n = pl.cpuset.size();
    for (size_t i = 0; i < static_cast<size_t>(k); ++i) {
      CpuPair p{pl.cpuset[(2 * i) % n], pl.cpuset[(2 * i + 1) % n]};
      if ((2 * i / n) % 2 == 1) std::swap(p.first, p.second);
      out.push_back(p);
    }
    return out;
  }
  const auto parsed = parse_class(pl.id);
  if (!parsed) return pl.pairs;  // a matrix cell: its one CPU pair, K times
  const PlacementClass cls = *parsed;
  std::vector<CpuPair> disjoint;
  for (const auto& cp : choose_pairs(topo, k))
    if (cp.cls == cls) disjoint = cp.pairs;
  std::erase(disjoint, pl.pairs.front());
  disjoint.insert(disjoint.begin(), pl.pairs.front());
  std::vector<CpuPair> out;
  for (size_t i = 0; out.size() < static_cast<size_t>(k); ++i) {
    CpuPair p = disjoint[i % disjoint.size()];
    if ((i / disjoint.size()) % 2 == 1) std::swap(p.first, p.second);
    out.push_back(p);
  }
  return out;
}

// The one pair a `start` knob gives a kernel placement: both CPUs in its cpuset, one pair.
std::vector<CpuPair> start_pairs(const std::string& path, const std::string& where,
                                 const Placement& pl, const Params& pr) {
  const std::string at = where + ".params.start";
  if (pl.kind != PlacementKind::kKernel)
    fail_config(path, at,
                "only for kernel placements (kernel, kernel:<class>, kernel:<cpu list>), not \"" +
                    pl.id + "\"");
  if (pr.pairs > 1)
    fail_config(path, at, "names one pair's CPUs; it cannot be given with pairs > 1");
  if (!pl.skip_reason.empty()) return pl.pairs;  // the class is unavailable: skipped anyway
  for (int c : {pr.start->first, pr.start->second})
    if (std::find(pl.cpuset.begin(), pl.cpuset.end(), c) == pl.cpuset.end())
      fail_config(path, at,
                  "CPU " + std::to_string(c) + " is not in " + pl.id + "'s cpuset " +
                      format_cpu_list(pl.cpuset));
  return {*pr.start};
}

}  // namespace

std::vector<CaseSpec> expand_cases(const Config& config, const Topology& topo,
                                   const std::vector<std::string>& known_mechanisms,
                                   int pairs_per_class) {
  const auto classes = choose_pairs(topo, pairs_per_class);
  std::vector<CaseSpec> cases;
  std::map<std::string, std::string> seen;  // name -> where
  for (const auto& e : config.entries) {
    for (size_t m = 0; m < e.mechanisms.size(); ++m)
      if (std::find(known_mechanisms.begin(), known_mechanisms.end(), e.mechanisms[m]) ==
          known_mechanisms.end())
        fail_config(config.path, e.where + ".mechanisms[" + std::to_string(m) + "]",
                    "unknown mechanism \"" + e.mechanisms[m] +
                        "\" (known: " + join(known_mechanisms, ", ") + ")");
    std::vector<std::vector<Placement>> placements;
    for (size_t p = 0; p < e.placements.size(); ++p)
      placements.push_back(resolve_placement(config.path,
                                             e.where + ".placements[" + std::to_string(p) + "]",
                                             e.placements[p], topo, classes, pairs_per_class));
    const auto params = param_product(e);
    for (const auto& mech : e.mechanisms)
      for (const auto& mode : e.modes)
        for (const auto& group : placements)
          for (const auto& pl : group)
            for (const auto& pr : params) {
              CaseSpec s;
              s.mechanism = mech;
              s.mode = *parse_mode(mode);
              s.placement = pl.id;
              s.kind = pl.kind;
              s.cpu_pairs = pr.start ? start_pairs(config.path, e.where, pl, pr)
                                     : spread_pairs(pl, pr.pairs, topo);
              s.cpuset = pl.cpuset;
              s.params = pr;
              s.round_trips = e.run.round_trips;
              s.warmup = e.run.warmup;
              s.repetitions = e.run.repetitions;
              s.timeout_s = e.run.timeout_s;
              s.skip_reason = pl.skip_reason;
              s.name = mech + "/" + mode + "/" + pl.name + name_suffix(pr) + pl.pair_suffix;
              if (auto [it, fresh] = seen.emplace(s.name, e.where); !fresh)
                fail_config(config.path, e.where,
                            "duplicate case " + s.name + " (also from " + it->second + ")");
              cases.push_back(std::move(s));
            }
  }
  return cases;
}

}  // namespace wb
