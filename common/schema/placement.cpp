// Placement classes and pair choice (docs/result-set.md#placement-classes; rules in placement.h).
#include "common/schema/placement.h"

#include <set>
#include <stdexcept>
#include <tuple>

namespace wb {
namespace {

constexpr std::array<std::string_view, 6> kClassIds = {"same-cpu", "smt-sibling", "cluster",
                                                       "llc",      "cross-llc",   "cross-numa"};

// First match wins, in docs/result-set.md's order. A -1 id means "no such object", never a match.
PlacementClass classify_pus(const Pu& a, const Pu& b) {
  if (a.os == b.os) return PlacementClass::kSameCpu;
  if (a.core >= 0 && a.core == b.core) return PlacementClass::kSmtSibling;
  if (a.cluster >= 0 && a.cluster == b.cluster) return PlacementClass::kCluster;
  if (a.llc >= 0 && a.llc == b.llc) return PlacementClass::kLlc;
  if (a.numa == b.numa) return PlacementClass::kCrossLlc;
  return PlacementClass::kCrossNuma;
}

// Why the machine has no pair of class `c` (called only when it has none).
std::string unavailable_reason(const Topology& topo, PlacementClass c) {
  const TopologyCounts n = topo.counts();
  switch (c) {
    case PlacementClass::kSameCpu:
      return "no CPUs";
    case PlacementClass::kSmtSibling:
      return "no SMT: 1 PU per core";
    case PlacementClass::kCluster:
      return "no cluster cache in any LLC";
    case PlacementClass::kLlc:
      return n.llcs == 0 ? "no L2 or L3 cache above the PUs" : "each LLC has one core";
    case PlacementClass::kCrossLlc:
      return n.llcs <= 1 ? "one LLC" : "each NUMA node has one LLC";
    case PlacementClass::kCrossNuma:
      return n.numa_nodes <= 1 ? "one NUMA node with CPUs"
                               : "all NUMA nodes with CPUs share one LLC";
  }
  return "unknown class";
}

// Units of the machine a set of pairs already covers, to spread further pairs away from them.
struct Used {
  std::set<int> cpus, cores, llcs, nodes;

  void add(const Pu& p) {
    cpus.insert(p.os);
    if (p.core >= 0) cores.insert(p.core);
    if (p.llc >= 0) llcs.insert(p.llc);
    nodes.insert(p.numa);
  }
  static int fresh(const std::set<int>& used, int a, int b) {
    int count = 0;
    if (a >= 0 && !used.count(a)) ++count;
    if (b >= 0 && b != a && !used.count(b)) ++count;
    return count;
  }
  // (new nodes, new LLCs, new cores): compared lexicographically.
  std::tuple<int, int, int> score(const Pu& a, const Pu& b) const {
    return {fresh(nodes, a.numa, b.numa), fresh(llcs, a.llc, b.llc), fresh(cores, a.core, b.core)};
  }
};

ClassPairs choose_for_class(const Topology& topo, PlacementClass c, int per_class) {
  ClassPairs result{c};
  const std::vector<Pu>& pus = topo.pus();
  Used used;
  while (static_cast<int>(result.pairs.size()) < per_class) {
    const Pu* best_a = nullptr;
    const Pu* best_b = nullptr;
    std::tuple<int, int, int> best_score{-1, -1, -1};
    for (const Pu& a : pus) {
      if (used.cpus.count(a.os)) continue;
      for (const Pu& b : pus) {
        if ((b.os != a.os && used.cpus.count(b.os)) || classify_pus(a, b) != c) continue;
        const auto s = used.score(a, b);
        if (s > best_score) {
          best_score = s;
          best_a = &a;
          best_b = &b;
        }
        // The first pair is the lowest waker with a partner and its lowest partner.
        if (result.pairs.empty()) break;
      }
      if (result.pairs.empty() && best_a != nullptr) break;
    }
    if (best_a == nullptr) break;
    result.pairs.emplace_back(best_a->os, best_b->os);
    used.add(*best_a);
    used.add(*best_b);
  }
  result.available = !result.pairs.empty();
  if (!result.available) result.reason = unavailable_reason(topo, c);
  return result;
}

}  // namespace

std::string_view class_id(PlacementClass c) { return kClassIds[static_cast<size_t>(c)]; }

std::optional<PlacementClass> parse_class(std::string_view id) {
  for (PlacementClass c : kAllClasses)
    if (class_id(c) == id) return c;
  return std::nullopt;
}

PlacementClass classify(const Topology& topo, int waker, int wakee) {
  const Pu* a = topo.find(waker);
  const Pu* b = topo.find(wakee);
  if (a == nullptr || b == nullptr)
    throw std::out_of_range("CPU " + std::to_string(a == nullptr ? waker : wakee) +
                            " is not in topology " + topo.source());
  return classify_pus(*a, *b);
}

std::vector<ClassPairs> choose_pairs(const Topology& topo, int per_class) {
  if (per_class < 1)
    throw std::invalid_argument("pairs per class must be at least 1, got " +
                                std::to_string(per_class));
  std::vector<ClassPairs> out;
  for (PlacementClass c : kAllClasses) out.push_back(choose_for_class(topo, c, per_class));
  return out;
}

nlohmann::ordered_json topology_json(const Topology& topo, const std::vector<ClassPairs>& classes) {
  const TopologyCounts n = topo.counts();
  const SmtInfo smt = topo.smt();
  nlohmann::ordered_json j;
  j["source"] = topo.source();
  j["counts"] = {{"pus", n.pus},   {"cores", n.cores},           {"l2_groups", n.l2_groups},
                 {"llcs", n.llcs}, {"numa_nodes", n.numa_nodes}, {"packages", n.packages}};
  j["smt"] = {{"width", smt.width}, {"numbering", smt.numbering}, {"stride", smt.stride}};
  j["classes"] = nlohmann::ordered_json::array();
  for (const ClassPairs& cp : classes) {
    nlohmann::ordered_json c;
    c["class"] = class_id(cp.cls);
    c["available"] = cp.available;
    if (cp.available) {
      c["pairs"] = nlohmann::ordered_json::array();
      for (const auto& [waker, wakee] : cp.pairs) c["pairs"].push_back({waker, wakee});
    } else {
      c["reason"] = cp.reason;
    }
    j["classes"].push_back(std::move(c));
  }
  return j;
}

}  // namespace wb
