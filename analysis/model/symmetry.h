// Renamings of CPU ids that leave the wakeup model's answer unchanged
// (docs/policy-model.md#search-symmetry): they keep the scheduler's view of the topology (every
// CPU's sched domains, its core, cluster and LLC, the placement classes) and the orders the model
// reads CPU ids in: each idle scan's span walked cyclically from target + 1, and the PUs of a core
// of three or more walked from its first. `wakebench search` simulates one candidate per orbit of
// the group they generate (analysis/predict/search_orbits.h). Pure.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/model/policy_model.h"

namespace wb {

// A renaming: to[c] is the image of CPU c, for every id 0..max_cpu (-1 for ids not in the
// topology).
using CpuMap = std::vector<int>;

struct SymmetryRules {
  // The slow switch-out alternatives (slow_switch_out_applies()) send a stacked pair to the lowest
  // allowed CPU of each domain (the load balancer) and order those alternatives by CPU id: only
  // the identity keeps both.
  bool ids_ordered = false;
};

CpuMap identity_map(const SchedTopology& sched);

// Empty when `m` leaves the model's answer unchanged, else the first reason it does not (one line).
std::string symmetry_violation(const SchedTopology& sched, const CpuMap& m,
                               SymmetryRules rules = {});

// Thrown when the caller's `in_time` says the time is up (wakebench search --max-seconds).
struct OutOfTime {};
using InTime = std::function<bool()>;

// Generators of a group of such renamings, each checked by symmetry_violation(): per block (a
// domain span, a core, a cluster) its least rotation that keeps the model, and swaps of blocks of
// one size in id order. A subgroup of all the symmetries (fewer found: more orbits, same answer);
// none with rules.ids_ordered. `in_time`, when given, is asked before each renaming is checked.
std::vector<CpuMap> model_symmetries(const SchedTopology& sched, SymmetryRules rules = {},
                                     const InTime& in_time = {});

}  // namespace wb
