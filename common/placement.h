// Placement classes (DESIGN.md vocabulary) and the deterministic choice of CPU pairs per class.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/topology.h"

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

// [waker, wakee] OS indexes.
using CpuPair = std::pair<int, int>;

struct ClassPairs {
  PlacementClass cls;
  bool available = false;
  std::string reason;            // why unavailable, e.g. "no SMT: 1 PU per core"
  std::vector<CpuPair> pairs;    // up to the requested count, deterministic
};

// For every class: up to `per_class` pairs, spread over different cores / LLCs / nodes when
// per_class > 1. The first pair's waker is the lowest CPU that has a partner of that class and its
// wakee the lowest such partner.
std::vector<ClassPairs> choose_pairs(const Topology& topo, int per_class = 1);

}  // namespace wb
