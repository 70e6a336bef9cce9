// The shared wakeup model: sched domains from a topology, and select_task_rq_fair /
// wake_affine / select_idle_sibling with the policy hooks. Rules and line anchors:
// docs/policy-model.md (each rule with its kernel/sched/fair.c, core.c, topology.c line in 6.12).
// Nothing here reads the host: the live machine's debugfs and topology are analysis/sched_live.cpp.
#include "analysis/policy_model.h"

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

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool contains(const std::vector<int>& sorted, int cpu) {
  return std::binary_search(sorted.begin(), sorted.end(), cpu);
}

// node_reclaim_distance from the topology's own info (policy-model.md#sched-domains): 32 on AMD Zen
// (arch/x86/kernel/cpu/amd.c init_amd_zen_common), 10 on powerpc
// (arch/powerpc/include/asm/topology.h), else RECLAIM_DISTANCE 30.
std::pair<int, std::string> reclaim_distance_of(const Topology& topo) {
  auto vendor = topo.info("CPUVendor");
  auto family = topo.info("CPUFamilyNumber");
  if (vendor && (trim(*vendor) == "AuthenticAMD" || trim(*vendor) == "HygonGenuine") && family) {
    int fam = 0;
    try {
      fam = std::stoi(std::string(trim(*family)), nullptr, 0);
    } catch (const std::exception&) {
      fam = 0;
    }
    if (fam >= 0x17)
      return {32, "AMD Zen (" + std::string(trim(*vendor)) + " family " +
                      std::string(trim(*family)) + ")"};
  }
  if (topo.powerpc()) {
    auto arch = topo.info("Architecture");
    return {10, "powerpc (" + std::string(trim(arch ? *arch : *topo.info("CPUModel"))) + ")"};
  }
  return {30, "RECLAIM_DISTANCE default"};
}

}  // namespace

LlcSource parse_llc_level(std::string_view text) {
  std::string u = upper(text);
  if (u == "L3") return LlcSource::kL3;
  if (u == "L2") return LlcSource::kL2;
  if (u == "CLUSTER") return LlcSource::kCluster;
  throw std::invalid_argument("llc level \"" + std::string(text) +
                              "\": expected L2, L3 or cluster");
}

std::string_view llc_source_name(LlcSource s) {
  switch (s) {
    case LlcSource::kAuto:
      return "L3, else L2";
    case LlcSource::kL3:
      return "L3";
    case LlcSource::kL2:
      return "L2";
    case LlcSource::kCluster:
      return "cluster (debugfs: CLS is the highest SD_SHARE_LLC level)";
    case LlcSource::kCore:
      return "core (debugfs: SMT is the highest SD_SHARE_LLC level)";
  }
  return "?";
}

std::optional<LlcSource> llc_source_from_domains(
    const std::vector<std::pair<std::string, std::string>>& domains) {
  std::optional<LlcSource> found;
  for (const auto& [name, flags] : domains) {
    std::istringstream in(flags);
    std::string flag;
    bool share = false;
    while (in >> flag) share |= flag == "SD_SHARE_LLC" || flag == "SD_SHARE_PKG_RESOURCES";
    if (!share) continue;
    std::string n = upper(trim(name));
    if (n == "SMT") {
      found = LlcSource::kCore;
    } else if (n == "CLS") {
      found = LlcSource::kCluster;
    } else if (n == "MC" || n == "CACHE") {
      found = LlcSource::kAuto;
    } else {
      return std::nullopt;  // a level this model does not know: let the XML rules decide
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// SchedTopology: per-CPU levels SMT -> CLS -> MC -> PKG -> NUMA(d)..., each widened to include
// its child and dropped when it degenerates (docs/policy-model.md#sched-domains).

namespace {

// The PUs under each object of one kind, by the object's id: sorted OS indexes.
using Spans = std::map<int, std::vector<int>>;

// The spans of every object kind the levels are built from, computed once per topology.
struct ObjectSpans {
  Spans cores, clusters, l2s, l3s, llcs, nodes, packages, kernel_clusters;
};

ObjectSpans object_spans(const std::vector<Pu>& pus) {
  auto by = [&](int Pu::*id) {
    Spans spans;
    for (const auto& pu : pus) spans[pu.*id].push_back(pu.os);
    return spans;
  };
  return {by(&Pu::core), by(&Pu::cluster), by(&Pu::l2),      by(&Pu::l3),
          by(&Pu::llc),  by(&Pu::numa),    by(&Pu::package), by(&Pu::kernel_cluster)};
}

// The span of object `id`, or the PU alone when it has no such object (id < 0).
std::vector<int> span_or_self(const Spans& spans, int id, int os) {
  return id < 0 ? std::vector<int>{os} : spans.at(id);
}

// LlcSource::kAuto: the PU's L3, else its L2, else its core `smt`.
std::vector<int> auto_llc_span(const Pu& pu, const ObjectSpans& spans,
                               const std::vector<int>& smt) {
  std::vector<int> span = pu.llc >= 0 ? spans.llcs.at(pu.llc) : smt;
  // arm64 with no cache shared above the cluster (Ampere Altra): cpu_coregroup_mask() grows the
  // LLC to the cluster (drivers/base/arch_topology.c), and MC spans it.
  if (pu.kernel_cluster >= 0) {
    const auto& kc = spans.kernel_clusters.at(pu.kernel_cluster);
    if (kc.size() > span.size() && std::includes(kc.begin(), kc.end(), span.begin(), span.end()))
      return kc;
  }
  return span;
}

// The span of the PU's MC level: the cache `llc` names (docs/policy-model.md#llc); `smt` is the
// PU's core. Throws std::invalid_argument naming `source` when the PU lacks the L3 or L2 asked for.
std::vector<int> llc_span_of(const Pu& pu, LlcSource llc, const ObjectSpans& spans,
                             const std::vector<int>& smt, const std::string& source) {
  switch (llc) {
    case LlcSource::kAuto:
      return auto_llc_span(pu, spans, smt);
    case LlcSource::kL3:
      if (pu.l3 < 0) {
        throw std::invalid_argument("llc level L3: CPU " + std::to_string(pu.os) +
                                    " has no L3 cache in " + source);
      }
      return spans.l3s.at(pu.l3);
    case LlcSource::kL2:
      if (pu.l2 < 0) {
        throw std::invalid_argument("llc level L2: CPU " + std::to_string(pu.os) +
                                    " has no L2 cache in " + source);
      }
      return spans.l2s.at(pu.l2);
    case LlcSource::kCluster:
      return pu.cluster >= 0 ? spans.clusters.at(pu.cluster)
                             : span_or_self(spans.l2s, pu.l2, pu.os);
    case LlcSource::kCore:
      return smt;
  }
  return {};
}

// One NUMA(d) level per distinct distance d from `cpu` above the local one, each spanning the
// CPUs within d; sd_init: the levels beyond node_reclaim_distance lose SD_WAKE_AFFINE.
std::vector<SchedDomain> numa_levels(const Topology& topo, const std::vector<int>& cpus, int cpu,
                                     int reclaim_distance) {
  std::set<int> distances;
  for (int c : cpus) distances.insert(topo.numa_distance(cpu, c));
  const int local = topo.numa_distance(cpu, cpu);
  std::vector<SchedDomain> levels;
  for (int d : distances) {
    if (d <= local) continue;
    std::vector<int> span;
    for (int c : cpus) {
      if (topo.numa_distance(cpu, c) <= d) span.push_back(c);
    }
    levels.push_back({.name = "NUMA(" + std::to_string(d) + ")",
                      .span = span,
                      .wake_affine = d <= reclaim_distance});
  }
  return levels;
}

// The PU's levels of the default topology table up to its NUMA node, bottom up, before
// degeneration: SMT (its core `smt`), CLS, MC (`llc_span`), PKG; numa_levels() follow. powerpc's
// table names the level of the shared L2 CACHE (arch/powerpc/kernel/smp.c,
// build_sched_topology()): its MC is the coregroup, above the LLC and not in hwloc's topology.
std::vector<SchedDomain> levels_within_node(const Pu& pu, const ObjectSpans& spans,
                                            const std::vector<int>& smt,
                                            const std::vector<int>& llc_span,
                                            const std::string& llc_name) {
  std::vector<SchedDomain> levels;
  levels.push_back({.name = "SMT", .span = smt, .share_llc = true, .imbalance_pct = 110});
  // CLS only where the cluster lies strictly inside the chosen LLC: a cluster at or above it is
  // not a scheduler cluster under that LLC.
  if (pu.cluster >= 0) {
    const auto& cls = spans.clusters.at(pu.cluster);
    if (cls.size() < llc_span.size() &&
        std::includes(llc_span.begin(), llc_span.end(), cls.begin(), cls.end())) {
      levels.push_back({.name = "CLS", .span = cls, .share_llc = true, .cluster = true});
    }
  }
  levels.push_back({.name = llc_name, .span = llc_span, .share_llc = true});
  // The PKG domain spans the PU's NUMA node (docs/policy-model.md#sched-domains); no node: the
  // package.
  levels.push_back({.name = "PKG",
                    .span = pu.numa >= 0 ? spans.nodes.at(pu.numa)
                                         : span_or_self(spans.packages, pu.package, pu.os)});
  return levels;
}

// build_sched_domain widens each level to include its child ("the CHILD domain spans more than
// the parent"); sd_parent_degenerate drops a level that spans no more than the kept child,
// sd_degenerate one that spans a single CPU.
std::vector<SchedDomain> degenerate(std::vector<SchedDomain> levels) {
  std::vector<SchedDomain> kept;
  for (auto& level : levels) {
    if (!kept.empty()) {
      const auto& child = kept.back().span;
      std::vector<int> merged;
      std::set_union(level.span.begin(), level.span.end(), child.begin(), child.end(),
                     std::back_inserter(merged));
      level.span = std::move(merged);
      if (level.span == child) continue;  // sd_parent_degenerate
    }
    if (level.span.size() <= 1) continue;  // sd_degenerate
    kept.push_back(std::move(level));
  }
  return kept;
}

}  // namespace

// What the hooks ask of one CPU, from its kept levels: sd_llc, the cluster span, the ids
// cpus_share_cache and cpus_share_resources compare (docs/policy-model.md#sched-domains).
SchedTopology::PerCpu SchedTopology::summarize(int cpu, std::vector<int> smt,
                                               std::vector<SchedDomain> domains) {
  PerCpu pc;
  pc.present = true;
  pc.smt = std::move(smt);
  pc.domains = std::move(domains);
  for (size_t i = 0; i < pc.domains.size(); ++i) {
    if (pc.domains[i].share_llc) pc.llc_index = static_cast<int>(i);
    if (pc.domains[i].cluster) pc.cluster = pc.domains[i].span;
  }
  pc.llc_id = pc.llc_index >= 0 ? pc.domains[pc.llc_index].span.front() : cpu;
  pc.share_id = pc.cluster.empty() ? pc.llc_id : pc.cluster.front();
  return pc;
}

SchedTopology::SchedTopology(Topology topo, LlcSource llc) : topo_(std::move(topo)), llc_(llc) {
  cpus_ = topo_.cpus();
  std::tie(reclaim_distance_, reclaim_reason_) = reclaim_distance_of(topo_);
  const ObjectSpans spans = object_spans(topo_.pus());
  const std::string llc_name = topo_.powerpc() ? "CACHE" : "MC";
  for (const auto& [core, span] : spans.cores) smt_active_ |= core >= 0 && span.size() >= 2;
  per_cpu_.resize(cpus_.empty() ? 0 : static_cast<std::size_t>(cpus_.back() + 1));
  for (const auto& pu : topo_.pus()) {
    std::vector<int> smt = span_or_self(spans.cores, pu.core, pu.os);
    const std::vector<int> llc_span = llc_span_of(pu, llc_, spans, smt, topo_.source());
    std::vector<SchedDomain> levels = levels_within_node(pu, spans, smt, llc_span, llc_name);
    for (auto& level : numa_levels(topo_, cpus_, pu.os, reclaim_distance_))
      levels.push_back(std::move(level));
    PerCpu pc = summarize(pu.os, std::move(smt), degenerate(std::move(levels)));
    cluster_active_ |= !pc.cluster.empty();
    per_cpu_[static_cast<std::size_t>(pu.os)] = std::move(pc);
  }
}

bool SchedTopology::has_cpu(int cpu) const {
  return cpu >= 0 && cpu < static_cast<int>(per_cpu_.size()) && per_cpu_[cpu].present;
}

const SchedTopology::PerCpu& SchedTopology::at(int cpu) const {
  if (!has_cpu(cpu)) {
    throw std::out_of_range("CPU " + std::to_string(cpu) + " is not in topology " + topo_.source());
  }
  return per_cpu_[static_cast<std::size_t>(cpu)];
}

const std::vector<SchedDomain>& SchedTopology::domains(int cpu) const { return at(cpu).domains; }
const std::vector<int>& SchedTopology::smt_mask(int cpu) const { return at(cpu).smt; }
const std::vector<int>& SchedTopology::cluster_span(int cpu) const { return at(cpu).cluster; }

const SchedDomain* SchedTopology::sd_llc(int cpu) const {
  const auto& pc = at(cpu);
  return pc.llc_index >= 0 ? &pc.domains[pc.llc_index] : nullptr;
}

int SchedTopology::llc_size(int cpu) const {
  const SchedDomain* sd = sd_llc(cpu);
  return sd ? static_cast<int>(sd->span.size()) : 1;
}

bool SchedTopology::cpus_share_cache(int a, int b) const {
  if (a == b) return true;
  if (!has_cpu(a) || !has_cpu(b)) return false;
  return at(a).llc_id == at(b).llc_id;
}

bool SchedTopology::cpus_share_resources(int a, int b) const {
  if (a == b) return true;
  if (!has_cpu(a) || !has_cpu(b)) return false;
  return at(a).share_id == at(b).share_id;
}

// ---------------------------------------------------------------------------------------------

WakeContext::WakeContext(const SchedTopology& sched, const WakeInput& in)
    : sched_(sched), in_(in), allowed_(static_cast<size_t>(sched.max_cpu() + 1), 0) {
  if (in_.allowed.empty()) {
    for (int c : sched.cpus()) allowed_[c] = 1;
  } else {
    for (int c : in_.allowed) {
      if (sched.has_cpu(c)) allowed_[c] = 1;
    }
  }
  nr_allowed_ = static_cast<int>(std::count(allowed_.begin(), allowed_.end(), 1));
}

int WakeContext::nr_running(int cpu) const {
  auto it = in_.nr_running.find(cpu);
  return it == in_.nr_running.end() ? 0 : it->second;
}

int WakeContext::nr_delayed(int cpu) const {
  auto it = in_.delayed.find(cpu);
  return it == in_.delayed.end() ? 0 : it->second;
}

bool WakeContext::allowed(int cpu) const {
  return cpu >= 0 && cpu < static_cast<int>(allowed_.size()) && allowed_[cpu];
}

int WakeContext::nr_allowed() const { return nr_allowed_; }

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
    return {cpu, rule_, join(steps_, "; "), recent_after_, waker_flips_, idle_cores_cleared_};
  }

 private:
  void note(std::string s) { steps_.push_back(std::move(s)); }
  // The branch that returns `cpu` (a later one, select_fallback_rq, overrides it).
  int chose(DecisionRule rule, int cpu) {
    rule_ = rule;
    return cpu;
  }
  static std::string n(int cpu) { return std::to_string(cpu); }
  // The recorded hint of target's LLC, if a decision record gave one.
  const WakeInput::LlcHint* llc_hint(int target) const {
    for (const WakeInput::LlcHint& h : in_.llc_hints)
      if (sched_.cpus_share_cache(h.cpu, target)) return &h;
    return nullptr;
  }

  // kernel/sched/core.c try_to_wake_up() -> select_task_rq() (policy-model.md#bypasses).
  int try_to_wake_up() {
    if (in_.wakee_queued) {
      note("ttwu_runnable: wakee still queued on prev -> " + n(in_.prev));
      return chose(DecisionRule::kTtwuRunnable, in_.prev);
    }
    if (in_.features.ttwu_queue && in_.wakee_on_cpu && ttwu_queue_cond()) {
      note("ttwu_queue_wakelist: wakee still on prev " + n(in_.prev) + ", queued there");
      return chose(DecisionRule::kTtwuQueueWakelist, in_.prev);
    }
    if (ctx_.nr_allowed() == 1) {
      int only = ctx_.first_allowed();
      note("select_task_rq: nr_cpus_allowed == 1 -> " + n(only));
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
    note("select_fallback_rq: " + n(chosen) + " not allowed -> " + n(fallback));
    return fallback;
  }

  // select_task_rq_fair() (policy-model.md#select-task-rq-fair) with the policy hooks at the
  // patches' places.
  int select_task_rq_fair() {
    const int cpu = in_.waker;
    const int prev = in_.prev;
    // record_wakee(): the waker's flips grow when it wakes someone new.
    if (!in_.waker_last_wakee_is_wakee) ++waker_flips_;
    if ((in_.current_cpu || policy_.wake_carries_current_cpu()) && ctx_.allowed(cpu)) {
      note(std::string(in_.current_cpu ? "WF_CURRENT_CPU" : "WF_CURRENT_CPU (handoff)") +
           " -> waker " + n(cpu));
      return chose(DecisionRule::kCurrentCpu, cpu);
    }
    if (auto r = policy_.before_domain_walk(ctx_)) {
      note(std::string(policy_.id()) + ": sync, waker rq nr_running < 2 -> waker " + n(*r));
      return chose(DecisionRule::kBeforeDomainWalk, *r);
    }
    bool wide = wake_wide();
    bool want_affine = !wide && ctx_.allowed(cpu);
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
          note("waker == prev (" + sd.name + ")");
        }
        if (auto r = policy_.after_wake_affine(ctx_, new_cpu)) {
          note(std::string(policy_.id()) + ": reciprocal sync, waker alone, no SMT -> waker " +
               n(*r));
          return chose(DecisionRule::kAfterWakeAffine, *r);
        }
        break;
      }
      // No level sets SD_BALANCE_WAKE by default, so the slow path is never taken.
      if (!want_affine) break;
    }
    if (want_affine && !affine_hit) note("no SD_WAKE_AFFINE level spans prev " + n(prev));

    bool sync_gate = want_affine && in_.sync && new_cpu == cpu && ctx_.alone(cpu);
    return select_idle_sibling(prev, new_cpu, sync_gate);
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
    note("wake_affine(" + sd.name + ") " + how + " -> " + n(r));
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
  int select_idle_sibling(int prev, int target, bool sync_gate) {
    const int cpu = in_.waker;
    if (ctx_.idle(target)) {
      note("SIS target " + n(target) + " idle");
      return chose(DecisionRule::kSisTarget, target);
    }
    int prev_aff = -1;
    if (prev != target && sched_.cpus_share_cache(prev, target) && ctx_.idle(prev)) {
      if (!sched_.cluster_active() || sched_.cpus_share_resources(prev, target)) {
        note("SIS prev " + n(prev) + " idle, shares LLC");
        return chose(DecisionRule::kSisPrev, prev);
      }
      prev_aff = prev;
    }
    if (in_.waker_kthread && in_.in_task && prev == cpu && ctx_.nr_running(cpu) <= 1) {
      note("SIS per-CPU kthread waker, stack on prev " + n(prev));
      return chose(DecisionRule::kSisKthread, prev);
    }
    int recent = in_.recent_used_cpu;
    recent_after_ = prev;
    if (recent >= 0 && recent != prev && recent != target && usable(recent) &&
        sched_.cpus_share_cache(recent, target) && ctx_.idle(recent) && ctx_.allowed(recent)) {
      if (!sched_.cluster_active() || sched_.cpus_share_resources(recent, target)) {
        note("SIS recent_used_cpu " + n(recent) + " idle");
        return chose(DecisionRule::kSisRecent, recent);
      }
    } else {
      recent = -1;
    }
    const SchedDomain* sd = sched_.sd_llc(target);
    if (!sd) {
      note("SIS no LLC domain -> target " + n(target));
      return chose(DecisionRule::kSisNoLlc, target);
    }
    bool has_idle_core = false;
    if (sched_.smt_active()) {
      const WakeInput::LlcHint* hint = llc_hint(target);
      has_idle_core = hint                 ? hint->has_idle_cores
                      : in_.has_idle_cores ? *in_.has_idle_cores
                                           : has_idle_cores_in(ctx_, target);
      if (!has_idle_core && sched_.cpus_share_cache(prev, target)) {
        if (auto i = select_idle_smt(*sd, prev)) {
          note("SIS select_idle_smt(prev " + n(prev) + ") -> " + n(*i));
          return chose(DecisionRule::kSisSmt, *i);
        }
      }
      if (sync_gate && policy_.sync_core_hook() == SyncCoreHook::kSiblingFirst) {
        if (auto i = select_idle_sync_core(*sd, target)) {
          note(std::string(policy_.id()) + ": select_idle_sync_core -> " + n(*i));
          return chose(DecisionRule::kSisSyncCore, *i);
        }
      }
    }
    int sync_cpu =
        (sync_gate && policy_.sync_core_hook() == SyncCoreHook::kIdleCoreScan) ? cpu : -1;
    if (auto i = select_idle_cpu(*sd, has_idle_core, target, sync_cpu))
      return chose(DecisionRule::kSisIdleCpu, *i);
    if (prev_aff >= 0) {
      note("SIS fallback prev_aff " + n(prev_aff));
      return chose(DecisionRule::kSisPrevAff, prev_aff);
    }
    if (recent >= 0) {
      note("SIS fallback recent_used_cpu " + n(recent));
      return chose(DecisionRule::kSisRecentFallback, recent);
    }
    note("SIS nothing idle -> target " + n(target));
    return chose(DecisionRule::kSisTargetFallback, target);
  }

  std::optional<int> select_idle_smt(const SchedDomain& sd, int prev) const {
    for (int c : sched_.smt_mask(prev)) {
      if (c == prev || !ctx_.allowed(c) || !contains(sd.span, c)) continue;
      if (ctx_.idle(c)) return c;
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
                                      int sync_cpu) const {
    bool idle = true;
    for (int c : sched_.smt_mask(core)) {
      bool sync_waker = c == sync_cpu;
      if (!ctx_.idle(c) && !sync_waker) {
        idle = false;
        if (idle_cpu == -1) continue;
        break;
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
          note(std::string("SIS select_idle_cpu") + (prepass ? "(cluster)" : "") +
               ": idle core at " + n(*r) + (sync_cpu >= 0 ? " (waker counted idle)" : ""));
          return r;
        }
      } else {
        if (--nr <= 0) {
          note("SIS select_idle_cpu: SIS_UTIL budget exhausted");
          idle_cpu = -1;
          done = true;
          return std::nullopt;
        }
        if (ctx_.idle(c)) {
          idle_cpu = c;
          if (prepass) {
            note("SIS select_idle_cpu(cluster): idle " + n(c));
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
      note(std::string("SIS select_idle_cpu") + (has_idle_core ? " idle thread " : ": idle ") +
           n(idle_cpu));
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
  int idle_cores_cleared_ = -1;
};

}  // namespace

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
