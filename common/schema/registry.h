// The policies and mechanisms wakebench knows, each listed once in registry/registry.json
// (registry/README.md), which CMake compiles in (cmake/WbRegistry.cmake). The Python tools read
// the same file.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/schema/case.h"

namespace wb {

// What a patch claims, which a result set's pinned cases check
// (analysis/predict/predict_results.h): the class `cheaper` costs less than `than` (another class,
// or "kernel": where the kernel placed the pair) on the `wakes` its change is about.
struct PolicyPremise {
  enum class Wakes { kSync, kFutexHandoff };  // "sync": WF_SYNC mechanisms; "futex-handoff"
  std::string text;                           // the claim, as printed
  std::string cheaper, than;                  // placement class ids; `than` may be "kernel"
  Wakes wakes = Wakes::kSync;
};

struct PolicyEntry {
  std::string id;  // "mainline", "sync-pair", ...: analysis/model/policies.cpp models each
  // The policy whose kernel runs it when it has no kernel of its own ("mainline" for
  // current-cpu); nullopt: a lab kernel of its own.
  std::optional<std::string> kernel;
  // The sched feature that turns the policy on in the lab's gated kernel ("SYNC_PAIR"); nullopt:
  // none (mainline, current-cpu).
  std::optional<std::string> sched_feature;
  std::optional<PolicyPremise> premise;  // nullopt: none (mainline)
};

struct MechanismEntry {
  std::string id;  // "pipe", ...: benchmarks/<mechanism>.cpp implements each
  WakeFlags wake_flags = WakeFlags::kNone;
  // Why its tasks never block ("busy-poll"): no kernel wakeup to model. nullopt: they block.
  std::optional<std::string> no_kernel_wakeup;
  // A FUTEX_WAKE-then-FUTEX_WAIT handoff, which the current-cpu policy's premise is about.
  bool futex_handoff = false;
  // Why the wakeup model does not describe its cases (fanout: many tasks each waking several):
  // predict does not compare them. nullopt: one waker and one wakee per pair, modelled.
  std::optional<std::string> not_modelled;
};

struct Registry {
  std::vector<PolicyEntry> policies;       // in the order every table uses
  std::vector<MechanismEntry> mechanisms;  // in the order of result sets and tables
  // The scheduler's own settings, which `run --ab` switches without --ab-any-setting: per kind of
  // --ab SPEC ("feature", "sysctl", "debugfs"), the prefixes of the names it takes ("kernel.sched_"
  // for the pattern "kernel.sched_*"; "" for "*").
  std::map<std::string, std::vector<std::string>> scheduler_settings;
  std::vector<std::string> policy_ids() const;
  std::vector<std::string> kernel_policy_ids() const;  // those with a lab kernel of their own
  std::vector<std::string> mechanism_ids() const;
  const MechanismEntry* find_mechanism(std::string_view id) const;  // nullptr if not listed
  // Throws std::logic_error when `id` is not listed (a mechanism implemented but not registered).
  const MechanismEntry& mechanism(std::string_view id) const;
  // Whether the setting `name` of `kind` is one of scheduler_settings.
  bool scheduler_setting(const std::string& kind, std::string_view name) const;
  // scheduler_settings as the registry writes it: "sysctl kernel.sched_*, kernel.numa_balancing*;
  // ...", the kinds in alphabetical order.
  std::string scheduler_settings_text() const;
};

// Parses a registry document; throws std::invalid_argument naming the bad entry.
Registry parse_registry(std::string_view text);
// The compiled-in registry/registry.json.
const Registry& registry();

}  // namespace wb
