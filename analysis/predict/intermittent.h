// A pair beside a background that is busy part of the time (docs/policy-model.md#intermittent),
// from the case's config alone: the options' `busy` CPUs run a hog for `duty` percent of each
// period and nothing the rest, and a period holds `period_wakes` of the pair's wakes. Each phase
// (busy, then idle, then busy ...) is walked wake by wake with the policy's model, the pair's state
// (CPUs, recent_used_cpu, flips, has_idle_cores hints) carried across the switch; a phase lasts n
// or n + 1 wakes with equal chance, so switches meet either task's turn. The Markov chain over the
// states that begin a phase gives the share of the wakes per class, and, for each other policy,
// the share of the wakes it would have decided otherwise from the same states (the decisions that
// differ, counted on this policy's own wakes). Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/predict/predict.h"

namespace wb {

struct Intermittent {
  int duty = 50;           // percent of each period the busy CPUs are busy: 1..100 (100: always)
  int period_wakes = 200;  // the pair's wakes in one period (2 per round trip): >= 2
};

struct IntermittentResult {
  std::string policy;
  bool settled = false;                      // the chain's stationary shares were reached
  std::map<PlacementClass, double> classes;  // share of the wakes per class
  std::vector<int> cpus;                     // the CPUs the pair's wakes use
  // Per policy of the call, in its order: the share of this policy's wakes on which that policy's
  // model chooses another CPU (0 for itself).
  std::vector<double> differ;
};

// The period in the pair's wakes: 2 per round trip of `round_trip_us` in `period_ms`, at least 2.
// Where the round trip is not known (predict, search by default), kNominalRoundTripUs: the mix
// hardly moves with it once a phase is longer than a few wakes (docs/policy-model.md#intermittent).
inline constexpr double kNominalRoundTripUs = 100;
int period_wakes(int period_ms, double round_trip_us = kNominalRoundTripUs);

// Each of `policies` under `opt` (start, busy CPUs, flags, cpuset; its alternatives are not
// tried: the chain is the mix) with the busy CPUs intermittent. Without busy CPUs, or at duty 100,
// one phase never ends: the steady state's cycle, and its decisions that differ. Throws
// std::invalid_argument for a duty or period out of range, or a CPU the topology lacks.
std::vector<IntermittentResult> simulate_intermittent(
    const SchedTopology& sched, const SteadyOptions& opt,
    const std::vector<const WakeupPolicy*>& policies, const Intermittent& load);

// The steady states (one per policy, as simulate_intermittent() gave `mixes`) with each mix in
// place of the classes and CPUs, the alternatives kept: a disturbance other than the background (a
// kworker, a stale hint) can still move the pair where they say.
void put_mixes(std::vector<SteadyResult>& steady, std::vector<IntermittentResult>& mixes);

}  // namespace wb
