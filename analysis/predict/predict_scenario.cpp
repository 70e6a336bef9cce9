// `wakebench predict --scenario`: one wakeup under every policy (docs/policy-model.md#scenario).
#include <iomanip>
#include <set>
#include <sstream>
#include <stdexcept>

#include "analysis/model/model_features.h"
#include "analysis/predict/predict.h"
#include "common/util/cpulist.h"
#include "common/util/input.h"

namespace wb {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument("scenario " + where + ": " + what);
}

bool get_bool(const json& j, const char* field, const std::string& where) {
  if (!j.is_boolean()) fail(where, std::string("field \"") + field + "\" must be a boolean");
  return j.get<bool>();
}

int get_int(const json& j, const char* field, const std::string& where) {
  if (!j.is_number_integer())
    fail(where, std::string("field \"") + field + "\" must be an integer");
  auto v = j.get<long long>();
  if (v < -1 || v > 1'000'000) fail(where, std::string("field \"") + field + "\" is out of range");
  return static_cast<int>(v);
}

std::map<int, int> get_cpu_counts(const json& j, const char* field, const std::string& where) {
  if (!j.is_object()) {
    fail(where, std::string("field \"") + field + "\" must be an object CPU -> count");
  }
  std::map<int, int> out;
  for (const auto& [key, value] : j.items()) {
    size_t used = 0;
    int cpu = -1;
    try {
      cpu = std::stoi(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || cpu < 0) {
      fail(where, std::string("field \"") + field + "\": key \"" + key + "\" is not a CPU id");
    }
    // An int each: a count past kMaxCount would wrap, and the idle-scan arithmetic overflow.
    constexpr long long kMaxCount = 1000000;
    if (!value.is_number_integer() || value.get<long long>() < 0 ||
        value.get<long long>() > kMaxCount) {
      fail(where, std::string("field \"") + field + "\": CPU " + key +
                      " needs an integer count from 0 to " + std::to_string(kMaxCount));
    }
    out[cpu] = static_cast<int>(value.get<long long>());
  }
  return out;
}

const std::set<std::string> kFields = {
    "waker",        "prev",          "sync",        "current_cpu",
    "reciprocal",   "nr_running",    "delayed",     "recent_used_cpu",
    "allowed",      "waker_flips",   "wakee_flips", "has_idle_cores",
    "nr_idle_scan", "waker_kthread", "in_task",     "wakee_queued",
    "llc_level",    "sched_features"};

// The scenario's optional true/false fields, each left at WakeInput's default when absent.
void read_flags(const json& j, const std::string& where, WakeInput& w) {
  auto flag = [&](const char* field, auto& out) {
    if (j.contains(field)) out = get_bool(j[field], field, where);
  };
  flag("sync", w.sync);
  flag("current_cpu", w.current_cpu);
  flag("reciprocal", w.reciprocal);
  flag("has_idle_cores", w.has_idle_cores);
  flag("waker_kthread", w.waker_kthread);
  flag("in_task", w.in_task);
  flag("wakee_queued", w.wakee_queued);
}

// The optional counts: the runqueues, the flips and the idle-scan budget.
void read_counts(const json& j, const std::string& where, WakeInput& w) {
  w.nr_running = j.contains("nr_running") ? get_cpu_counts(j["nr_running"], "nr_running", where)
                                          : std::map<int, int>{{w.waker, 1}};
  if (j.contains("delayed")) w.delayed = get_cpu_counts(j["delayed"], "delayed", where);
  if (j.contains("waker_flips")) w.waker_flips = get_int(j["waker_flips"], "waker_flips", where);
  if (j.contains("wakee_flips")) w.wakee_flips = get_int(j["wakee_flips"], "wakee_flips", where);
  if (w.waker_flips < 0) fail(where, "field \"waker_flips\" must be >= 0");
  if (w.wakee_flips < 0) fail(where, "field \"wakee_flips\" must be >= 0");
  if (j.contains("nr_idle_scan")) {
    w.nr_idle_scan = get_int(j["nr_idle_scan"], "nr_idle_scan", where);
    if (*w.nr_idle_scan < 0) fail(where, "field \"nr_idle_scan\" must be >= 0");
  }
}

// The string fields: allowed (a CPU list), sched_features, llc_level.
void read_strings(const json& j, const std::string& where, Scenario& s) {
  WakeInput& w = s.wake;
  if (j.contains("allowed")) {
    if (!j["allowed"].is_string()) fail(where, "field \"allowed\" must be a CPU list string");
    try {
      w.allowed = parse_cpu_list(j["allowed"].get<std::string>());
    } catch (const std::exception& e) {
      fail(where, std::string("field \"allowed\": ") + e.what());
    }
    if (w.allowed.empty()) fail(where, "field \"allowed\" is empty");
  }
  if (j.contains("sched_features")) {
    if (!j["sched_features"].is_string())
      fail(where, "field \"sched_features\" must be a string such as \"NO_WA_IDLE,NO_SIS_UTIL\"");
    w.features = parse_model_features(j["sched_features"].get<std::string>(),
                                      "scenario " + where + ": field \"sched_features\"");
  }
  if (j.contains("llc_level")) {
    if (!j["llc_level"].is_string()) fail(where, "field \"llc_level\" must be \"L3\" or \"L2\"");
    try {
      s.llc_level = parse_llc_level(j["llc_level"].get<std::string>());
    } catch (const std::exception& e) {
      fail(where, std::string("field \"llc_level\": ") + e.what());
    }
  }
}

}  // namespace

Scenario parse_scenario(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, "expected a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (!kFields.count(key)) fail(where, "unknown field \"" + key + "\"");
  }
  for (const char* required : {"waker", "prev"}) {
    if (!j.contains(required))
      fail(where, std::string("missing required field \"") + required + "\"");
  }
  Scenario s;
  s.given = j;
  WakeInput& w = s.wake;
  w.waker = get_int(j["waker"], "waker", where);
  w.prev = get_int(j["prev"], "prev", where);
  if (w.waker < 0) fail(where, "field \"waker\" must be a CPU id");
  if (w.prev < 0) fail(where, "field \"prev\" must be a CPU id");
  read_flags(j, where, w);
  // A strict pair wakes only each other: the waker's last wakee is this wakee exactly when the
  // wakee's last wakee is the waker (policy-model.md#simplifications item 5 applies record_wakee on
  // top).
  w.waker_last_wakee_is_wakee = w.reciprocal;
  read_counts(j, where, w);
  w.recent_used_cpu = j.contains("recent_used_cpu")
                          ? get_int(j["recent_used_cpu"], "recent_used_cpu", where)
                          : w.prev;
  read_strings(j, where, s);
  return s;
}

Scenario load_scenario(const std::string& path) {
  const std::string text = read_input_file("scenario", path);
  json j;
  try {
    j = parse_input_json(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("scenario " + path + ": " + e.what());
  }
  return parse_scenario(j, path);
}

void validate_scenario(const Scenario& s, const SchedTopology& sched, const std::string& where) {
  const WakeInput& w = s.wake;
  const std::string topo = " is not in topology " + sched.topology().source();
  if (!sched.has_cpu(w.waker))
    fail(where, "field \"waker\": CPU " + std::to_string(w.waker) + topo);
  if (!sched.has_cpu(w.prev)) fail(where, "field \"prev\": CPU " + std::to_string(w.prev) + topo);
  if (w.recent_used_cpu >= 0 && !sched.has_cpu(w.recent_used_cpu)) {
    fail(where, "field \"recent_used_cpu\": CPU " + std::to_string(w.recent_used_cpu) + topo);
  }
  for (const auto& [cpu, n] : w.nr_running) {
    if (!sched.has_cpu(cpu)) fail(where, "field \"nr_running\": CPU " + std::to_string(cpu) + topo);
  }
  for (const auto& [cpu, n] : w.delayed) {
    if (!sched.has_cpu(cpu)) fail(where, "field \"delayed\": CPU " + std::to_string(cpu) + topo);
    auto it = w.nr_running.find(cpu);
    if (n > (it == w.nr_running.end() ? 0 : it->second)) {
      fail(where, "field \"delayed\": CPU " + std::to_string(cpu) +
                      " has more delayed tasks than nr_running (delayed tasks stay queued)");
    }
  }
  for (int cpu : w.allowed) {
    if (!sched.has_cpu(cpu)) fail(where, "field \"allowed\": CPU " + std::to_string(cpu) + topo);
  }
  auto it = w.nr_running.find(w.waker);
  if (w.in_task && (it == w.nr_running.end() || it->second < 1)) {
    fail(where, "field \"nr_running\": the waker's CPU " + std::to_string(w.waker) +
                    " must count the waker (>= 1) when in_task");
  }
}

json predict_scenario(const SchedTopology& sched, const Scenario& s, const std::string& where) {
  validate_scenario(s, sched, where);
  json policies = json::object();
  for (const auto* p : all_policies()) {
    WakeDecision d = predict_wakeup(sched, s.wake, *p);
    policies[std::string(p->id())] = {
        {"cpu", d.cpu},
        {"class", std::string(class_id(classify(sched.topology(), s.wake.waker, d.cpu)))},
        {"rule", std::string(decision_rule_id(d.rule))},
        {"path", d.path}};
  }
  return {{"scenario", s.given}, {"policies", policies}};
}

std::string render_scenario_text(const SchedTopology& sched, const json& prediction) {
  std::ostringstream out;
  const json& sc = prediction.at("scenario");
  out << "topology " << sched.topology().source() << " (LLC " << llc_source_name(sched.llc_source())
      << ", node_reclaim_distance " << sched.node_reclaim_distance() << ": "
      << sched.reclaim_reason() << ")\n";
  out << "wakeup: waker " << sc.at("waker") << " -> wakee prev " << sc.at("prev")
      << (sc.value("sync", false) ? ", sync" : ", not sync")
      << (sc.value("current_cpu", false) ? ", WF_CURRENT_CPU" : "") << "\n\n";
  out << std::left << std::setw(14) << "policy" << std::setw(6) << "cpu" << std::setw(13) << "class"
      << "path\n";
  for (const auto* p : all_policies()) {
    const json& r = prediction.at("policies").at(std::string(p->id()));
    out << std::left << std::setw(14) << p->id() << std::setw(6) << r.at("cpu").get<int>()
        << std::setw(13) << r.at("class").get<std::string>() << r.at("path").get<std::string>()
        << "\n";
  }
  return out.str();
}

}  // namespace wb
