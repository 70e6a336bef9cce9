// What the wakeup model reads of CPU ids, and the renamings that keep it
// (docs/policy-model.md#search-symmetry).
#include "analysis/model/symmetry.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace wb {

namespace {

std::string cpu_text(int c) { return "CPU " + std::to_string(c); }

std::string span_text(const std::vector<int>& span) {
  return "CPUs " + std::to_string(span.front()) + ".." + std::to_string(span.back()) + " (" +
         std::to_string(span.size()) + ")";
}

// The images of `cpus`, in their order.
std::vector<int> mapped(const std::vector<int>& cpus, const CpuMap& m) {
  std::vector<int> out;
  out.reserve(cpus.size());
  for (int c : cpus) out.push_back(m[c]);
  return out;
}

// The image of a span, sorted.
std::vector<int> image(const std::vector<int>& span, const CpuMap& m) {
  std::vector<int> out = mapped(span, m);
  std::sort(out.begin(), out.end());
  return out;
}

// `m` maps the topology's CPUs one to one onto themselves.
std::string permutation_violation(const SchedTopology& sched, const CpuMap& m) {
  if (m.size() != static_cast<std::size_t>(sched.max_cpu() + 1))
    return "the renaming has " + std::to_string(m.size()) + " ids, the topology " +
           std::to_string(sched.max_cpu() + 1);
  std::vector<char> hit(m.size(), 0);
  for (int c : sched.cpus()) {
    const int t = m[c];
    if (t < 0 || t >= static_cast<int>(m.size()) || !sched.has_cpu(t) || hit[t])
      return "the renaming is not one to one on the topology's CPUs (" + cpu_text(c) + ")";
    hit[t] = 1;
  }
  return {};
}

// `m` keeps the partition of the CPUs that `label` makes. With `none_alone` a negative label
// means "in no such object" (the PU shares it with nobody) and must stay negative.
template <class Label>
std::string partition_violation(const SchedTopology& sched, const CpuMap& m, const char* what,
                                Label label, bool none_alone) {
  std::map<int, int> fwd, back;
  for (int c : sched.cpus()) {
    const int a = label(c), b = label(m[c]);
    if (none_alone && ((a < 0) != (b < 0)))
      return cpu_text(c) + " and its image " + cpu_text(m[c]) + " differ in having a " + what;
    if (none_alone && a < 0) continue;
    const auto [f, f_new] = fwd.emplace(a, b);
    const auto [r, r_new] = back.emplace(b, a);
    if ((!f_new && f->second != b) || (!r_new && r->second != a))
      return "the renaming splits or merges the " + std::string(what) + " of " + cpu_text(c);
  }
  return {};
}

// What classify() and cpus_share_cache()/cpus_share_resources() compare.
std::string partitions_violation(const SchedTopology& sched, const CpuMap& m) {
  const Topology& t = sched.topology();
  auto pu = [&](int c) { return *t.find(c); };
  auto llc_id = [&](int c) {
    const SchedDomain* sd = sched.sd_llc(c);
    return sd ? sd->span.front() : c;
  };
  auto share_id = [&](int c) {
    const std::vector<int>& cls = sched.cluster_span(c);
    return cls.empty() ? llc_id(c) : cls.front();
  };
  // classify() reads the NUMA nodes of two CPUs only when they share no LLC (cross-llc against
  // cross-numa); the sched domains that nodes span are checked in domains_violation(), and
  // select_fallback_rq(), which reads prev's node, never runs on a candidate. So a node whose
  // CPUs all share one LLC is never read: two CPUs that share no LLC are never both in it, and
  // one in it and one outside share no node, before and after a renaming that keeps the LLCs
  // and maps such nodes among themselves. Only the nodes that span CPUs of several LLCs (or
  // without one) must be kept; the SNC nodes inside one package-wide L3 (Sapphire Rapids SNC4,
  // Granite Rapids SNC3) are not, and their unequal sizes no longer forbid rotating the L3.
  std::map<int, int> node_llc;  // node -> its one LLC, or -2 when it spans several
  for (int c : sched.cpus()) {
    const int l = pu(c).llc >= 0 ? pu(c).llc : -2;
    const auto [it, fresh] = node_llc.emplace(pu(c).numa, l);
    if (!fresh && it->second != l) it->second = -2;
  }
  auto read_node = [&](int c) { return node_llc.at(pu(c).numa) == -2 ? pu(c).numa + 1 : -1; };
  for (const std::string& why :
       {partition_violation(
            sched, m, "core", [&](int c) { return pu(c).core; }, true),
        partition_violation(
            sched, m, "cluster", [&](int c) { return pu(c).cluster; }, true),
        partition_violation(
            sched, m, "LLC", [&](int c) { return pu(c).llc; }, true),
        partition_violation(sched, m, "NUMA node read by classify()", read_node, true),
        partition_violation(sched, m, "sd_llc", llc_id, false),
        partition_violation(sched, m, "sd_share_id", share_id, false)})
    if (!why.empty()) return why;
  return {};
}

// The image of CPU c's sched domains, core and cluster are those of its image.
std::string domains_violation(const SchedTopology& sched, const CpuMap& m, int c) {
  const std::vector<SchedDomain>& d = sched.domains(c);
  const std::vector<SchedDomain>& e = sched.domains(m[c]);
  const std::string who = cpu_text(c) + " and its image " + cpu_text(m[c]);
  if (d.size() != e.size()) return who + " have different sched domain levels";
  for (std::size_t i = 0; i < d.size(); ++i) {
    const SchedDomain &x = d[i], &y = e[i];
    if (x.name != y.name || x.share_llc != y.share_llc || x.cluster != y.cluster ||
        x.wake_affine != y.wake_affine || x.imbalance_pct != y.imbalance_pct)
      return who + " have different sched domain levels";
    if (image(x.span, m) != y.span) return who + " differ in their " + x.name + " span";
  }
  if (image(sched.smt_mask(c), m) != sched.smt_mask(m[c])) return who + " differ in their core";
  if (image(sched.cluster_span(c), m) != sched.cluster_span(m[c]))
    return who + " differ in their cluster";
  return {};
}

// The spans select_idle_cpu() walks from target + 1 around: every sd_llc, and the cluster of the
// pre-pass where sd_llc's child level is CLS.
std::set<std::vector<int>> scanned_spans(const SchedTopology& sched) {
  std::set<std::vector<int>> out;
  for (int c : sched.cpus()) {
    const SchedDomain* sd = sched.sd_llc(c);
    if (!sd) continue;
    out.insert(sd->span);
    const std::vector<SchedDomain>& doms = sched.domains(c);
    if (sched.cluster_active())
      for (std::size_t i = 1; i < doms.size(); ++i)
        if (&doms[i] == sd && doms[i - 1].cluster) out.insert(doms[i - 1].span);
  }
  return out;
}

// `m` maps the span's cyclic id order onto its image's (a rotation of it).
bool keeps_cyclic_order(const std::vector<int>& span, const CpuMap& m) {
  const std::vector<int> to = image(span, m);
  const std::size_t n = span.size();
  const std::size_t k = std::find(to.begin(), to.end(), m[span.front()]) - to.begin();
  for (std::size_t i = 0; i < n; ++i)
    if (m[span[i]] != to[(i + k) % n]) return false;
  return true;
}

// select_idle_smt(), select_idle_sync_core() and select_idle_core()'s fallback take the first
// fitting PU of a core in id order; with two PUs at most one other fits, with three or more the
// order decides.
std::string order_violation(const SchedTopology& sched, const CpuMap& m) {
  for (const std::vector<int>& span : scanned_spans(sched))
    if (!keeps_cyclic_order(span, m))
      return "the renaming breaks the cyclic order of the scanned span " + span_text(span);
  for (int c : sched.cpus()) {
    const std::vector<int>& core = sched.smt_mask(c);
    if (core.size() >= 3 && core.front() == c && image(core, m) != mapped(core, m))
      return "the renaming breaks the id order of the core " + span_text(core);
  }
  return {};
}

// The moved CPUs first, so that a proposal that fails usually fails at once.
std::vector<int> moved_first(const SchedTopology& sched, const CpuMap& m) {
  std::vector<int> out = sched.cpus();
  std::stable_partition(out.begin(), out.end(), [&](int c) { return m[c] != c; });
  return out;
}

}  // namespace

CpuMap identity_map(const SchedTopology& sched) {
  CpuMap m(static_cast<std::size_t>(sched.max_cpu() + 1), -1);
  for (int c : sched.cpus()) m[c] = c;
  return m;
}

std::string symmetry_violation(const SchedTopology& sched, const CpuMap& m, SymmetryRules rules) {
  if (std::string why = permutation_violation(sched, m); !why.empty()) return why;
  if (rules.ids_ordered && m != identity_map(sched))
    return "with the slow switch-out alternatives the model reads CPU ids in order: only the "
           "identity keeps it";
  for (int c : moved_first(sched, m))
    if (std::string why = domains_violation(sched, m, c); !why.empty()) return why;
  if (std::string why = partitions_violation(sched, m); !why.empty()) return why;
  return order_violation(sched, m);
}

namespace {

// The scanned spans with each CPU's position in them, for a check without sorting.
struct ScannedOrders {
  std::vector<std::vector<int>> spans, pos;  // pos[k][c]: c's place in spans[k], -1 if absent

  explicit ScannedOrders(const SchedTopology& sched) {
    for (const std::vector<int>& span : scanned_spans(sched)) {
      std::vector<int> p(static_cast<std::size_t>(sched.max_cpu() + 1), -1);
      for (std::size_t i = 0; i < span.size(); ++i) p[span[i]] = static_cast<int>(i);
      spans.push_back(span);
      pos.push_back(std::move(p));
    }
  }
  // False when a scanned span that `m` maps onto itself loses its cyclic order: what
  // keeps_cyclic_order() finds for such a span (the image is the span itself, so its k is the
  // place of m(first)), without sorting. symmetry_violation() refuses every `m` this refuses, so
  // asking this first changes no answer, only the time: most proposals on a machine whose scans
  // allow few rotations (Granite Rapids' unequal nodes) fail here.
  bool keeps(const CpuMap& m) const {
    for (std::size_t k = 0; k < spans.size(); ++k) {
      const std::vector<int>&span = spans[k], &p = pos[k];
      if (std::any_of(span.begin(), span.end(), [&](int c) { return p[m[c]] < 0; })) continue;
      const std::size_t n = span.size(), shift = static_cast<std::size_t>(p[m[span.front()]]);
      for (std::size_t i = 0; i < n; ++i)
        if (static_cast<std::size_t>(p[m[span[i]]]) != (i + shift) % n) return false;
    }
    return true;
  }
};

// Every distinct span a renaming could move as a whole: the domain spans, cores and clusters.
std::vector<std::vector<int>> blocks(const SchedTopology& sched) {
  std::set<std::vector<int>> all;
  for (int c : sched.cpus()) {
    for (const SchedDomain& d : sched.domains(c)) all.insert(d.span);
    if (sched.smt_mask(c).size() >= 2) all.insert(sched.smt_mask(c));
    if (sched.cluster_span(c).size() >= 2) all.insert(sched.cluster_span(c));
  }
  return {all.begin(), all.end()};
}

// The least rotation of `block` (the identity elsewhere) that keeps the model, if any: the
// rotations that do form a subgroup of the cyclic group, generated by its least element.
std::optional<CpuMap> least_rotation(const SchedTopology& sched, const std::vector<int>& block,
                                     SymmetryRules rules, const InTime& in_time,
                                     const ScannedOrders& orders) {
  const std::size_t n = block.size();
  for (std::size_t k = 1; k < n; ++k) {
    if (in_time && !in_time()) throw OutOfTime{};
    CpuMap m = identity_map(sched);
    for (std::size_t i = 0; i < n; ++i) m[block[i]] = block[(i + k) % n];
    if (orders.keeps(m) && symmetry_violation(sched, m, rules).empty()) return m;
  }
  return std::nullopt;
}

// Swaps of disjoint blocks of one size, i-th CPU to i-th CPU, nearest in id order first; a swap
// between blocks already joined by earlier ones adds nothing to the group and is not tried.
std::vector<CpuMap> block_swaps(const SchedTopology& sched,
                                const std::vector<std::vector<int>>& same_size, SymmetryRules rules,
                                const InTime& in_time, const ScannedOrders& orders) {
  std::vector<std::size_t> root(same_size.size());
  std::iota(root.begin(), root.end(), 0);
  auto find = [&](std::size_t x) {
    while (root[x] != x) x = root[x] = root[root[x]];
    return x;
  };
  std::vector<CpuMap> out;
  const std::size_t n = same_size.size();
  for (std::size_t d = 1; d < n; ++d)
    for (std::size_t i = 0; i + d < n; ++i) {
      const std::vector<int>&x = same_size[i], &y = same_size[i + d];
      if (find(i) == find(i + d)) continue;
      std::vector<int> both;
      std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(both));
      if (!both.empty()) continue;
      if (in_time && !in_time()) throw OutOfTime{};
      CpuMap m = identity_map(sched);
      for (std::size_t k = 0; k < x.size(); ++k) m[x[k]] = y[k], m[y[k]] = x[k];
      if (!orders.keeps(m) || !symmetry_violation(sched, m, rules).empty()) continue;
      root[find(i)] = find(i + d);
      out.push_back(std::move(m));
    }
  return out;
}

}  // namespace

std::vector<CpuMap> model_symmetries(const SchedTopology& sched, SymmetryRules rules,
                                     const InTime& in_time) {
  if (rules.ids_ordered) return {};
  const std::vector<std::vector<int>> all = blocks(sched);
  const ScannedOrders orders(sched);
  std::set<CpuMap> found;
  for (const std::vector<int>& b : all)
    if (auto m = least_rotation(sched, b, rules, in_time, orders)) found.insert(std::move(*m));
  std::map<std::size_t, std::vector<std::vector<int>>> by_size;
  for (const std::vector<int>& b : all) by_size[b.size()].push_back(b);
  for (auto& [size, same] : by_size) {
    std::sort(same.begin(), same.end());
    for (CpuMap& m : block_swaps(sched, same, rules, in_time, orders)) found.insert(std::move(m));
  }
  return {found.begin(), found.end()};
}

}  // namespace wb
