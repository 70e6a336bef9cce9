// The six wakeup policies as deltas to the shared model (docs/policy-model.md#policies; the patches
// are cited in configs/seeds/README.md).
#include <algorithm>
#include <stdexcept>

#include "analysis/model/policy_model.h"
#include "common/schema/registry.h"

namespace wb {

namespace {

// P1: the kernel as it is (select_task_rq_fair in v6.18-v7.1).
class Mainline final : public WakeupPolicy {
 public:
  std::string_view id() const override { return "mainline"; }
  std::string_view origin() const override { return "Linux v6.18-v7.1 select_task_rq_fair()"; }
};

// P2: Kaushik v5 "Preserve wake-affine CPU for non-SMT reciprocal sync wakeups" (seed 000):
// inside the SD_WAKE_AFFINE branch, after wake_affine(), return the waker CPU when
// sync && !sched_smt_active() && new_cpu == cpu && p->last_wakee == current &&
// prefer_sync_pair_cpu() (nr_running - cfs_h_nr_delayed == 1). Also runs when cpu == prev_cpu.
class SyncPair final : public WakeupPolicy {
 public:
  std::string_view id() const override { return "sync-pair"; }
  std::string_view origin() const override {
    return "Kaushik v5: preserve wake-affine CPU for non-SMT reciprocal sync wakeups";
  }
  std::optional<int> after_wake_affine(const WakeContext& ctx, int new_cpu) const override {
    int cpu = ctx.cpu();
    if (ctx.sync() && !ctx.sched().smt_active() && new_cpu == cpu && ctx.reciprocal() &&
        ctx.alone(cpu)) {
      return cpu;
    }
    return std::nullopt;
  }
  bool acts_on(const SchedTopology& sched) const override { return !sched.smt_active(); }
};

// P3: Madadi Vineeth Reddy v1 "Let sync wakeups target the waker's core" (seed 001, first diff):
// select_idle_core() counts the lone sync waker as idle.
class SyncCore final : public WakeupPolicy {
 public:
  std::string_view id() const override { return "sync-core"; }
  std::string_view origin() const override {
    return "Madadi v1: sync wakeups target the waker's core (select_idle_core)";
  }
  SyncCoreHook sync_core_hook() const override { return SyncCoreHook::kIdleCoreScan; }
  // select_idle_core() runs only with has_idle_cores, which needs SMT.
  bool acts_on(const SchedTopology& sched) const override { return sched.smt_active(); }
};

// P4: the Madadi/Prateek revision (seed 001, third diff): select_idle_sync_core() after
// select_idle_smt(prev) and before select_idle_cpu().
class SyncCoreV2 final : public WakeupPolicy {
 public:
  std::string_view id() const override { return "sync-core-v2"; }
  std::string_view origin() const override {
    return "Madadi/Prateek revision: select_idle_sync_core() before select_idle_cpu()";
  }
  SyncCoreHook sync_core_hook() const override { return SyncCoreHook::kSiblingFirst; }
  // The hook sits inside select_idle_sibling()'s SMT branch.
  bool acts_on(const SchedTopology& sched) const override { return sched.smt_active(); }
};

// P5: Joel Fernandes 2017 RFC (seed 003): before wake_wide and the domain walk (record_wakee
// already ran), a sync wake whose waker CPU is allowed and has nr_running < 2 (raw count; the
// 2017 code had no delayed tasks) returns the waker CPU. wake_cap() is false on symmetric boxes.
class Sync2017 final : public WakeupPolicy {
 public:
  std::string_view id() const override { return "sync-2017"; }
  std::string_view origin() const override {
    return "Joel Fernandes 2017 RFC: sync wake on a waker CPU with nr_running < 2 stays there";
  }
  std::optional<int> before_domain_walk(const WakeContext& ctx) const override {
    int cpu = ctx.cpu();
    if (ctx.sync() && ctx.allowed(cpu) && ctx.nr_running(cpu) < 2) return cpu;
    return std::nullopt;
  }
};

// P6: Oskolkov FUTEX_SWAP (seed 004): the handoff wake carries WF_CURRENT_CPU, so the waker CPU
// wins whenever it is allowed (after the section-2 bypasses).
class CurrentCpu final : public WakeupPolicy {
 public:
  std::string_view id() const override { return "current-cpu"; }
  std::string_view origin() const override {
    return "Oskolkov FUTEX_SWAP: WF_CURRENT_CPU handoff onto the waker CPU";
  }
  bool wake_carries_current_cpu() const override { return true; }
};

// `models` in registry/registry.json's order, then any model the file does not list
// (tests/policy_test.cpp fails on those, and on a listed policy with no model).
std::vector<const WakeupPolicy*> in_registry_order(const std::vector<const WakeupPolicy*>& models) {
  std::vector<const WakeupPolicy*> out;
  const std::vector<std::string> ids = registry().policy_ids();
  for (const std::string& id : ids)
    for (const WakeupPolicy* p : models)
      if (p->id() == id) out.push_back(p);
  for (const WakeupPolicy* p : models)
    if (std::find(ids.begin(), ids.end(), p->id()) == ids.end()) out.push_back(p);
  return out;
}

}  // namespace

const std::vector<const WakeupPolicy*>& all_policies() {
  static const Mainline mainline;
  static const SyncPair sync_pair;
  static const SyncCore sync_core;
  static const SyncCoreV2 sync_core_v2;
  static const Sync2017 sync_2017;
  static const CurrentCpu current_cpu;
  static const std::vector<const WakeupPolicy*> all = in_registry_order(
      {&mainline, &sync_pair, &sync_core, &sync_core_v2, &sync_2017, &current_cpu});
  return all;
}

const WakeupPolicy& policy_by_id(std::string_view id) {
  for (const auto* p : all_policies()) {
    if (p->id() == id) return *p;
  }
  throw std::invalid_argument("unknown policy \"" + std::string(id) + "\"");
}

}  // namespace wb
