// The shared wakeup model: select_task_rq_fair / wake_affine / select_idle_sibling with the
// policy hooks, over the sched domains of analysis/model/sched_topology.h. Rules and line anchors:
// docs/policy-model.md (each rule with its kernel/sched/fair.c, core.c, topology.c line in 6.12).
// Nothing here reads the host: the live machine's debugfs and topology are
// analysis/model/sched_live.cpp.
#include "analysis/model/policy_model.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "common/util/text.h"

namespace wb {
namespace {

bool contains(const std::vector<int>& sorted, int cpu) {
  return std::binary_search(sorted.begin(), sorted.end(), cpu);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

AllowedCpus::AllowedCpus(const SchedTopology& sched, const std::vector<int>& allowed) {
  if (allowed.empty()) {  // every CPU: nothing to build
    count = static_cast<int>(sched.cpus().size());
    return;
  }
  by_cpu.assign(static_cast<size_t>(sched.max_cpu() + 1), 0);
  for (int c : allowed) {
    if (sched.has_cpu(c)) by_cpu[c] = 1;
  }
  count = static_cast<int>(std::count(by_cpu.begin(), by_cpu.end(), 1));
}

WakeContext::WakeContext(const SchedTopology& sched, const WakeInput& in)
    : sched_(sched), in_(in), allowed_(in.allowed_cpus) {
  if (!allowed_) allowed_ = &own_.emplace(sched, in.allowed);
}

int WakeContext::nr_running(int cpu) const {
  if (const std::vector<int>* by_cpu = in_.nr_running_by_cpu)
    return cpu >= 0 && cpu < static_cast<int>(by_cpu->size()) ? (*by_cpu)[cpu] : 0;
  auto it = in_.nr_running.find(cpu);
  return it == in_.nr_running.end() ? 0 : it->second;
}

bool WakeContext::sched_idle(int cpu) const {
  return std::find(in_.sched_idle.begin(), in_.sched_idle.end(), cpu) != in_.sched_idle.end();
}

int WakeContext::nr_delayed(int cpu) const {
  auto it = in_.delayed.find(cpu);
  return it == in_.delayed.end() ? 0 : it->second;
}

bool WakeContext::allowed(int cpu) const {
  const std::vector<char>& by_cpu = allowed_->by_cpu;
  if (by_cpu.empty()) return sched_.has_cpu(cpu);
  return cpu >= 0 && cpu < static_cast<int>(by_cpu.size()) && by_cpu[cpu];
}

int WakeContext::nr_allowed() const { return allowed_->count; }

int WakeContext::first_allowed() const {
  for (int c : sched_.cpus()) {
    if (allowed(c)) return c;
  }
  return -1;
}

long long WakeContext::capacity(int cpu) const {
  const auto it = in_.capacity.find(cpu);
  return it == in_.capacity.end() ? 1024 : it->second;
}

long long WakeContext::load(int cpu) const {
  if (const auto it = in_.load.find(cpu); it != in_.load.end()) return it->second;
  long long n = nr_running(cpu);
  long long l = 0;
  if (cpu == in_.waker && n >= 1) {
    l = waker_load() + 1024 * (n - 1);
  } else {
    l = 1024 * n;
  }
  if (cpu == in_.prev) l += wakee_load();  // the wakee's blocked load stays on prev
  return l;
}

namespace {

// default_nr_idle_scan() and exact_has_idle_cores() on a context already built (the selector's).
int nr_idle_scan_in(const WakeContext& ctx, int cpu) {
  const SchedDomain* sd = ctx.sched().sd_llc(cpu);
  if (!sd) return 0;
  long long sum = 0;
  for (int c : sd->span) {
    long long n = ctx.nr_running(c);
    long long util = (c == ctx.cpu() && n >= 1) ? 512 + 1024 * (n - 1) : 1024 * n;
    sum += std::min<long long>(util, 1024);
  }
  // update_idle_cpu_scan(): x = sum_util / llc_weight; y = 1024 - x^2 pct^2 / (10000 * 1024)
  // (clamped); nr_idle_scan = y * llc_weight / 1024, with pct the LLC domain's imbalance_pct.
  long long w = static_cast<long long>(sd->span.size());
  long long x = sum / w;
  long long pct = sd->imbalance_pct;
  long long tmp = std::min<long long>(x * x * pct * pct / (10000LL * 1024), 1024);
  return static_cast<int>((1024 - tmp) * w / 1024);
}

bool has_idle_cores_in(const WakeContext& ctx, int cpu) {
  const SchedDomain* sd = ctx.sched().sd_llc(cpu);
  if (!sd) return false;
  for (int c : sd->span) {
    const auto& core = ctx.sched().smt_mask(c);
    if (std::all_of(core.begin(), core.end(), [&](int s) { return ctx.idle(s); })) return true;
  }
  return false;
}

}  // namespace

int default_nr_idle_scan(const SchedTopology& sched, const WakeInput& in, int cpu) {
  return nr_idle_scan_in(WakeContext(sched, in), cpu);
}

bool exact_has_idle_cores(const SchedTopology& sched, const WakeInput& in, int cpu) {
  return has_idle_cores_in(WakeContext(sched, in), cpu);
}

// ---------------------------------------------------------------------------------------------
// One wakeup through the kernel path, with the policy's hooks.

namespace {

class Selector {
 public:
  Selector(const WakeContext& ctx, const WakeupPolicy& policy)
      : ctx_(ctx), sched_(ctx.sched()), in_(ctx.input()), policy_(policy) {
    recent_after_ = in_.recent_used_cpu;
    waker_flips_ = in_.waker_flips;
  }

  WakeDecision run() {
    int cpu = try_to_wake_up();
    return {cpu,           rule_,        join(steps_, "; "),
            recent_after_, waker_flips_, idle_cores_cleared_,
            wide_,         want_affine_, sites_};
  }

 private:
  // One step of the path, from its parts (text and CPU ids), when the input asks for it.
  template <typename... Parts>
  void note(const Parts&... parts) {
    if (!in_.explain) return;
    std::string s;
    (append(s, parts), ...);
    steps_.push_back(std::move(s));
  }
  static void append(std::string& s, std::string_view text) { s += text; }
  static void append(std::string& s, int cpu) { s += std::to_string(cpu); }
  // The branch that returns `cpu` (a later one, select_fallback_rq, overrides it).
  int chose(DecisionRule rule, int cpu) {
    rule_ = rule;
    return cpu;
  }
  // The recorded hint of target's LLC, if a decision record gave one.
  const WakeInput::LlcHint* llc_hint(int target) const {
    for (const WakeInput::LlcHint& h : in_.llc_hints)
      if (sched_.cpus_share_cache(h.cpu, target)) return &h;
    return nullptr;
  }

  // kernel/sched/core.c try_to_wake_up() -> select_task_rq() (policy-model.md#bypasses).
  int try_to_wake_up() {
    if (in_.wakee_queued) {
      note("ttwu_runnable: wakee still queued on prev -> ", in_.prev);
      return chose(DecisionRule::kTtwuRunnable, in_.prev);
    }
    if (in_.features.ttwu_queue && in_.wakee_on_cpu && ttwu_queue_cond()) {
      note("ttwu_queue_wakelist: wakee still on prev ", in_.prev, ", queued there");
      return chose(DecisionRule::kTtwuQueueWakelist, in_.prev);
    }
    if (ctx_.nr_allowed() == 1) {
      int only = ctx_.first_allowed();
      note("select_task_rq: nr_cpus_allowed == 1 -> ", only);
      return chose(DecisionRule::kOneAllowedCpu, only);
    }
    int cpu = select_task_rq_fair();
    if (!ctx_.allowed(cpu)) cpu = chose(DecisionRule::kSelectFallbackRq, select_fallback_rq(cpu));
    return cpu;
  }

  // core.c ttwu_queue_cond() for the wakee's CPU (every CPU active); ttwu_queue_wakelist() asks
  // it only with TTWU_QUEUE (core.c:3951), else the waker waits for the switch-out and selects.
  bool ttwu_queue_cond() const {
    const int prev = in_.prev;
    if (!ctx_.allowed(prev)) return false;
    if (!sched_.cpus_share_cache(in_.waker, prev)) return true;
    if (prev == in_.waker) return false;
    return in_.prev_nr_running.value_or(ctx_.nr_running(prev)) == 0;
  }

  // select_fallback_rq(): an allowed CPU of prev's node first, else any allowed CPU.
  int select_fallback_rq(int chosen) {
    const Pu* prev_pu = sched_.topology().find(in_.prev);
    int fallback = -1;
    for (int c : sched_.cpus()) {
      if (!ctx_.allowed(c)) continue;
      const Pu* pu = sched_.topology().find(c);
      if (prev_pu && pu && pu->numa == prev_pu->numa) {
        fallback = c;
        break;
      }
      if (fallback < 0) fallback = c;
    }
    note("select_fallback_rq: ", chosen, " not allowed -> ", fallback);
    return fallback;
  }

  // select_task_rq_fair() (policy-model.md#select-task-rq-fair) with the policy hooks at the
  // patches' places.
  int select_task_rq_fair() {
    const int cpu = in_.waker;
    const int prev = in_.prev;
    // record_wakee(): the waker's flips grow when it wakes someone new.
    if (!in_.waker_last_wakee_is_wakee) ++waker_flips_;
    sites_.current_cpu = !in_.current_cpu && ctx_.allowed(cpu);
    if ((in_.current_cpu || policy_.wake_carries_current_cpu()) && ctx_.allowed(cpu)) {
      note(in_.current_cpu ? "WF_CURRENT_CPU" : "WF_CURRENT_CPU (handoff)", " -> waker ", cpu);
      return chose(DecisionRule::kCurrentCpu, cpu);
    }
    sites_.before_walk = true;
    if (auto r = policy_.before_domain_walk(ctx_)) {
      note(policy_.id(), ": sync, waker rq nr_running < 2 -> waker ", *r);
      return chose(DecisionRule::kBeforeDomainWalk, *r);
    }
    const bool wide = wide_ = wake_wide();
    const bool want_affine = want_affine_ = !wide && ctx_.allowed(cpu);
    if (wide) note("wake_wide");
    if (!ctx_.allowed(cpu)) note("waker CPU not allowed");

    int new_cpu = prev;
    bool affine_hit = false;
    for (const auto& sd : sched_.domains(cpu)) {
      if (want_affine && sd.wake_affine && contains(sd.span, prev)) {
        affine_hit = true;
        if (cpu != prev) {
          new_cpu = wake_affine(sd, cpu, prev);
        } else {
          note("waker == prev (", sd.name, ")");
        }
        sites_.after_affine = new_cpu;
        if (auto r = policy_.after_wake_affine(ctx_, new_cpu)) {
          note(policy_.id(), ": reciprocal sync, waker alone, no SMT -> waker ", *r);
          return chose(DecisionRule::kAfterWakeAffine, *r);
        }
        break;
      }
      // No level sets SD_BALANCE_WAKE by default, so the slow path is never taken.
      if (!want_affine) break;
    }
    if (want_affine && !affine_hit) note("no SD_WAKE_AFFINE level spans prev ", prev);

    sync_gate_ = want_affine && in_.sync && new_cpu == cpu && ctx_.alone(cpu);
    return select_idle_sibling(prev, new_cpu);
  }

  // wake_wide(): factor = sd_llc_size of the waker CPU.
  bool wake_wide() const {
    long long master = waker_flips_;
    long long slave = in_.wakee_flips;
    if (master < slave) std::swap(master, slave);
    long long factor = sched_.llc_size(in_.waker);
    return !(slave < factor || master < slave * factor);
  }

  // wake_affine() (fair.c:7520): WA_IDLE and WA_WEIGHT each gate their test (fair.c:7525-7529);
  // with neither answering, prev.
  int wake_affine(const SchedDomain& sd, int this_cpu, int prev) {
    const ModelFeatures& f = in_.features;
    std::optional<int> t = f.wa_idle ? wake_affine_idle(this_cpu, prev) : std::nullopt;
    std::string how = f.wa_idle ? "WA_IDLE" : "NO_WA_IDLE";
    if (!t && f.wa_weight) {
      how = "WA_WEIGHT";
      if (wake_affine_weight(sd, this_cpu, prev)) t = this_cpu;
    } else if (!t) {
      how += ", NO_WA_WEIGHT";
    }
    int r = (t && *t == this_cpu) ? this_cpu : prev;
    note("wake_affine(", sd.name, ") ", how, " -> ", r);
    return r;
  }

  // wake_affine_idle(); "idle" is available_idle_cpu.
  std::optional<int> wake_affine_idle(int this_cpu, int prev) const {
    if (ctx_.idle(this_cpu) && sched_.cpus_share_cache(this_cpu, prev)) {
      return ctx_.idle(prev) ? prev : this_cpu;
    }
    if (in_.sync && ctx_.alone(this_cpu)) return this_cpu;
    if (ctx_.idle(prev)) return prev;
    return std::nullopt;
  }

  // wake_affine_weight(), signed 64-bit as in the kernel; WA_BIAS scales this by 100 and prev by
  // 100 + half the imbalance_pct's excess (fair.c:7498, 7504).
  bool wake_affine_weight(const SchedDomain& sd, int this_cpu, int prev) const {
    long long this_eff = ctx_.load(this_cpu);
    if (in_.sync) {
      long long current_load = ctx_.waker_load();
      if (current_load > this_eff) return true;
      this_eff -= current_load;
    }
    long long task_load = ctx_.wakee_load();
    const bool bias = in_.features.wa_bias;
    this_eff = (this_eff + task_load) * (bias ? 100 : 1) * ctx_.capacity(prev);
    long long prev_eff = (ctx_.load(prev) - task_load) *
                         (bias ? 100 + (sd.imbalance_pct - 100) / 2 : 1) * ctx_.capacity(this_cpu);
    if (in_.sync) prev_eff += 1;
    return this_eff < prev_eff;
  }

  bool usable(int c) const { return sched_.has_cpu(c); }

  // select_idle_sibling() (policy-model.md#select-idle-sibling).
  int select_idle_sibling(int prev, int target) {
    const int cpu = in_.waker;
    if (ctx_.idle_or_sched_idle(target)) {
      note("SIS target ", target, " idle");
      return chose(DecisionRule::kSisTarget, target);
    }
    int prev_aff = -1;
    if (prev != target && sched_.cpus_share_cache(prev, target) && ctx_.idle_or_sched_idle(prev)) {
      if (!sched_.cluster_active() || sched_.cpus_share_resources(prev, target)) {
        note("SIS prev ", prev, " idle, shares LLC");
        return chose(DecisionRule::kSisPrev, prev);
      }
      prev_aff = prev;
    }
    if (in_.waker_kthread && in_.in_task && prev == cpu && ctx_.nr_running(cpu) <= 1) {
      note("SIS per-CPU kthread waker, stack on prev ", prev);
      return chose(DecisionRule::kSisKthread, prev);
    }
    int recent = in_.recent_used_cpu;
    recent_after_ = prev;
    if (recent >= 0 && recent != prev && recent != target && usable(recent) &&
        sched_.cpus_share_cache(recent, target) && ctx_.idle_or_sched_idle(recent) &&
        ctx_.allowed(recent)) {
      if (!sched_.cluster_active() || sched_.cpus_share_resources(recent, target)) {
        note("SIS recent_used_cpu ", recent, " idle");
        return chose(DecisionRule::kSisRecent, recent);
      }
    } else {
      recent = -1;
    }
    const SchedDomain* sd = sched_.sd_llc(target);
    if (!sd) {
      note("SIS no LLC domain -> target ", target);
      return chose(DecisionRule::kSisNoLlc, target);
    }
    bool has_idle_core = false;
    if (sched_.smt_active())
      if (auto i = smt_shortcuts(*sd, prev, target, has_idle_core)) return *i;
    int sync_cpu =
        (sync_gate_ && policy_.sync_core_hook() == SyncCoreHook::kIdleCoreScan) ? cpu : -1;
    if (auto i = select_idle_cpu(*sd, has_idle_core, target, sync_cpu))
      return chose(DecisionRule::kSisIdleCpu, *i);
    if (prev_aff >= 0) {
      note("SIS fallback prev_aff ", prev_aff);
      return chose(DecisionRule::kSisPrevAff, prev_aff);
    }
    if (recent >= 0) {
      note("SIS fallback recent_used_cpu ", recent);
      return chose(DecisionRule::kSisRecentFallback, recent);
    }
    note("SIS nothing idle -> target ", target);
    return chose(DecisionRule::kSisTargetFallback, target);
  }

  // With SMT: whether the LLC has an idle core, then select_idle_smt() on prev, or the sync-core
  // hook's sibling, when one answers.
  std::optional<int> smt_shortcuts(const SchedDomain& sd, int prev, int target,
                                   bool& has_idle_core) {
    const WakeInput::LlcHint* hint = llc_hint(target);
    has_idle_core = hint                 ? hint->has_idle_cores
                    : in_.has_idle_cores ? *in_.has_idle_cores
                                         : has_idle_cores_in(ctx_, target);
    if (!has_idle_core && sched_.cpus_share_cache(prev, target)) {
      if (auto i = select_idle_smt(sd, prev)) {
        note("SIS select_idle_smt(prev ", prev, ") -> ", *i);
        return chose(DecisionRule::kSisSmt, *i);
      }
    }
    if (sync_gate_) {
      const std::optional<int> i = select_idle_sync_core(sd, target);
      sites_.sync_core_sibling = i.has_value();
      if (i && policy_.sync_core_hook() == SyncCoreHook::kSiblingFirst) {
        note(policy_.id(), ": select_idle_sync_core -> ", *i);
        return chose(DecisionRule::kSisSyncCore, *i);
      }
    }
    return std::nullopt;
  }

  std::optional<int> select_idle_smt(const SchedDomain& sd, int prev) const {
    for (int c : sched_.smt_mask(prev)) {
      if (c == prev || !ctx_.allowed(c) || !contains(sd.span, c)) continue;
      if (ctx_.idle_or_sched_idle(c)) return c;
    }
    return std::nullopt;
  }

  // P4's select_idle_sync_core(): every other sibling of target idle -> the first of them that
  // lies in the LLC domain and is allowed.
  std::optional<int> select_idle_sync_core(const SchedDomain& sd, int target) const {
    int idle_sibling = -1;
    for (int c : sched_.smt_mask(target)) {
      if (c == target) continue;
      if (!ctx_.idle(c)) return std::nullopt;
      if (idle_sibling < 0 && contains(sd.span, c) && ctx_.allowed(c)) idle_sibling = c;
    }
    if (idle_sibling < 0) return std::nullopt;
    return idle_sibling;
  }

  // select_idle_core(); P3 treats sync_cpu as idle but never records it as the fallback.
  std::optional<int> select_idle_core(int core, std::vector<char>& cpus, int& idle_cpu,
                                      int sync_cpu) {
    bool idle = true;
    for (int c : sched_.smt_mask(core)) {
      if (sync_gate_ && c == in_.waker) sites_.sync_core_scan = true;
      bool sync_waker = c == sync_cpu;
      if (!ctx_.idle(c) && !sync_waker) {
        idle = false;
        if (idle_cpu != -1) break;
        if (ctx_.sched_idle(c) && cpus[c]) {
          idle_cpu = c;
          break;
        }
        continue;
      }
      if (!sync_waker && idle_cpu == -1 && cpus[c]) idle_cpu = c;
    }
    if (idle) return core;
    for (int c : sched_.smt_mask(core)) cpus[c] = 0;
    return std::nullopt;
  }

  // One for_each_cpu_wrap() pass over `order` from target+1, skipping ids no longer in `cpus`.
  // Returns a CPU to use, or sets `done` when the scan must stop with `idle_cpu`.
  std::optional<int> scan(const std::vector<int>& order, int target, std::vector<char>& cpus,
                          bool has_idle_core, int sync_cpu, int& nr, int& idle_cpu, bool& done,
                          bool prepass) {
    size_t start = std::lower_bound(order.begin(), order.end(), target + 1) - order.begin();
    for (size_t k = 0; k < order.size(); ++k) {
      int c = order[(start + k) % order.size()];
      if (!cpus[c]) continue;
      if (has_idle_core) {
        if (auto r = select_idle_core(c, cpus, idle_cpu, sync_cpu)) {
          note("SIS select_idle_cpu", (prepass ? "(cluster)" : ""), ": idle core at ", *r,
               (sync_cpu >= 0 ? " (waker counted idle)" : ""));
          return r;
        }
      } else {
        if (--nr <= 0) {
          note("SIS select_idle_cpu: SIS_UTIL budget exhausted");
          idle_cpu = -1;
          done = true;
          return std::nullopt;
        }
        if (ctx_.idle_or_sched_idle(c)) {
          idle_cpu = c;
          if (prepass) {
            note("SIS select_idle_cpu(cluster): idle ", c);
            return c;
          }
          done = true;
          return std::nullopt;
        }
      }
    }
    return std::nullopt;
  }

  // select_idle_cpu() (policy-model.md#select-idle-cpu), with the cluster pre-pass and, with
  // SIS_UTIL, its budget (fair.c:7810; without it nr stays INT_MAX: no limit).
  std::optional<int> select_idle_cpu(const SchedDomain& sd, bool has_idle_core, int target,
                                     int sync_cpu) {
    std::vector<char> cpus(static_cast<size_t>(sched_.max_cpu() + 1), 0);
    for (int c : sd.span) cpus[c] = ctx_.allowed(c) ? 1 : 0;
    const WakeInput::LlcHint* hint = llc_hint(target);
    const std::optional<int> recorded = hint ? hint->nr_idle_scan : in_.nr_idle_scan;
    int nr = std::numeric_limits<int>::max();
    if (in_.features.sis_util) nr = (recorded ? *recorded : nr_idle_scan_in(ctx_, target)) + 1;
    if (nr == 1) {
      note("SIS select_idle_cpu: nr_idle_scan 0");
      return std::nullopt;
    }
    int idle_cpu = -1;
    bool done = false;
    // Pre-pass over target's cluster when sd_llc's first group is a cluster (its child is CLS).
    const auto& doms = sched_.domains(target);
    if (sched_.cluster_active()) {
      for (size_t i = 1; i < doms.size(); ++i) {
        if (&doms[i] == &sd && doms[i - 1].cluster) {
          const auto& cls = doms[i - 1].span;
          if (auto r = scan(cls, target, cpus, has_idle_core, sync_cpu, nr, idle_cpu, done, true))
            return r;
          if (done) return std::nullopt;
          for (int c : cls) cpus[c] = 0;
        }
      }
    }
    if (auto r = scan(sd.span, target, cpus, has_idle_core, sync_cpu, nr, idle_cpu, done, false))
      return r;
    if (has_idle_core) {
      note("SIS select_idle_cpu: no idle core (has_idle_cores cleared)");
      idle_cores_cleared_ = target;
    }
    if (idle_cpu >= 0) {
      note("SIS select_idle_cpu", (has_idle_core ? " idle thread " : ": idle "), idle_cpu);
      return idle_cpu;
    }
    return std::nullopt;
  }

  const WakeContext& ctx_;
  const SchedTopology& sched_;
  const WakeInput& in_;
  const WakeupPolicy& policy_;
  std::vector<std::string> steps_;
  DecisionRule rule_ = DecisionRule::kSisTargetFallback;
  int recent_after_ = -1;
  int waker_flips_ = 0;
  bool wide_ = false, want_affine_ = false;  // as select_task_rq_fair() computed them
  bool sync_gate_ = false;                   // the sync-core hooks' gate (policy-model.md#policies)
  HookSites sites_;
  int idle_cores_cleared_ = -1;
};

}  // namespace

bool decides_as(const WakeupPolicy& policy, const WakeContext& ctx, const HookSites& sites) {
  const SyncCoreHook hook = policy.sync_core_hook();
  return !(sites.current_cpu && policy.wake_carries_current_cpu()) &&
         !(sites.before_walk && policy.before_domain_walk(ctx)) &&
         !(sites.after_affine >= 0 && policy.after_wake_affine(ctx, sites.after_affine)) &&
         !(sites.sync_core_sibling && hook == SyncCoreHook::kSiblingFirst) &&
         !(sites.sync_core_scan && hook == SyncCoreHook::kIdleCoreScan);
}

WakeDecision predict_wakeup(const SchedTopology& sched, const WakeInput& in,
                            const WakeupPolicy& policy) {
  if (!sched.has_cpu(in.waker)) {
    throw std::invalid_argument("waker CPU " + std::to_string(in.waker) + " is not in topology " +
                                sched.topology().source());
  }
  if (!sched.has_cpu(in.prev)) {
    throw std::invalid_argument("prev CPU " + std::to_string(in.prev) + " is not in topology " +
                                sched.topology().source());
  }
  WakeContext ctx(sched, in);
  if (ctx.nr_allowed() == 0) {
    throw std::invalid_argument("allowed CPU list holds no CPU of topology " +
                                sched.topology().source());
  }
  return Selector(ctx, policy).run();
}

}  // namespace wb
