// The sched feature table of docs/policy-model.md#sched-features: each feature's 6.12 default,
// and where it acts (kernel/sched/fair.c, core.c, rt.c of 6.12.118, the lab kernels' tree).
#include "analysis/model/model_features.h"

#include <map>
#include <stdexcept>

#include "common/schema/registry.h"
#include "common/util/text.h"

namespace wb {

namespace {

// Each reason says where the feature acts, then why that is not where the model decides.
const std::vector<SchedFeatureInfo>& table() {
  using F = ModelFeatures;
  constexpr bool on = true, off = false;
  static const std::vector<SchedFeatureInfo> t = {
      {"PLACE_LAG", on, nullptr, "acts on the wakee's vruntime, not on where it is placed"},
      {"PLACE_DEADLINE_INITIAL", on, nullptr, "acts on a new task's deadline, not on wakeups"},
      {"PLACE_REL_DEADLINE", on, nullptr, "acts on a migrated task's deadline, not on its CPU"},
      {"RUN_TO_PARITY", on, nullptr, "acts on which queued task runs next, not on placement"},
      {"PREEMPT_SHORT", on, nullptr, "acts on wakeup preemption, not on where the wakee is placed"},
      {"NEXT_BUDDY", off, nullptr, "acts on which task runs after a wakeup, not on placement"},
      {"PICK_BUDDY", on, nullptr, "acts on which queued task runs next, not on placement"},
      {"CACHE_HOT_BUDDY", on, nullptr, "acts on the load balancer, not on wakeup placement"},
      {"DELAY_DEQUEUE", on, nullptr, "acts on dequeue, not on where the wakee is placed"},
      {"DELAY_ZERO", on, nullptr, "acts on a delayed task's lag, not on placement"},
      {"WAKEUP_PREEMPTION", on, nullptr, "acts on wakeup preemption, not on placement"},
      {"HRTICK", off, nullptr, "acts on the end of a slice, not on placement"},
      {"HRTICK_DL", off, nullptr, "acts on the deadline class, not on fair placement"},
      {"DOUBLE_TICK", off, nullptr, "acts on the tick's preemption check, not on placement"},
      {"NONTASK_CAPACITY", on, nullptr, "acts on capacity_of(), which the model takes as 1024"},
      {"TTWU_QUEUE", on, &F::ttwu_queue,
       "ttwu_queue_wakelist(): a wakee still switching out queued on its CPU"},
      {"SIS_UTIL", on, &F::sis_util, "select_idle_cpu(): the LLC's nr_idle_scan budget"},
      {"WARN_DOUBLE_CLOCK", off, nullptr, "a debug warning, not placement"},
      {"RT_PUSH_IPI", off, nullptr, "acts on the RT class, not on fair placement"},
      {"RT_RUNTIME_SHARE", off, nullptr, "acts on the RT class, not on fair placement"},
      {"LB_MIN", off, nullptr, "acts on the load balancer, not on wakeup placement"},
      {"ATTACH_AGE_LOAD", on, nullptr, "acts on PELT loads, which the model takes as fixed"},
      {"WA_IDLE", on, &F::wa_idle, "wake_affine(): wake_affine_idle() first"},
      {"WA_WEIGHT", on, &F::wa_weight, "wake_affine(): wake_affine_weight() next"},
      {"WA_BIAS", on, &F::wa_bias, "wake_affine_weight(): prev's imbalance_pct bias"},
      {"UTIL_EST", on, nullptr, "acts on utilisation estimates, which the model takes as fixed"},
      {"LATENCY_WARN", off, nullptr, "a debug warning, not placement"},
      {"NI_RANDOM", on, nullptr, "acts on newidle balancing, not on wakeup placement"},
      // Not in 6.12: NI_RATE came after it, SIS_PROP went in 6.6.
      {"NI_RATE", on, nullptr, "acts on newidle balancing, not on wakeup placement"},
      {"SIS_PROP", off, nullptr, "the idle scan's avg_idle cap, gone since Linux 6.6"},
  };
  return t;
}

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t at = 0;;) {
    const size_t comma = s.find(',', at);
    out.push_back(s.substr(at, comma == std::string_view::npos ? comma : comma - at));
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
}

// The policy a lab kernel's sched feature turns on (registry/registry.json), or "".
std::string gated_policy(std::string_view name) {
  for (const PolicyEntry& p : registry().policies)
    if (p.sched_feature && *p.sched_feature == name) return p.id;
  return "";
}

FeatureNote note_of(const std::string& name, bool enabled) {
  if (const SchedFeatureInfo* f = find_sched_feature(name)) {
    return {name, enabled,
            f->model ? FeatureNote::Kind::kModelled : FeatureNote::Kind::kNotModelled,
            std::string(f->why)};
  }
  if (std::string policy = gated_policy(name); !policy.empty())
    return {name, enabled, FeatureNote::Kind::kPolicyGate, policy};
  return {name, enabled, FeatureNote::Kind::kNotModelled,
          "not a Linux 6.12 feature: what it does is unknown to the model"};
}

// A note when `name` is off its default (a policy gate: when on); always for an unknown name.
bool noteworthy(const std::string& name, bool enabled) {
  if (const SchedFeatureInfo* f = find_sched_feature(name)) return enabled != f->default_on;
  if (!gated_policy(name).empty()) return enabled;
  return true;
}

}  // namespace

const SchedFeatureInfo* find_sched_feature(std::string_view name) {
  for (const SchedFeatureInfo& f : table())
    if (f.name == name) return &f;
  return nullptr;
}

std::string FeatureNote::state() const { return (enabled ? "" : "NO_") + name; }

std::string SetFeatures::states(FeatureNote::Kind kind) const {
  std::vector<std::string> out;
  for (const FeatureNote& n : notes)
    if (n.kind == kind) out.push_back(n.state());
  return join(out, ", ");
}

SetFeatures set_features(const std::map<std::string, bool>* recorded, const SettingValues* ab) {
  SetFeatures out;
  std::map<std::string, bool> state;
  if (recorded) {
    state = *recorded;
    out.from = "environment.sched_features";
  } else {
    out.from = "Linux 6.12's defaults (the set records no sched features)";
  }
  bool switched = false;
  for (const auto& [knob, value] : ab ? *ab : SettingValues{}) {
    if (knob.rfind("feature:", 0) != 0) continue;
    if (value != "on" && value != "off")
      throw std::invalid_argument("ab.values." + knob + ": \"" + value + "\" is not on or off");
    state[knob.substr(8)] = value == "on";
    switched = true;
  }
  if (switched) out.from += " with this A/B setting's features";
  for (const auto& [name, on] : state) {
    if (const SchedFeatureInfo* f = find_sched_feature(name); f && f->model)
      out.model.*(f->model) = on;
    if (noteworthy(name, on)) out.notes.push_back(note_of(name, on));
    if (on && out.gated_policy.empty()) out.gated_policy = gated_policy(name);  // the first
  }
  return out;
}

std::vector<std::string> feature_lines(const SetFeatures& f) {
  std::vector<std::string> out;
  if (const std::string modelled = f.states(FeatureNote::Kind::kModelled); !modelled.empty())
    out.push_back("sched features " + modelled + ": modelled (" + f.from + ")");
  for (const FeatureNote& n : f.notes)
    if (n.kind == FeatureNote::Kind::kPolicyGate)
      out.push_back(n.state() + ": the " + n.why + " policy's gate in the lab's gated kernel");
  for (const FeatureNote& n : f.notes)
    if (n.kind == FeatureNote::Kind::kNotModelled)
      out.push_back("not modelled: " + n.state() + ": " + n.why);
  return out;
}

nlohmann::json features_json(const SetFeatures& f) {
  nlohmann::json model = nlohmann::json::object(), off = nlohmann::json::array();
  for (const SchedFeatureInfo& i : table())
    if (i.model) model[std::string(i.name)] = f.model.*(i.model);
  for (const FeatureNote& n : f.notes) {
    const char* modelled = n.kind == FeatureNote::Kind::kModelled     ? "yes"
                           : n.kind == FeatureNote::Kind::kPolicyGate ? "policy gate"
                                                                      : "no";
    off.push_back(
        {{"feature", n.name}, {"enabled", n.enabled}, {"modelled", modelled}, {"why", n.why}});
  }
  return {{"from", f.from}, {"model", model}, {"off_default", off}};
}

ModelFeatures parse_model_features(std::string_view list, const std::string& where) {
  ModelFeatures out;
  if (trim(list).empty()) return out;
  for (std::string_view item : split_commas(list)) {
    const std::string_view t = trim(item);
    const bool on = t.substr(0, 3) != "NO_";
    const std::string name(on ? t : t.substr(3));
    const SchedFeatureInfo* f = find_sched_feature(name);
    if (!f || !f->model) {
      std::vector<std::string> known;
      for (const SchedFeatureInfo& k : table())
        if (k.model) known.push_back(std::string(k.name));
      throw std::invalid_argument(where + ": \"" + std::string(t) +
                                  "\" is not a feature the model takes" +
                                  (f ? " (" + note_of(name, on).why + ")" : "") + "; it takes " +
                                  join(known, ", ") + ", each as NAME or NO_NAME");
    }
    out.*(f->model) = on;
  }
  return out;
}

}  // namespace wb
