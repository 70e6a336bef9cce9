// The scheduler's view of a topology as the wakeup model reads it: the sched domains Linux builds
// from it (SMT -> CLS -> MC -> PKG -> NUMA, degenerate levels dropped) and which level is the LLC
// (docs/policy-model.md#sched-domains). Deterministic; the live host is read only by
// analysis/model/sched_live.cpp.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/system/topology.h"

namespace wb {

// Which hwloc object the scheduler's LLC (the span of sd_llc) is built from.
enum class LlcSource {
  kAuto,     // the PU's L3, else its L2 (docs/policy-model.md#llc)
  kL3,       // --llc-level L3
  kL2,       // --llc-level L2 (the Altra/POWER caveats of policy-model.md#llc)
  kCluster,  // debugfs says the highest SD_SHARE_LLC level is CLS (arm64 without a shared L3)
  kCore,     // debugfs says it is SMT (powerpc: LLC = one core)
};
// "L2" / "L3" / "cluster" (case-insensitive; cluster: the CLS span, as debugfs says of arm64
// without a cache shared above the cluster). Throws std::invalid_argument naming the value
// otherwise.
LlcSource parse_llc_level(std::string_view text);
std::string_view llc_source_name(LlcSource s);

// One (name, flags) pair per sched domain of one CPU, bottom-up, as debugfs prints them
// (/sys/kernel/debug/sched/domains/cpuN/domainM/{name,flags}). Returns the hwloc object the highest
// level carrying SD_SHARE_LLC (SD_SHARE_PKG_RESOURCES before 6.6) corresponds to: SMT -> kCore,
// CLS -> kCluster, MC/CACHE -> kAuto; nullopt when no level shares the LLC or a name is unknown.
std::optional<LlcSource> llc_source_from_domains(
    const std::vector<std::pair<std::string, std::string>>& domains);
// One sched domain level of one CPU after degeneration (kernel/sched/topology.c sd_init,
// sd_degenerate, sd_parent_degenerate, build_sched_domain).
struct SchedDomain {
  std::string name;         // "SMT", "CLS", "MC" (powerpc: "CACHE"), "PKG", "NUMA(21)"
  std::vector<int> span;    // sorted OS indexes
  bool share_llc = false;   // SD_SHARE_LLC
  bool cluster = false;     // SD_CLUSTER
  bool wake_affine = true;  // SD_WAKE_AFFINE (lost by NUMA levels beyond node_reclaim_distance)
  int imbalance_pct = 117;  // 110 at the SMT level
};

// The scheduler's view of a topology: per-CPU domain hierarchy, sd_llc, SMT masks, NUMA reclaim
// distance from the topology's own vendor/architecture info (never the host's).
class SchedTopology {
 public:
  explicit SchedTopology(Topology topo, LlcSource llc = LlcSource::kAuto);

  const Topology& topology() const { return topo_; }
  const std::vector<int>& cpus() const { return cpus_; }
  bool has_cpu(int cpu) const;
  int max_cpu() const { return cpus_.empty() ? -1 : cpus_.back(); }

  const std::vector<SchedDomain>& domains(int cpu) const;
  const std::vector<int>& smt_mask(int cpu) const;  // cpu_smt_mask(): the PU's core
  // sd_llc: the highest domain with SD_SHARE_LLC; nullptr when there is none (llc_size 1).
  const SchedDomain* sd_llc(int cpu) const;
  int llc_size(int cpu) const;
  // The sd_llc_id of every LLC (the first CPU of its span), sorted; CPUs without sd_llc add none.
  const std::vector<int>& llc_ids() const { return llc_ids_; }
  bool cpus_share_cache(int a, int b) const;      // same sd_llc_id (or a == b)
  bool cpus_share_resources(int a, int b) const;  // same cluster id (= LLC id without clusters)
  // The CLS domain span of `cpu` when one survived degeneration, else empty.
  const std::vector<int>& cluster_span(int cpu) const;

  bool smt_active() const { return smt_active_; }          // some core has >= 2 PUs
  bool cluster_active() const { return cluster_active_; }  // a CLS level survived somewhere
  int node_reclaim_distance() const { return reclaim_distance_; }
  std::string_view reclaim_reason() const { return reclaim_reason_; }
  LlcSource llc_source() const { return llc_; }

 private:
  struct PerCpu {
    std::vector<SchedDomain> domains;
    std::vector<int> smt;
    std::vector<int> cluster;
    int llc_index = -1;    // index into domains of sd_llc, -1 if none
    int llc_id = -1;       // first CPU of sd_llc's span (the CPU itself when none)
    int share_id = -1;     // sd_share_id: first CPU of the cluster span, else llc_id
    bool present = false;  // the id is one of the topology's CPUs
  };
  // sd_llc, the cluster and the sharing ids of `cpu` from its kept levels.
  static PerCpu summarize(int cpu, std::vector<int> smt, std::vector<SchedDomain> domains);
  const PerCpu& at(int cpu) const;

  Topology topo_;
  LlcSource llc_;
  std::vector<int> cpus_;
  std::vector<PerCpu> per_cpu_;  // by CPU id
  std::vector<int> llc_ids_;
  bool smt_active_ = false;
  bool cluster_active_ = false;
  int reclaim_distance_ = 30;
  std::string reclaim_reason_;
};

// ---- reading the host (analysis/model/sched_live.cpp)
// ---------------------------------------------

// llc_source_from_domains() of the live sched domains of `topo`'s lowest CPU, read by
// common/system/sched_domains.h under `root`; nullopt when unreadable (debugfs not mounted, not
// root) so the caller falls back to the section-12 rules.
std::optional<LlcSource> live_llc_source(const Topology& topo, const std::string& root = "/");

// The topology a command reasons about, with its `--llc-level` text ("" when not given): the hwloc
// XML `xml`, else the live machine, whose LLC the live sched domains name when no level is given.
// Throws std::invalid_argument("<command> --llc-level: ...") for a bad level.
SchedTopology load_sched_topology(const std::string& command, const std::string& xml,
                                  const std::string& llc_level,
                                  std::optional<LlcSource> fallback = std::nullopt);

}  // namespace wb
