// SchedTopology: the sched domains a topology gives (analysis/model/sched_topology.h); rules and
// line anchors in docs/policy-model.md#sched-domains.
#include "analysis/model/sched_topology.h"

#include <algorithm>
#include <cctype>
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
    if (pc.llc_index >= 0) llc_ids_.push_back(pc.llc_id);
    per_cpu_[static_cast<std::size_t>(pu.os)] = std::move(pc);
  }
  std::sort(llc_ids_.begin(), llc_ids_.end());
  llc_ids_.erase(std::unique(llc_ids_.begin(), llc_ids_.end()), llc_ids_.end());
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

}  // namespace wb
