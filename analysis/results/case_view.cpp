#include "analysis/results/case_view.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/schema/blocked.h"
#include "common/schema/registry.h"
#include "common/schema/result_set_doc.h"  // json_int_in
#include "common/util/cpulist.h"
#include "common/util/input.h"
#include "common/util/text.h"

namespace wb {

namespace {

using nlohmann::json;

std::optional<double> number(const json& obj, const std::string& key) {
  if (obj.is_object() && obj.contains(key) && obj[key].is_number()) return obj[key].get<double>();
  return std::nullopt;
}

Stats stats_of(const json& obj) {
  Stats s;
  if (!obj.is_object()) return s;
  for (const auto& [k, v] : obj.items())
    if (v.is_number()) s.values[k] = v.get<double>();
  return s;
}

// The recorded params (to_json(Params): per-side knobs as {"waker", "wakee"} with "inherit" or
// null for a side left unset) back into Params, through set_param's checks. Keys Params does not
// know (knobs of another version) are left to params_json.
Params params_of(const json& pj) {
  Params p;
  if (!pj.is_object()) return p;
  for (const auto& [key, value] : pj.items()) {
    if (key == "sched" || key == "nice") {
      json v = value;
      if (v.is_object()) {
        for (const char* side : {"waker", "wakee"})
          if (v.contains(side) && (v[side].is_null() || v[side] == "inherit")) v.erase(side);
        if (v.empty()) continue;
      } else if (v.is_null() || v == "inherit") {
        continue;
      }
      set_param(p, key, v);
    } else if (key == "payload" || key == "work_ns" || key == "work_lines" || key == "background" ||
               key == "duty" || key == "period_ms" || key == "pairs" || key == "w" || key == "s" ||
               key == "start") {
      set_param(p, key, value);
    }
  }
  return p;
}

// A round-trip time is a positive number: 0 or less would make every ratio to it meaningless.
void check_positive(const std::string& what, const std::optional<double>& v) {
  if (v && !(*v > 0 && std::isfinite(*v)))
    throw std::invalid_argument(what + " is " + (std::ostringstream() << *v).str() +
                                ", not a positive number");
}

// A case's wake_flags (absent in sets that predate it); another word is refused.
std::optional<WakeFlags> wake_flags_of(const json& j) {
  if (!j.contains("wake_flags") || !j["wake_flags"].is_string()) return std::nullopt;
  const auto flags = parse_wake_flags(j["wake_flags"].get<std::string>());
  if (!flags)
    throw std::invalid_argument("wake_flags " + j["wake_flags"].dump() +
                                " is not sync, none or current-cpu");
  return flags;
}

// Every name of one case, and its free text (common/util/input.h: is_safe_name).
void check_names(const json& j) {
  check_name("mechanism", j["mechanism"]);
  check_name("placement", j["placement"]);
  if (j.contains("reason") && j["reason"].is_string())
    check_text("reason", j["reason"].get<std::string>());
  const json params = j.value("params", json()).flatten();
  for (const auto& [path, v] : params.items())
    if (v.is_string()) check_name("params" + path, v.get<std::string>());
  for (const char* ptr :
       {"/observed/histogram", "/counters/waker", "/counters/wakee", "/counters/unavailable"})
    if (const json::json_pointer p(ptr); j.contains(p) && j.at(p).is_object())
      for (const auto& [key, v] : j.at(p).items()) check_name(std::string(ptr + 1) + " key", key);
}

// ---- schema 3: what each repetition says of its wakeups (docs/result-set.md#blocked, #classes) --

// A finite number >= 0 (> 0 when `positive`) at `what`, or one line saying what it is instead.
double count_at(const json& v, const std::string& what, bool positive = false) {
  if (v.is_number()) {
    const double x = v.get<double>();
    if (std::isfinite(x) && (positive ? x > 0 : x >= 0)) return x;
  }
  throw std::invalid_argument(what + " is " + v.dump(-1, ' ', true) + ", not a " +
                              (positive ? "positive" : "non-negative") + " number");
}

// `blocked` or `preempted` (`what`) of repetition `r`: null, or {"waker", "wakee"} each null or a
// non-negative number.
void read_sides(std::optional<double> (&out)[2], const json& r, const std::string& what,
                const std::string& at) {
  if (!r.contains(what)) throw std::invalid_argument(at + ": missing \"" + what + "\"");
  const json& b = r[what];
  if (b.is_null()) return;
  if (!b.is_object()) throw std::invalid_argument(at + "." + what + " is not an object or null");
  for (int side = 0; side < 2; ++side) {
    const char* key = side == 0 ? "waker" : "wakee";
    if (!b.contains(key))
      throw std::invalid_argument(at + "." + what + ": missing \"" + key + "\"");
    if (!b[key].is_null()) out[side] = count_at(b[key], at + "." + what + "." + key);
  }
}

// One entry of `classes`: {"round_trips", "mean_ns", "median_ns", "hist"}, the histogram holding
// exactly its round trips.
ClassSample class_sample(const std::string& cls, const json& v, const std::string& at) {
  check_name(at + " key", cls);
  if (!v.is_object()) throw std::invalid_argument(at + "." + cls + " is not an object");
  ClassSample c;
  c.cls = cls;
  for (const char* key : {"round_trips", "mean_ns", "median_ns", "hist"})
    if (!v.contains(key)) throw std::invalid_argument(at + "." + cls + ": missing \"" + key + "\"");
  c.round_trips = count_at(v["round_trips"], at + "." + cls + ".round_trips", true);
  c.mean_ns = count_at(v["mean_ns"], at + "." + cls + ".mean_ns", true);
  c.median_ns = count_at(v["median_ns"], at + "." + cls + ".median_ns", true);
  try {
    c.hist = Histogram::from_json(v["hist"]);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(at + "." + cls + ".hist: " + e.what());
  }
  if (static_cast<double>(c.hist.count()) != c.round_trips)
    throw std::invalid_argument(at + "." + cls + ".hist holds " + std::to_string(c.hist.count()) +
                                " round trips, not its round_trips " + v["round_trips"].dump());
  return c;
}

RepetitionView repetition_view(const json& r, const std::string& at) {
  RepetitionView v;
  if (!r.contains("marked")) throw std::invalid_argument(at + ": missing \"marked\"");
  if (!r["marked"].is_boolean()) throw std::invalid_argument(at + ".marked is not true or false");
  v.marked = r["marked"].get<bool>();
  read_sides(v.blocked, r, "blocked", at);
  read_sides(v.preempted, r, "preempted", at);
  if (r.contains("classes")) {
    if (!r["classes"].is_object()) throw std::invalid_argument(at + ".classes is not an object");
    for (const auto& [cls, c] : r["classes"].items())
      v.classes.push_back(class_sample(cls, c, at + ".classes"));
    // A parsed object's keys come sorted by name: back into the order of kAllClasses.
    std::stable_sort(v.classes.begin(), v.classes.end(), [](const auto& a, const auto& b) {
      return class_rank(a.cls) < class_rank(b.cls);
    });
  }
  return v;
}

// Every repetition's view when the set records them (schema 3: all of them), else none.
std::vector<RepetitionView> rep_info_of(const json& reps) {
  const bool recorded = std::any_of(reps.begin(), reps.end(), [](const json& r) {
    return r.is_object() && r.contains("marked");
  });
  std::vector<RepetitionView> out;
  for (std::size_t i = 0; recorded && i < reps.size(); ++i) {
    const std::string at = "repetitions[" + std::to_string(i) + "]";
    if (!reps[i].is_object()) throw std::invalid_argument(at + " is not an object");
    out.push_back(repetition_view(reps[i], at));
  }
  return out;
}

// `marked_repetitions`, when recorded, counts the marked repetitions.
void check_marked_count(const json& j, const CaseView& c) {
  if (!j.contains("marked_repetitions")) return;
  const json& n = j["marked_repetitions"];
  if (!n.is_number_integer() || n.get<int64_t>() < 0)
    throw std::invalid_argument("marked_repetitions is " + n.dump(-1, ' ', true) + ", not a count");
  if (static_cast<std::size_t>(n.get<int64_t>()) != c.marked())
    throw std::invalid_argument("marked_repetitions is " + n.dump() + " but " +
                                std::to_string(c.marked()) + " of its repetitions are marked");
}

std::string pair_of(const std::string& name) {
  const auto slash = name.rfind('/');
  if (slash == std::string::npos) return "";
  const std::string last = name.substr(slash + 1);
  if (last.size() > 4 && last.compare(0, 4, "pair") == 0 &&
      last.find_first_not_of("0123456789", 4) == std::string::npos)
    return "/" + last;
  return "";
}

// A CPU id as an int can hold it (a larger number must not wrap to a small id).
bool cpu_id(const json& v) {
  return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < (1 << 22);
}

// `may_be_empty`: a case that never ran (a kernel case on a class this machine lacks) has none.
std::vector<int> cpu_ids(const json& v, bool may_be_empty = false) {
  bool valid = v.is_array() && (may_be_empty || !v.empty());
  for (const auto& c : v) valid = valid && cpu_id(c);
  if (!valid)
    throw std::invalid_argument(std::string("cpuset is not a ") +
                                (may_be_empty ? "" : "non-empty ") + "list of CPU ids");
  return v.get<std::vector<int>>();
}

// "cpu:<waker>,<wakee>", a matrix cell.
bool is_cell(const std::string& pl) {
  static const std::regex cell("cpu:[0-9]{1,6},[0-9]{1,6}");
  return std::regex_match(pl, cell);
}

void set_placement(CaseView& c, const json& j) {
  const std::string& pl = c.placement;
  if (auto cls = parse_class(pl)) {
    c.kind = PlacementKind::kPinned;
    c.cls = cls;
  } else if (is_cell(pl)) {
    c.kind = PlacementKind::kMatrix;
  } else if (pl == "kernel" || pl.rfind("kernel:", 0) == 0) {
    c.kind = PlacementKind::kKernel;
    if (pl != "kernel") {
      const std::string arg = pl.substr(7);
      if (auto k = parse_class(arg))
        c.cls = k;
      else
        c.cpuset = parse_cpu_list(arg);  // throws std::invalid_argument naming the list
    }
    if (j.contains("cpuset")) {
      c.cpuset = cpu_ids(j["cpuset"], j["status"] != "ok");
    } else if (j.contains("/cpus/allowed"_json_pointer)) {  // older sets
      const json& al = j["cpus"]["allowed"];
      c.cpuset = al.is_string() ? parse_cpu_list(al.get<std::string>()) : cpu_ids(al);
    }
    std::sort(c.cpuset.begin(), c.cpuset.end());
    c.cpuset.erase(std::unique(c.cpuset.begin(), c.cpuset.end()), c.cpuset.end());
  } else {
    throw std::invalid_argument("unknown placement " + json_text(pl));
  }
}

// --ab: each repetition's {"round", "read_back"}, all of them or none.
std::vector<int> ab_rounds(const json& reps) {
  const auto with = std::count_if(reps.begin(), reps.end(),
                                  [](const json& r) { return r.is_object() && r.contains("ab"); });
  if (with == 0) return {};
  if (static_cast<std::size_t>(with) != reps.size())
    throw std::invalid_argument("repetitions: " + std::to_string(with) + " of " +
                                std::to_string(reps.size()) + " have an \"ab\" object");
  std::vector<int> rounds;
  for (std::size_t i = 0; i < reps.size(); ++i) {
    const std::string at = "repetitions[" + std::to_string(i) + "].ab";
    const json& ab = reps[i]["ab"];
    if (!ab.is_object()) throw std::invalid_argument(at + " is not an object");
    rounds.push_back(
        static_cast<int>(json_int_in(ab.value("round", json()), at + ".round", 0, 1 << 30)));
    const json& rb = ab.value("read_back", json());
    if (!rb.is_object()) throw std::invalid_argument(at + ".read_back is not an object");
    for (const auto& [key, v] : rb.items()) {
      check_name(at + ".read_back key", key);
      if (!v.is_string())
        throw std::invalid_argument(at + ".read_back." + key + " is not a string");
      check_name(at + ".read_back." + key, v.get<std::string>());
    }
  }
  return rounds;
}

// The case's "repetitions": each one's stats, its --ab round, its histogram and what it recorded.
void read_repetitions(const json& reps, CaseView& c) {
  if (!reps.is_array()) throw std::invalid_argument("\"repetitions\" is not an array");
  for (std::size_t i = 0; i < reps.size(); ++i) {
    if (reps[i].is_object() && reps[i].contains("median") && !reps[i]["median"].is_number())
      throw std::invalid_argument("repetitions[" + std::to_string(i) + "].median is " +
                                  reps[i]["median"].dump() + ", not a number");
    c.repetitions.push_back(stats_of(reps[i]));
  }
  for (std::size_t i = 0; c.ok() && i < c.repetitions.size(); ++i)
    check_positive("repetitions[" + std::to_string(i) + "].median", c.repetitions[i].get("median"));
  c.ab_round = ab_rounds(reps);
  // Schema 2: each repetition's histogram of its round trips; all of them or none.
  for (std::size_t i = 0; i < reps.size(); ++i) {
    const json& r = reps[i];
    if (!r.is_object() || !r.contains("rtt_hist")) {
      c.rtt_hist.clear();
      break;
    }
    try {
      c.rtt_hist.push_back(Histogram::from_json(r["rtt_hist"]));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("repetitions[" + std::to_string(i) + "]." + e.what());
    }
  }
  c.rep_info = rep_info_of(reps);
}

// The case's "counters" object: each side's events and why the unavailable ones are.
CounterView counters_of(const json& k) {
  CounterView out;
  out.recorded = true;
  for (int s = 0; s < 2; ++s) {
    const json& side = k.value(s == 0 ? "waker" : "wakee", json());
    if (!side.is_object()) continue;
    for (const auto& [event, v] : side.items())
      out.side[s][event] = v.is_number() ? std::optional(v.get<double>()) : std::nullopt;
  }
  if (const json& u = k.value("unavailable", json()); u.is_object())
    for (const auto& [event, why] : u.items())
      out.unavailable[event] = why.is_string() ? why.get<std::string>() : why.dump();
  return out;
}

// The case's "observed" object (kernel placement): the class histogram and the migrations.
ObservedView observed_of(const json& o) {
  ObservedView out;
  out.recorded = true;
  for (const auto& [cls, n] : o["histogram"].items())
    out.histogram.emplace_back(cls, n.is_number() ? n.get<double>() : 0.0);
  if (o.contains("migrations")) {
    out.migrations_json = o["migrations"];
    out.migrations[0] = number(o["migrations"], "waker");
    out.migrations[1] = number(o["migrations"], "wakee");
  }
  return out;
}

// What the case is: its mechanism, mode, placement and CPUs, parameters, status and wake flags,
// each checked.
void read_identity(const json& j, CaseView& c) {
  check_names(j);
  c.mechanism = j["mechanism"];
  if (!registry().find_mechanism(c.mechanism))
    throw std::invalid_argument("unknown mechanism " + json_text(c.mechanism) +
                                " (known: " + join(registry().mechanism_ids(), ", ") + ")");
  const auto mode = parse_mode(j["mode"].get<std::string>());
  if (!mode) throw std::invalid_argument("unknown mode " + j["mode"].dump());
  c.mode = *mode;
  c.placement = j["placement"];
  set_placement(c, j);
  if (j.contains("cpus") && j["cpus"].is_object()) {
    const json& cpus = j["cpus"];
    if (cpu_id(cpus.value("waker", json())) && cpu_id(cpus.value("wakee", json())))
      c.cpus = CpuPair{cpus["waker"].get<int>(), cpus["wakee"].get<int>()};
  }
  if (j.contains("params") && !j["params"].is_object() && !j["params"].is_null())
    throw std::invalid_argument("\"params\" is not an object");
  c.params_json = j.contains("params") && j["params"].is_object() ? j["params"] : json::object();
  c.params = params_of(c.params_json);
  c.suffix = name_suffix(c.params);
  c.pair = pair_of(c.name);
  const auto status = parse_status(j["status"].get<std::string>());
  if (!status) throw std::invalid_argument("unknown status " + j["status"].dump());
  c.status = *status;
  if (j.contains("reason") && j["reason"].is_string()) c.reason = j["reason"];
  c.wake_flags = wake_flags_of(j);
}

// The schedstat window's off reason and per-domain wake counters (SchedstatView).
SchedstatView schedstat_of(const json& s) {
  SchedstatView v;
  if (!s.is_object()) {
    v.off = "no schedstat recorded";
    return v;
  }
  if (s.contains("unavailable")) {
    v.off = s["unavailable"].is_string() ? s["unavailable"].get<std::string>() : "unavailable";
    return v;
  }
  if (s.value("schedstats_enabled", json(true)) == false)
    v.off =
        "schedstats off (kernel.sched_schedstats=0; turn on: sysctl -w "
        "kernel.sched_schedstats=1)";
  if (s.contains("cpus") && s["cpus"].is_array()) {  // its repetitions' windows were mis-added
    v.off =
        "schedstat.cpus is a list: the windows of the case's repetitions were added by a "
        "wakebench before 2026-12-07, which mangled them; not read";
    return v;
  }
  if (!s.contains("cpus") || !s["cpus"].is_object()) return v;
  for (const auto& [cpu, c] : s["cpus"].items()) {
    if (!c.is_object() || !c.contains("domains") || !c["domains"].is_array()) continue;
    for (const auto& d : c["domains"]) {
      if (!d.is_object()) continue;
      const json n = d.value("domain", json(-1));
      std::string label = "domain" + std::to_string(n.is_number_integer() ? n.get<int>() : -1);
      if (d.contains("name") && d["name"].is_string())
        label += " (" + d["name"].get<std::string>() + ")";
      for (const char* k : {"ttwu_wake_remote", "ttwu_move_affine", "ttwu_move_balance"})
        if (d.contains(k) && d[k].is_number()) v.domain_counts[{label, k}] += d[k].get<double>();
    }
  }
  return v;
}

// What it measured: the statistics, repetitions, counters, where the kernel placed it, its trace
// and the background's CPUs.
void read_measured(const json& j, CaseView& c) {
  c.rtt = stats_of(j.value("rtt_ns", json()));
  c.wakeup = stats_of(j.value("wakeup_ns", json()));
  if (c.ok() && !c.rtt.get("median"))
    throw std::invalid_argument("status ok but no numeric rtt_ns.median");
  if (c.ok()) check_positive("rtt_ns.median", c.rtt.get("median"));
  if (j.contains("repetitions")) read_repetitions(j["repetitions"], c);
  check_marked_count(j, c);
  c.tps = number(j, "tps");
  c.schedstat = schedstat_of(j.value("schedstat", json()));
  if (const json& n = j.value("round_trips", json()); n.is_number_integer()) c.round_trips = n;
  if (const json& n = j.value("warmup", json()); n.is_number_integer()) c.warmup = n;
  if (const json& k = j.value("counters", json()); k.is_object()) c.counters = counters_of(k);
  if (const json& o = j.value("observed", json());
      o.is_object() && o.contains("histogram") && o["histogram"].is_object())
    c.observed = observed_of(o);
  c.trace = parse_trace(j.value("trace", json()));
  // The busy tasks' CPUs as the driver resolved them (`background`: null for none).
  if (const json& b = j.value("background", json()); b.is_object() && b.contains("cpus")) {
    const json& cpus = b["cpus"];
    if (!cpus.is_array() ||
        !std::all_of(cpus.begin(), cpus.end(), [](const json& x) { return x.is_number_integer(); }))
      throw std::invalid_argument("background.cpus is not a list of CPU ids");
    c.background = cpus.get<std::vector<int>>();
  }
}

CaseView parse_case(std::size_t index, const json& j) {
  const std::string where = "cases[" + std::to_string(index) + "]";
  if (!j.is_object()) throw std::invalid_argument(where + " is not an object");
  for (const char* key : {"name", "mechanism", "mode", "placement", "status"}) {
    if (!j.contains(key)) throw std::invalid_argument(where + ": missing \"" + key + "\"");
    if (!j[key].is_string())
      throw std::invalid_argument(where + ": \"" + key + "\" is not a string");
  }
  CaseView c;
  c.index = index;
  check_name(where + ": name", j["name"]);
  c.name = j["name"];
  const std::string at = where + " (" + c.name + "): ";
  try {
    read_identity(j, c);
    read_measured(j, c);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(at + e.what());
  } catch (const json::exception& e) {
    throw std::invalid_argument(at + e.what());
  }
  return c;
}

}  // namespace

std::optional<double> Stats::get(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

std::string CaseView::mech_mode() const { return mechanism + "/" + std::string(mode_id(mode)); }

std::string CaseView::row() const {
  const std::string prefix = mech_mode() + "/";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

std::string CaseView::key() const {
  // nlohmann::json objects keep keys sorted, so dump() is canonical.
  return mech_mode() + "/" + placement + pair + " " + params_json.dump();
}

bool CaseView::same_point(const CaseView& o) const {
  return mechanism == o.mechanism && mode == o.mode && same_workload(params, o.params);
}

std::size_t CaseView::marked() const {
  return static_cast<std::size_t>(std::count_if(rep_info.begin(), rep_info.end(),
                                                [](const RepetitionView& r) { return r.marked; }));
}

std::vector<CaseView> parse_cases(const json& cases) {
  if (!cases.is_array()) throw std::invalid_argument("missing \"cases\" array");
  std::vector<CaseView> out;
  out.reserve(cases.size());
  std::map<std::string, std::size_t> first;  // each case's key, once: compare pairs by it
  for (std::size_t i = 0; i < cases.size(); ++i) {
    out.push_back(parse_case(i, cases[i]));
    if (const auto [it, fresh] = first.emplace(out.back().key(), i); !fresh)
      throw std::invalid_argument("cases[" + std::to_string(i) + "] (" + out.back().name +
                                  ") repeats cases[" + std::to_string(it->second) +
                                  "]: the same mechanism, mode, placement and params");
  }
  return out;
}

KernelSetup kernel_setup(const CaseView& c, const Topology& topo) {
  KernelSetup k;
  k.allowed = c.cpuset;
  if (k.allowed.empty() && c.cls) {
    for (const auto& cp : choose_pairs(topo)) {
      if (cp.cls != *c.cls || !cp.available || cp.pairs.empty()) continue;
      const auto [a, b] = cp.pairs.front();
      k.allowed = a == b ? std::vector<int>{a} : std::vector<int>{std::min(a, b), std::max(a, b)};
      k.start = cp.pairs.front();
    }
  }
  if (c.cpus) k.start = c.cpus;
  for (int cpu : k.allowed)
    if (!topo.find(cpu))
      throw std::invalid_argument("kernel case " + c.name + ": CPU " + std::to_string(cpu) +
                                  " is not in its embedded topology");
  return k;
}

int class_rank(std::string_view cls) {
  for (std::size_t i = 0; i < kAllClasses.size(); ++i)
    if (class_id(kAllClasses[i]) == cls) return static_cast<int>(i);
  return 50;
}

int placement_rank(const CaseView& c) {
  switch (c.kind) {
    case PlacementKind::kPinned:
      return class_rank(class_id(*c.cls));
    case PlacementKind::kKernel:
      return 100;
    case PlacementKind::kMatrix:
      return 200;
  }
  return 300;
}

std::vector<std::string> varying_params(const std::vector<const json*>& params) {
  std::map<std::string, std::set<std::string>> values;
  for (const json* p : params)
    if (p->is_object())
      for (const auto& [k, v] : p->items()) values[k].insert(v.dump());
  std::vector<std::string> out;
  for (const auto& [k, vs] : values) {
    bool everywhere = true;
    for (const json* p : params) everywhere = everywhere && p->contains(k);
    if (vs.size() > 1 || !everywhere) out.push_back(k);
  }
  return out;
}

std::string marked_heading() {
  return "marked repetitions (a side blocked or was preempted in under " +
         fmt("%.0f", 100 * kMinBlockedShare) + "% of its round trips):";
}

namespace {

// "0.02 waker, 0.01-0.35 wakee": the marked repetitions' values of `field` per side, low-high
// when they differ at two decimals ("n/a" for a side without any).
std::string marked_sides(const CaseView& c, std::optional<double> (RepetitionView::*field)[2]) {
  std::string out;
  for (int side = 0; side < 2; ++side) {
    std::optional<double> lo, hi;
    for (const RepetitionView& r : c.rep_info)
      if (const auto& x = (r.*field)[side]; r.marked && x) {
        lo = std::min(lo.value_or(*x), *x);
        hi = std::max(hi.value_or(*x), *x);
      }
    std::string v = lo ? fmt("%.2f", *lo) : "n/a";
    if (lo && fmt("%.2f", *hi) != v) v += "-" + fmt("%.2f", *hi);
    out += (side == 0 ? "" : ", ") + v + (side == 0 ? " waker" : " wakee");
  }
  return out;
}

}  // namespace

std::string marked_text(const CaseView& c) {
  const std::size_t n = c.marked();
  if (n == 0) return "";
  bool preempted = false;
  for (const RepetitionView& r : c.rep_info)
    for (const auto& x : r.preempted) preempted |= r.marked && x && *x >= 0.005;
  return c.name + ": " + std::to_string(n) + " of " + std::to_string(c.rep_info.size()) +
         " repetitions did not sleep (blocked " + marked_sides(c, &RepetitionView::blocked) +
         (preempted ? "; preempted " + marked_sides(c, &RepetitionView::preempted) : "") + ")";
}

std::string params_text(const Params& p) {
  std::string s = name_suffix(p);
  if (s.empty()) return "the default knobs";
  s.erase(0, 1);
  std::replace(s.begin(), s.end(), '/', ' ');
  return s;
}

}  // namespace wb
