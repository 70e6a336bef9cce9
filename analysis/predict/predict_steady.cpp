// Steady state (docs/policy-model.md#steady-state): iterate the model over alternating wakes
// of a pair until its state repeats, and report the placement classes of the repeating cycle.
// What the results become (words, groups, JSON, text): analysis/predict/predict_steady_render.cpp.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "analysis/predict/predict_results.h"
#include "analysis/predict/steady_walks.h"

namespace wb {

namespace {

using namespace steady;  // NOLINT(google-build-using-namespace): its walks are this file's

bool in_list(const std::vector<int>& list, int cpu) {
  return list.empty() || std::find(list.begin(), list.end(), cpu) != list.end();
}

// The CPUs the load balancer may move a task of a pair stacked on `cpu` to: per sched domain of
// `cpu`, the lowest allowed CPU it adds to the level below (that level's idle balance pulls it).
std::vector<int> balance_targets(const SchedTopology& sched, int cpu,
                                 const std::vector<int>& allowed) {
  std::vector<int> out;
  std::vector<int> below = {cpu};
  for (const auto& sd : sched.domains(cpu)) {
    for (int c : sd.span) {
      if (in_list(allowed, c) && std::find(below.begin(), below.end(), c) == below.end()) {
        out.push_back(c);
        break;
      }
    }
    below = sd.span;
  }
  return out;
}

}  // namespace

std::pair<int, int> default_start_pair(const SchedTopology& sched,
                                       const std::vector<int>& allowed) {
  std::vector<int> cpus;
  for (int c : sched.cpus()) {
    if (in_list(allowed, c)) cpus.push_back(c);
  }
  if (cpus.empty())
    throw std::invalid_argument("no allowed CPU in topology " + sched.topology().source());
  int a = cpus.front();
  const auto& core = sched.smt_mask(a);
  auto other_core = [&](int c) { return std::find(core.begin(), core.end(), c) == core.end(); };
  for (int c : cpus) {
    if (other_core(c) && sched.cpus_share_cache(a, c)) return {a, c};
  }
  for (int c : cpus) {
    if (c != a) return {a, c};
  }
  return {a, a};
}

namespace {

// Throws std::invalid_argument when one of `cpus` (the `what` CPUs) is not in the topology.
void check_in_topology(const SchedTopology& sched, const std::vector<int>& cpus,
                       const std::string& what) {
  for (int c : cpus) {
    if (!sched.has_cpu(c)) {
      throw std::invalid_argument(what + " CPU " + std::to_string(c) + " is not in topology " +
                                  sched.topology().source());
    }
  }
}

}  // namespace

namespace steady {

// The wake from state `s` with its `hints`: its waker wakes the other task under the options'
// flags, hogs and cpuset; a disturbed wake finds one more runnable task on the wakee's previous
// CPU. Filled into `buf`.
WakeInput& next_wake(const PairState& s, std::span<const std::pair<int, bool>> hints,
                     const SteadyOptions& opt, bool disturbed, WakeBuffer& buf) {
  const int w = s.turn, e = 1 - s.turn;
  WakeInput& in = buf.in;
  in.waker = s.cpu[w];
  in.prev = s.cpu[e];
  in.sync = opt.sync;
  in.current_cpu = opt.current_cpu;
  in.reciprocal = s.last_wakee_is_other[e];
  in.waker_last_wakee_is_wakee = s.last_wakee_is_other[w];
  std::vector<int>& nr_running = buf.nr_running;
  std::fill(nr_running.begin(), nr_running.end(), 0);
  nr_running[s.cpu[w]] = 1;
  for (int b : opt.busy) nr_running[b] += 1;
  if (disturbed) nr_running[s.cpu[e]] += 1;
  in.sched_idle.clear();
  if (opt.sched_idle && nr_running[s.cpu[w]] == 1) in.sched_idle.push_back(s.cpu[w]);
  in.recent_used_cpu = s.recent[e];
  in.has_idle_cores = opt.has_idle_cores;
  in.llc_hints.clear();
  for (const auto& [llc, set] : hints) in.llc_hints.push_back({llc, set, std::nullopt});
  in.waker_flips = s.flips[w];
  in.wakee_flips = s.flips[e];
  in.features = opt.features;
  return in;
}

// The LLC hints before the first wake: every one set. Before a case the machine idled, and each
// CPU that went idle with its whole core idle set its LLC's hint (update_idle_core()); nothing
// but a scan that finds no idle core clears it, and the hogs started after.
LlcHints first_idle_cores(const SchedTopology& sched, const SteadyOptions& opt) {
  LlcHints out;
  if (opt.has_idle_cores || !sched.smt_active()) return out;
  for (int llc : sched.llc_ids()) out.emplace_back(llc, true);
  return out;
}

// The hints after the wake `in` decided `d` (kernel/sched/fair.c): the scan that found no idle
// core cleared its LLC's (select_idle_cpu()); then the waker blocks, and its CPU, unless the
// wakee or a hog runs there, goes idle and sets its LLC's hint when every sibling is idle too
// (__update_idle_core()); after a disturbed wake, prev's CPU does the same once its extra task
// is done.
static void idle_cores_after(const SchedTopology& sched, const SteadyOptions& opt,
                             const WakeInput& in, const WakeDecision& d, bool disturbed,
                             LlcHints& hints) {
  if (hints.empty()) return;
  if (d.idle_cores_cleared >= 0)
    set_hint(hints, sched.sd_llc(d.idle_cores_cleared)->span.front(), false);
  auto busy = [&](int c) {
    return c == d.cpu || std::find(opt.busy.begin(), opt.busy.end(), c) != opt.busy.end();
  };
  auto goes_idle = [&](int cpu) {
    const SchedDomain* sd = sched.sd_llc(cpu);
    const auto& core = sched.smt_mask(cpu);
    if (sd && !busy(cpu) && std::none_of(core.begin(), core.end(), busy))
      set_hint(hints, sd->span.front(), true);
  };
  goes_idle(in.waker);
  if (disturbed) goes_idle(in.prev);
}

// The state after the wake from `s` decided `d`: the wakee on its CPU, and its turn to wake (its
// hints apart: idle_cores_after()).
static PairState after_wake(PairState s, const WakeDecision& d) {
  const int w = s.turn, e = 1 - s.turn;
  s.cpu[e] = d.cpu;
  s.recent[e] = d.wakee_recent_used_cpu;
  s.flips[w] = d.waker_flips;
  s.last_wakee_is_other[w] = true;
  s.turn = e;
  return s;
}

// The wake from state `n`, with its path when `explain`. Only a memo's first run explains, its
// first wakes, and those are new to the memo or met earlier in that run: never met unexplained.
const Step& step(const SchedTopology& sched, const SteadyOptions& opt, const WakeupPolicy& policy,
                 int n, bool disturbed, bool explain, Walks& walks, WakeBuffer& buffer) {
  if (const Step* met = walks.step(n, disturbed)) return *met;
  const PairState s = walks.state(n);  // a copy: numbering the next state may move the states
  WakeInput& in = next_wake(s, walks.hints(s.hints), opt, disturbed, buffer);
  in.explain = explain;
  WakeDecision d = predict_wakeup(sched, in, policy);
  Step out;
  out.wake = {classify(sched.topology(), in.waker, d.cpu), in.waker, in.prev, d.cpu};
  out.path = std::move(d.path);
  out.sites = d.sites;
  out.stacked = disturbed && d.cpu == in.waker && in.prev != in.waker;
  PairState next = after_wake(s, d);
  const auto hints = walks.hints(s.hints);
  buffer.hints.assign(hints.begin(), hints.end());
  idle_cores_after(sched, opt, in, d, disturbed, buffer.hints);
  next.hints = walks.hints_number(buffer.hints);
  out.next = walks.number(next);
  return walks.add(n, disturbed, std::move(out));
}

}  // namespace steady

namespace {

// Wakes the pair from `start` until its state repeats or opt.max_wakes: the result up to its
// classes, cpus and alternatives (first_paths only with `paths`), and the wakes that count (those
// after the disturbed wake, if one is; res.transient_wakes and res.cycle_wakes index them).
std::pair<SteadyResult, std::vector<Wake>> run_pair(const SchedTopology& sched,
                                                    const SteadyOptions& opt,
                                                    const WakeupPolicy& policy,
                                                    const std::array<int, 2>& start, bool paths,
                                                    StepMemo& memo) {
  SteadyResult res;
  res.policy = std::string(policy.id());
  Walks& walks = walks_for(memo, opt);
  const int first = walks.first_hints([&] { return first_idle_cores(sched, opt); });
  int s = walks.number({.cpu = start, .recent = start, .hints = first});
  walks.new_run();
  std::vector<Wake> wakes;
  for (int step_no = 0; step_no < opt.max_wakes; ++step_no) {
    const int index = static_cast<int>(wakes.size());
    if (const std::optional<int> from = walks.seen(s, index)) {
      res.settled = true;
      res.transient_wakes = *from;
      res.cycle_wakes = index - *from;
      break;
    }
    const bool disturbed = step_no == opt.disturb_wake;
    const bool explain = paths && res.first_paths.size() < 4;
    const Step& st = step(sched, opt, policy, s, disturbed, explain, walks, memo.buffer);
    if (explain) res.first_paths.push_back(st.path);
    wakes.push_back(st.wake);
    if (st.stacked) res.disturbed_stacked_on = st.wake.cpu;
    s = st.next;
    if (disturbed) {  // only what follows the disturbed wake counts
      walks.new_run();
      wakes.clear();
    }
  }
  if (!res.settled) {
    // No repeat within the budget: report the last half of the run as the tendency.
    res.transient_wakes = static_cast<int>(wakes.size() / 2);
    res.cycle_wakes = static_cast<int>(wakes.size()) - res.transient_wakes;
  }
  return {std::move(res), std::move(wakes)};
}

// The share of each placement class among the `count` wakes of the cycle from wakes[first], and
// the CPUs the pair occupies in it.
std::pair<std::map<PlacementClass, double>, std::vector<int>> cycle_placement(
    const std::vector<Wake>& wakes, int first, int count) {
  std::map<PlacementClass, double> classes;
  std::set<int> cpus;
  for (int i = first; i < first + count; ++i) {
    classes[wakes[i].cls] += 1.0 / count;
    cpus.insert(wakes[i].waker);
    cpus.insert(wakes[i].cpu);
  }
  return {std::move(classes), std::vector<int>(cpus.begin(), cpus.end())};
}

// simulate_steady_state() with the wakes met so far (the public one starts a memo); first_paths
// only with `paths` (the alternatives' runs keep none).
SteadyResult steady_state(const SchedTopology& sched, const SteadyOptions& opt,
                          const WakeupPolicy& policy, StepMemo& memo, bool paths = false);

// A disturbed wake at each wake of the settled cycle (`wakes`, from res.transient_wakes on):
// where the pair settles after it, and where it stays stacked when the wake stacks it.
std::vector<SteadyAlternative> after_disturbances(const SchedTopology& sched,
                                                  const SteadyOptions& opt,
                                                  const WakeupPolicy& policy,
                                                  const std::vector<Wake>& wakes,
                                                  const SteadyResult& res, StepMemo& memo) {
  using K = AltCause::Kind;
  std::vector<SteadyAlternative> found;
  SteadyOptions d = opt;
  d.try_disturbances = false;
  for (int k = 0; k < res.cycle_wakes; ++k) {
    d.disturb_wake = res.transient_wakes + k;
    const Wake& at = wakes[res.transient_wakes + k];
    const SteadyResult after = steady_state(sched, d, policy, memo);
    if (after.settled) {
      found.push_back(
          {{.kind = K::kBusyPrev, .waker = at.waker, .busy = at.prev}, after.classes, after.cpus});
    }
    // A wake that stacks the pair can leave it stacked for good: the wakee preempts the waker
    // at every wake, so the waker never blocks and needs no wake, and the wakee, blocking while
    // the waker is still queued, stays on that runqueue (EEVDF's delayed dequeue) and is woken
    // there (ttwu_runnable, docs/policy-model.md#bypasses): no selection ever splits them again.
    if (after.disturbed_stacked_on) {
      const int on = *after.disturbed_stacked_on;
      found.push_back({{.kind = K::kBusyPrevStays, .waker = at.waker, .busy = at.prev, .to = on},
                       {{PlacementClass::kSameCpu, 1.0}},
                       {on}});
    }
  }
  return found;
}

// With the LLC's has_idle_cores hint stale (false): it is set when a CPU goes idle with its whole
// core idle and cleared by a scan that found no idle core; stale, the scan takes an idle sibling
// where an idle core waits.
std::vector<SteadyAlternative> with_stale_idle_cores(const SchedTopology& sched,
                                                     const SteadyOptions& opt,
                                                     const WakeupPolicy& policy, StepMemo& memo) {
  SteadyOptions h = opt;
  h.has_idle_cores = false;
  h.try_disturbances = false;
  const SteadyResult stale = steady_state(sched, h, policy, memo);
  if (!stale.settled) return {};
  return {{{.kind = AltCause::Kind::kStaleIdleCores}, stale.classes, stale.cpus}};
}

// With a slow switch-out (SteadyOptions::slow_switch_out) every wake is queued on the partner's
// own CPU (p->on_cpu), so no selection ever moves the pair from CPUs `a` and `b`.
SteadyAlternative held(const Topology& topo, int a, int b, const AltCause& cause) {
  return {cause,
          {{classify(topo, a, b), 1.0}},
          a == b ? std::vector<int>{a} : std::vector<int>{std::min(a, b), std::max(a, b)}};
}

// A pair stacked on one CPU (`cpus` of the steady state, or of an alternative `kept` so far) has
// two runnable tasks there at every wake: the load balancer pulls one to an idle allowed CPU
// (which domain's balance gets there first is timing), and with a slow switch-out the wakes then
// keep it there (held()).
std::vector<SteadyAlternative> balancer_pulls(const SchedTopology& sched,
                                              const std::vector<int>& allowed,
                                              const std::vector<int>& cpus,
                                              const std::vector<SteadyAlternative>& kept) {
  std::set<int> stacked;
  if (cpus.size() == 1) stacked.insert(cpus.front());
  for (const auto& a : kept)
    if (a.cpus.size() == 1) stacked.insert(a.cpus.front());
  std::vector<SteadyAlternative> found;
  for (int from : stacked) {
    for (int to : balance_targets(sched, from, allowed)) {
      found.push_back(held(sched.topology(), from, to,
                           {.kind = AltCause::Kind::kBalancerPull, .from = from, .to = to}));
    }
  }
  return found;
}

// The other task wakes first: that start's steady state, and its own alternatives. Where the
// reversed start settles on the steady state's classes on other CPUs (a pair stacked elsewhere),
// what follows from there still counts.
std::vector<SteadyAlternative> after_reversed_start(const SchedTopology& sched,
                                                    const SteadyOptions& opt,
                                                    const WakeupPolicy& policy,
                                                    const std::array<int, 2>& start,
                                                    StepMemo& memo) {
  SteadyOptions r = opt;
  r.start_a = start[1];
  r.start_b = start[0];
  r.try_reverse = false;
  const SteadyResult reversed = steady_state(sched, r, policy, memo);
  std::vector<SteadyAlternative> found;
  if (reversed.settled) {
    found.push_back({{.kind = AltCause::Kind::kReversedStart, .from = start[1], .to = start[0]},
                     reversed.classes,
                     reversed.cpus});
  }
  for (const auto& a : reversed.alternatives) {
    AltCause then = a.cause;
    then.after_reversed = std::pair{start[1], start[0]};
    found.push_back({then, a.classes, a.cpus});
  }
  return found;
}

// The other steady states the pair can settle in (SteadyResult::alternatives,
// docs/policy-model.md#steady-state), each with its cause: after a disturbed wake of the settled
// cycle (`wakes`, from res.transient_wakes on), with a stale has_idle_cores hint, with a slow
// switch-out, and from the reversed start. Each distribution of classes counts once, under the
// first cause found, and never the steady state's own.
std::vector<SteadyAlternative> alternatives(const SchedTopology& sched, const SteadyOptions& opt,
                                            const WakeupPolicy& policy,
                                            const std::array<int, 2>& start,
                                            const std::vector<Wake>& wakes, const SteadyResult& res,
                                            StepMemo& memo) {
  std::vector<SteadyAlternative> kept;
  auto keep = [&](std::vector<SteadyAlternative> found) {
    for (auto& a : found) {
      auto same = [&](const SteadyAlternative& k) { return k.classes == a.classes; };
      if (a.classes != res.classes && std::none_of(kept.begin(), kept.end(), same))
        kept.push_back(std::move(a));
    }
  };
  keep(after_disturbances(sched, opt, policy, wakes, res, memo));
  if (sched.smt_active() && !opt.has_idle_cores)
    keep(with_stale_idle_cores(sched, opt, policy, memo));
  if (opt.slow_switch_out && opt.features.ttwu_queue) {  // no queueing by IPI without TTWU_QUEUE
    if (start[0] != start[1]) {
      keep({held(sched.topology(), start[0], start[1],
                 {.kind = AltCause::Kind::kHeldAtStart, .from = start[0], .to = start[1]})});
    }
    keep(balancer_pulls(sched, opt.allowed, res.cpus, kept));
  }
  if (opt.try_reverse) keep(after_reversed_start(sched, opt, policy, start, memo));
  return kept;
}

}  // namespace

bool slow_switch_out_applies(bool emulated, long long work_ns) {
  return emulated && work_ns < kSwitchOutWorkNs;
}

namespace {

SteadyResult steady_state(const SchedTopology& sched, const SteadyOptions& opt,
                          const WakeupPolicy& policy, StepMemo& memo, bool paths) {
  std::array<int, 2> start = {opt.start_a.value_or(-1), opt.start_b.value_or(-1)};
  if (!opt.start_a || !opt.start_b) {  // a quadratic walk: only when a start is missing
    auto [def_a, def_b] = default_start_pair(sched, opt.allowed);
    start = {opt.start_a.value_or(def_a), opt.start_b.value_or(def_b)};
  }
  check_in_topology(sched, {start[0], start[1]}, "start");
  check_in_topology(sched, opt.busy, "busy");
  auto [res, wakes] = run_pair(sched, opt, policy, start, paths, memo);
  std::tie(res.classes, res.cpus) = cycle_placement(wakes, res.transient_wakes, res.cycle_wakes);
  if (opt.try_disturbances && res.settled)
    res.alternatives = alternatives(sched, opt, policy, start, wakes, res, memo);
  return std::move(res);
}

}  // namespace

SteadyResult simulate_steady_state(const SchedTopology& sched, const SteadyOptions& opt,
                                   const WakeupPolicy& policy) {
  PooledMemo memo(sched, opt);
  return steady_state(sched, opt, policy, *memo, true);
}

namespace {

// Whether `policy` decides every wake of mainline's walks (`memo`, under `opt`) as mainline did:
// then its own walks are mainline's.
bool walks_as_mainline(const SchedTopology& sched, const SteadyOptions& opt,
                       const WakeupPolicy& policy, StepMemo& memo) {
  for (std::size_t k = 0; k < memo.walks.size(); ++k) {  // walks_for()'s order
    const Walks& walks = memo.walks[k];
    SteadyOptions o = opt;
    o.has_idle_cores = k == 0 ? std::nullopt : std::optional<bool>(k == 2);
    const bool alike = walks.all_steps([&](const PairState& s, bool disturbed, const Step& st) {
      const WakeInput& in = next_wake(s, walks.hints(s.hints), o, disturbed, memo.buffer);
      return decides_as(policy, WakeContext(sched, in), st.sites);
    });
    if (!alike) return false;
  }
  return true;
}

}  // namespace

std::vector<SteadyResult> simulate_steady_states(const SchedTopology& sched,
                                                 const SteadyOptions& opt,
                                                 const std::vector<const WakeupPolicy*>& policies) {
  const WakeupPolicy& mainline = policy_by_id("mainline");
  PooledMemo memo(sched, opt);
  const SteadyResult base = steady_state(sched, opt, mainline, *memo, false);
  std::vector<SteadyResult> out;
  for (const WakeupPolicy* p : policies) {
    if (p == &mainline || !p->acts_on(sched) || walks_as_mainline(sched, opt, *p, *memo)) {
      out.push_back(base);
      out.back().policy = std::string(p->id());
    } else {
      PooledMemo own(sched, opt);
      out.push_back(steady_state(sched, opt, *p, *own, false));
    }
  }
  return out;
}

std::vector<SteadyResult> simulate_steady_state(const SchedTopology& sched,
                                                const SteadyOptions& opt) {
  std::vector<SteadyResult> out;
  for (const auto* p : all_policies()) out.push_back(simulate_steady_state(sched, opt, *p));
  return out;
}

}  // namespace wb
