// What the wakeup model says of every sched feature (docs/policy-model.md#sched-features): which
// it takes as input (ModelFeatures, analysis/model/policy_model.h) and why it leaves the others
// out. Pure: a set's recorded feature state in, the model's switches and one note per feature off
// its default out.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/policy_model.h"
#include "common/system/settings.h"

namespace wb {

// One sched feature as the model knows it (Linux 6.12's kernel/sched/features.h, !PREEMPT_RT).
struct SchedFeatureInfo {
  std::string_view name;
  bool default_on = true;
  bool ModelFeatures::*model = nullptr;  // its switch; nullptr: not modelled
  std::string_view why;                  // modelled: where it acts; else why it is not modelled
};
// The feature the model knows by that name (6.12's, then NI_RATE and SIS_PROP), else nullptr.
const SchedFeatureInfo* find_sched_feature(std::string_view name);

// A feature of a set away from its default, or one the model does not know.
struct FeatureNote {
  enum class Kind {
    kModelled,     // predicted and replayed with it as recorded
    kPolicyGate,   // a lab kernel's policy switch (registry/registry.json `sched_feature`)
    kNotModelled,  // acts outside the model's placement: `why`
  };
  std::string name;
  bool enabled = false;
  Kind kind = Kind::kNotModelled;
  std::string why;            // where it acts, the policy it turns on, or why it is not modelled
  std::string state() const;  // "NO_DELAY_DEQUEUE" or "NEXT_BUDDY"
};

// The sched features a result set ran with, as the model takes them.
struct SetFeatures {
  ModelFeatures model;
  std::string from;                // where they were read: "environment.sched_features, ..."
  std::vector<FeatureNote> notes;  // off their default or unknown, in name order
  // The policy the lab's gated kernel runs: the one whose gate is on (registry `sched_feature`;
  // the first in name order if several are); "" when none is.
  std::string gated_policy;
  // Notes of one kind, "NO_SIS_UTIL, NO_WA_IDLE"; "" when none.
  std::string states(FeatureNote::Kind kind) const;
};

// The features of a set: `recorded` (environment.sched_features as read: {NAME: on}; null when
// the set records none), then each `feature:NAME` of `ab` (the set's ab.values: this setting's
// value, "on" or "off") over it; Linux 6.12's defaults for the rest. Throws
// std::invalid_argument for an ab feature value other than on/off.
SetFeatures set_features(const std::map<std::string, bool>* recorded, const SettingValues* ab);

// What predict prints of them, one line each (none when every feature is at its default):
// "sched features NO_SIS_UTIL, NO_WA_IDLE: modelled (environment.sched_features)", one line per
// policy gate, then "not modelled: NO_DELAY_DEQUEUE: acts on dequeue, not on where the wakee is
// placed" for each feature outside the model.
std::vector<std::string> feature_lines(const SetFeatures& f);
// {"from", "model": {NAME: bool}, "off_default": [{"feature", "enabled", "modelled", "why"}]}
// ("modelled": "yes", "policy gate" or "no").
nlohmann::json features_json(const SetFeatures& f);

// "NO_WA_IDLE,SIS_UTIL" (`predict --sched-features`): the model's switches from their defaults.
// Throws std::invalid_argument naming `where` and the feature for one the model does not take.
ModelFeatures parse_model_features(std::string_view list, const std::string& where);

}  // namespace wb
