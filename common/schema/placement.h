// Placement classes (docs/result-set.md#placement-classes) and the deterministic choice of pairs.
//
// Cluster rule (Pu::cluster): a PU's cluster is the innermost object strictly between its Core and
// its LLC that is either a cache (e.g. an L2) or an hwloc Group of subtype "Cluster", and that
// holds more than one core but not every core of that LLC. Examples: Raptor Lake's E-core L2
// shared by 4 cores under the 14-core L3; Kunpeng 920's 4-core clusters (hwloc Groups from sysfs
// cluster_cpus, the ids the kernel's CLS sched domain is built from) under a 32-core L3. Not a
// cluster: a per-core L2 (one core), POWER9's L2 spanning the same core pair as its L3 (all cores
// of the LLC), an SNC Group (neither a cache nor a Cluster group).
//
// Reasons for an unavailable class (ClassPairs::reason):
//   smt-sibling  "no SMT: 1 PU per core"
//   cluster      "no cluster cache in any LLC" (a cache shared by some, not all, cores of an LLC)
//   llc          "each LLC has one core" | "no L2 or L3 cache above the PUs"
//   cross-llc    "one LLC" | "each NUMA node has one LLC"
//   cross-numa   "one NUMA node with CPUs" | "all NUMA nodes with CPUs share one LLC"
//   same-cpu is available on any topology (it has at least one PU).
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/system/topology.h"

namespace wb {

enum class PlacementClass { kSameCpu, kSmtSibling, kCluster, kLlc, kCrossLlc, kCrossNuma };
inline constexpr std::array<PlacementClass, 6> kAllClasses = {
    PlacementClass::kSameCpu, PlacementClass::kSmtSibling, PlacementClass::kCluster,
    PlacementClass::kLlc,     PlacementClass::kCrossLlc,   PlacementClass::kCrossNuma};

std::string_view class_id(PlacementClass c);  // "same-cpu", "smt-sibling", ...
std::optional<PlacementClass> parse_class(std::string_view id);

// Class of `wakee` relative to `waker`, first match wins: same-cpu > smt-sibling > cluster > llc >
// cross-llc > cross-numa. Both CPUs must be in the topology (throws std::out_of_range otherwise).
PlacementClass classify(const Topology& topo, int waker, int wakee);

// A case's placement: pinned on a pair of a placement class ("llc"), placed by the kernel
// ("kernel", "kernel:<class>", "kernel:<cpu list>"), or one pinned cell of a CPU x CPU matrix run
// ("cpu:<a>,<b>"). Only kernel placement leaves the tasks unpinned.
enum class PlacementKind { kPinned, kKernel, kMatrix };

// [waker, wakee] OS indexes.
using CpuPair = std::pair<int, int>;

struct ClassPairs {
  PlacementClass cls;
  bool available = false;
  std::string reason;          // why unavailable, e.g. "no SMT: 1 PU per core"
  std::vector<CpuPair> pairs;  // up to the requested count, deterministic
};

// For every class (in kAllClasses order): up to `per_class` pairs, spread over different cores /
// LLCs / nodes when per_class > 1. The first pair's waker is the lowest CPU that has a partner of
// that class and its wakee the lowest such partner. Each further pair shares no CPU with the
// pairs before it and is the first one (in (waker, wakee) order) that touches the most NUMA nodes
// not used yet, then the most unused LLCs, then the most unused cores. Fewer pairs come back when
// the machine has fewer CPU-disjoint pairs of that class. Throws std::invalid_argument if
// per_class < 1.
std::vector<ClassPairs> choose_pairs(const Topology& topo, int per_class = 1);

// The summary `wakebench topology --json` prints and result sets embed (docs/result-set.md):
// {"source", "counts": {...}, "smt": {"width", "numbering", "stride"}, "classes": [...]}.
// Ordered as the contract shows it; converts implicitly to nlohmann::json.
nlohmann::ordered_json topology_json(const Topology& topo, const std::vector<ClassPairs>& classes);

}  // namespace wb
