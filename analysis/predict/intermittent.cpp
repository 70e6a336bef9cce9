// The intermittent background's chain (analysis/predict/intermittent.h): phases walked with the
// steady state's walks (analysis/predict/steady_walks.h), one set of walks per phase kind.
#include "analysis/predict/intermittent.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "analysis/predict/steady_walks.h"

namespace wb {

namespace {

using namespace steady;  // NOLINT(google-build-using-namespace): the walks this file follows

constexpr int kMaxPhaseStates = 4096;  // a chain larger than this is reported unsettled
constexpr int kMaxIterations = 20000;  // power iterations before the shares are taken as they are

// A phase: walked from its first state for `length` wakes; what its wakes were, and the state it
// hands to the next phase (a number in the other kind's walks).
struct Phase {
  int wakes = 0;
  std::map<PlacementClass, int> classes;
  std::map<int, int> visits;  // state number (in this kind's walks) -> wakes from it
  std::set<int> cpus;
  int next = -1;  // the next phase's chain state
};

// The two kinds of phase (0 busy, 1 idle) of one policy: their options and walks.
struct Kinds {
  Kinds(const SchedTopology& sched, const SteadyOptions& busy, const SteadyOptions& idle)
      : opt{busy, idle}, memo{PooledMemo(sched, busy), PooledMemo(sched, idle)} {}
  std::array<SteadyOptions, 2> opt;
  std::array<PooledMemo, 2> memo;
  Walks& walks(int k) { return walks_for(*memo[k], opt[k]); }
};

// The chain: its states (a kind and a state number of that kind's walks), each with the phases
// that can follow from it (lengths n and n + 1).
struct Chain {
  std::vector<std::pair<int, int>> states;
  std::map<std::pair<int, int>, int> number;
  std::vector<std::array<Phase, 2>> phases;
  int add(int kind, int state) {
    auto [it, fresh] = number.try_emplace({kind, state}, static_cast<int>(states.size()));
    if (fresh) states.emplace_back(kind, state);
    return it->second;
  }
};

// The pair's state `s` of kind `from`'s walks, numbered in kind `to`'s: its hints renumbered, and
// when the busy CPUs stop, each that goes idle with its whole core idle (the running task, whose
// turn it is, elsewhere) sets its LLC's has_idle_cores hint.
int carry(const SchedTopology& sched, Kinds& k, int from, int to, int s) {
  PairState st = k.walks(from).state(s);
  const auto span = k.walks(from).hints(st.hints);
  LlcHints hints(span.begin(), span.end());
  if (from == 0 && to == 1 && !hints.empty()) {
    const std::vector<int>& busy = k.opt[0].busy;
    for (int b : busy) {
      const std::vector<int>& core = sched.smt_mask(b);
      const bool idle = std::none_of(core.begin(), core.end(), [&](int c) {
        return c == st.cpu[st.turn] || std::find(busy.begin(), busy.end(), c) != busy.end();
      });
      if (idle && sched.sd_llc(b)) steady::set_hint(hints, sched.sd_llc(b)->span.front(), true);
    }
  }
  st.hints = k.walks(to).hints_number(hints);
  return k.walks(to).number(st);
}

// Walks `length` wakes from state `s` of kind `kind`. Once a state repeats within the phase the
// rest is that cycle over and over: counted whole, then walked for the remainder.
Phase walk_phase(const SchedTopology& sched, const WakeupPolicy& policy, Kinds& k, int kind, int s,
                 int length) {
  Phase ph;
  Walks& walks = k.walks(kind);
  std::map<int, std::size_t> at;          // state -> the index of the wake from it in `met`
  std::vector<std::pair<int, Wake>> met;  // each wake walked: its state and what it was
  auto count = [&](const std::pair<int, Wake>& w, int times) {
    ph.classes[w.second.cls] += times;
    ph.visits[w.first] += times;
    ph.cpus.insert({w.second.waker, w.second.cpu});
  };
  while (ph.wakes < length) {
    if (auto [it, fresh] = at.try_emplace(s, met.size()); !fresh) {
      const int cycle = static_cast<int>(met.size() - it->second);
      const int times = (length - ph.wakes) / cycle;
      for (std::size_t i = it->second; i < met.size(); ++i) count(met[i], times);
      ph.wakes += times * cycle;
      at.clear();  // the remainder, shorter than the cycle, is walked
      if (ph.wakes == length) break;
      at.emplace(s, met.size());
    }
    const Step& st =
        step(sched, k.opt[kind], policy, s, false, false, walks, (*k.memo[kind]).buffer);
    met.emplace_back(s, st.wake);
    count(met.back(), 1);
    ++ph.wakes;
    s = st.next;
  }
  ph.next = s;
  return ph;
}

// Every chain state reachable from the first (a busy phase from the start), breadth first.
// `lengths[kind]`: the shorter length of that kind's phases; without `alternate` a busy phase
// follows a busy phase. False when the chain grows too large.
bool build_chain(const SchedTopology& sched, const WakeupPolicy& policy, Kinds& k,
                 const std::array<int, 2>& lengths, bool alternate, int first, Chain& chain) {
  chain.add(0, first);
  for (std::size_t n = 0; n < chain.states.size(); ++n) {
    if (chain.states.size() > kMaxPhaseStates) return false;
    const auto [kind, s] = chain.states[n];
    std::array<Phase, 2> both;
    for (int extra : {0, 1}) {
      Phase ph = walk_phase(sched, policy, k, kind, s, lengths[kind] + extra);
      const int other = alternate ? 1 - kind : kind;
      ph.next = chain.add(other, carry(sched, k, kind, other, ph.next));
      both[extra] = std::move(ph);
    }
    chain.phases.push_back(std::move(both));
  }
  return true;
}

// The chain's long-run weight of each state: power iteration from the first state, averaged over
// consecutive steps (the phases alternate, so the chain is periodic). Settled when an average
// moves less than 1e-12.
std::pair<std::vector<double>, bool> stationary(const Chain& chain) {
  const std::size_t n = chain.states.size();
  std::vector<double> x(n, 0.0), avg(n, 0.0);
  x[0] = 1.0;
  for (int it = 0; it < kMaxIterations; ++it) {
    std::vector<double> y(n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (const Phase& ph : chain.phases[i]) y[static_cast<std::size_t>(ph.next)] += 0.5 * x[i];
    double moved = 0;
    std::vector<double> next_avg(n);
    for (std::size_t i = 0; i < n; ++i) {
      next_avg[i] = 0.5 * (x[i] + y[i]);
      moved += std::abs(next_avg[i] - avg[i]);
    }
    avg = std::move(next_avg);
    x = std::move(y);
    if (it > 0 && moved < 1e-12) return {avg, true};
  }
  return {avg, false};
}

// Whether `other` chooses another CPU than `own` did from state `s` of kind `kind`.
bool differs(const SchedTopology& sched, Kinds& k, int kind, int s, const WakeupPolicy& other,
             const Step& own) {
  Walks& walks = k.walks(kind);
  const PairState& st = walks.state(s);
  const WakeInput& in =
      next_wake(st, walks.hints(st.hints), k.opt[kind], false, (*k.memo[kind]).buffer);
  return predict_wakeup(sched, in, other).cpu != own.wake.cpu;
}

IntermittentResult one_policy(const SchedTopology& sched, const SteadyOptions& opt,
                              const std::vector<const WakeupPolicy*>& policies, std::size_t p,
                              const std::array<int, 2>& lengths, bool alternate) {
  SteadyOptions idle = opt;
  idle.busy.clear();
  Kinds k(sched, opt, idle);
  const WakeupPolicy& policy = *policies[p];
  const int first_hints = k.walks(0).hints_number(first_idle_cores(sched, opt));
  const int first = k.walks(0).number({.cpu = {*opt.start_a, *opt.start_b},
                                       .recent = {*opt.start_a, *opt.start_b},
                                       .hints = first_hints});
  Chain chain;
  IntermittentResult r;
  r.policy = std::string(policy.id());
  r.differ.assign(policies.size(), 0.0);
  if (!build_chain(sched, policy, k, lengths, alternate, first, chain)) return r;
  const auto [weight, settled] = stationary(chain);
  r.settled = settled;
  double wakes = 0;
  std::set<int> cpus;
  for (std::size_t i = 0; i < chain.states.size(); ++i) {
    if (weight[i] < 1e-12) continue;
    const int kind = chain.states[i].first;
    for (const Phase& ph : chain.phases[i]) {
      const double w = 0.5 * weight[i];
      wakes += w * ph.wakes;
      for (const auto& [cls, n] : ph.classes) r.classes[cls] += w * n;
      cpus.insert(ph.cpus.begin(), ph.cpus.end());
      for (const auto& [s, n] : ph.visits) {
        const Step& own = *k.walks(kind).step(s, false);
        for (std::size_t q = 0; q < policies.size(); ++q)
          if (q != p && differs(sched, k, kind, s, *policies[q], own)) r.differ[q] += w * n;
      }
    }
  }
  for (auto& [cls, share] : r.classes) share /= wakes;
  for (double& d : r.differ) d /= wakes;
  r.cpus.assign(cpus.begin(), cpus.end());
  return r;
}

}  // namespace

std::vector<IntermittentResult> simulate_intermittent(
    const SchedTopology& sched, const SteadyOptions& given,
    const std::vector<const WakeupPolicy*>& policies, const Intermittent& load) {
  if (load.duty < 1 || load.duty > 100)
    throw std::invalid_argument("intermittent: duty " + std::to_string(load.duty) +
                                " is not a percentage of 1 to 100");
  if (load.period_wakes < 2)
    throw std::invalid_argument("intermittent: a period of " + std::to_string(load.period_wakes) +
                                " wakes is shorter than one round trip (2)");
  SteadyOptions opt = given;
  if (!opt.start_a || !opt.start_b) {
    const auto [a, b] = default_start_pair(sched, opt.allowed);
    opt.start_a = opt.start_a.value_or(a);
    opt.start_b = opt.start_b.value_or(b);
  }
  for (int c : opt.busy)
    if (!sched.has_cpu(c))
      throw std::invalid_argument("intermittent: busy CPU " + std::to_string(c) +
                                  " is not in topology " + sched.topology().source());
  // Busy for `duty` percent of the period's wakes (at least one), idle for the rest (at least
  // one); at duty 100, or with nothing busy, one phase kind follows itself.
  const int busy_wakes =
      std::clamp(static_cast<int>(std::lround(load.duty / 100.0 * load.period_wakes)), 1,
                 load.period_wakes - (load.duty < 100 ? 1 : 0));
  const std::array<int, 2> lengths = {busy_wakes, std::max(1, load.period_wakes - busy_wakes)};
  const bool alternate = load.duty < 100 && !opt.busy.empty();
  std::vector<IntermittentResult> out;
  for (std::size_t p = 0; p < policies.size(); ++p)
    out.push_back(one_policy(sched, opt, policies, p, lengths, alternate));
  return out;
}

int period_wakes(int period_ms, double round_trip_us) {
  return std::max(2, static_cast<int>(std::lround(2 * period_ms * 1000 / round_trip_us)));
}

void put_mixes(std::vector<SteadyResult>& steady, std::vector<IntermittentResult>& mixes) {
  for (std::size_t p = 0; p < steady.size() && p < mixes.size(); ++p) {
    SteadyResult& r = steady[p];
    r.settled = mixes[p].settled;
    r.transient_wakes = r.cycle_wakes = 0;
    r.classes = std::move(mixes[p].classes);
    r.cpus = std::move(mixes[p].cpus);
  }
}

}  // namespace wb
