// Machine topology from hwloc: the live system (restricted to this process's allowed CPUs) or an
// hwloc XML file. Everything is keyed by PU OS index (never hwloc's logical index: the kernel's
// idle scans walk CPU ids in OS order, docs/policy-model.md#inputs).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

struct hwloc_topology;  // hwloc's opaque handle (hwloc_topology_t), kept out of this header

namespace wb {

// One processing unit (a kernel CPU). Group ids are dense indexes (0..n-1) into the machine's list
// of objects of that kind, ordered by the lowest PU OS index they contain; -1 = no such object.
struct Pu {
  int os = -1;       // kernel CPU id
  int core = -1;     // the kernel's core (cpu_smt_mask()): the Core object, or on powerpc's big
                     // cores the small core inside it (its L1; topology.cpp smt_core_of())
  int l2 = -1;       // L2 cache object above the PU (-1 if none)
  int l3 = -1;       // L3 cache object above the PU (-1 if none)
  int llc = -1;      // last-level cache: the L3 if any, else the L2 (docs/policy-model.md#llc)
  int cluster = -1;  // a cache or hwloc "Cluster" group strictly between core and LLC (see
                     // placement.h), shared by >1 core; -1 if the PU has none
  int numa = -1;     // NUMA node OS index of the closest node with CPUs (-1 if none)
  int package = -1;  // Package object
  // The hwloc "Cluster" group above the PU wherever it lies, also at or above the LLC: the
  // kernel's cluster_cpus, which arm64's MC domain grows to when the LLC is smaller
  // (analysis/model/policy_model.cpp); -1 if none.
  int kernel_cluster = -1;
};

struct TopologyCounts {
  int pus = 0, cores = 0, l2_groups = 0, llcs = 0, numa_nodes = 0, packages = 0;
};

struct SmtInfo {
  int width = 1;  // max PUs per core
  // "none" (1 PU per core) | "contiguous" (a core's PUs are consecutive ids, e.g. POWER 0-3) |
  // "strided" (siblings p, p+stride, ...: x86 Linux) | "mixed" (cores differ in PU count, as on
  // hybrid parts such as Raptor Lake, or no single rule fits)
  std::string numbering = "none";
  int stride = 0;  // for "strided": sibling of p is p + stride; 0 otherwise
};

class Topology {
 public:
  // The live machine, restricted to the CPUs this process may run on (sched_getaffinity) and
  // that are online. Throws std::runtime_error on failure.
  static Topology from_system();
  // An hwloc XML file. Throws std::runtime_error("topology FILE: reason") if unreadable/invalid.
  static Topology from_xml(const std::string& path);
  // An hwloc synthetic description, e.g. "pack:2 l3:1 core:4 pu:2" (tests).
  static Topology from_synthetic(const std::string& description);
  // An XML document held in memory (result sets embed the XML). `source` is reported as given.
  static Topology from_xml_buffer(const std::string& xml, const std::string& source);

  const std::string& source() const { return source_; }  // "live:<hostname>", "xml:<basename>", ...
  const std::string& xml() const { return xml_; }        // the hwloc XML export (for result sets)

  const std::vector<Pu>& pus() const { return pus_; }  // sorted by OS index
  const Pu* find(int os) const;                        // nullptr if not in the topology
  std::vector<int> cpus() const;                       // OS indexes, sorted

  TopologyCounts counts() const { return counts_; }
  SmtInfo smt() const { return smt_; }

  // NUMA distance (SLIT) between the nodes of two CPUs: from the XML's NUMALatency matrix when
  // present, else 10 local / 21 remote (docs/policy-model.md#sched-domains).
  int numa_distance(int cpu_a, int cpu_b) const;
  // Info key/values of the root object (CPUVendor, CPUFamilyNumber, CPUModel, Architecture, ...),
  // first found on the machine or package objects.
  std::optional<std::string> info(const std::string& key) const;
  // The topology's own Architecture (ppc...) or CPUModel (POWER...) says powerpc, never the host's.
  bool powerpc() const { return powerpc_; }

 private:
  // Reads everything wakebench needs out of a loaded hwloc topology (which stays owned by the
  // caller) and keeps its XML export.
  static Topology from_hwloc(hwloc_topology* topo, std::string source);

  std::string source_, xml_;
  std::vector<Pu> pus_;
  TopologyCounts counts_;
  SmtInfo smt_;
  bool powerpc_ = false;
  std::map<int, std::map<int, int>> numa_dist_;  // node os -> node os -> distance
  std::map<std::string, std::string> info_;
};

}  // namespace wb
