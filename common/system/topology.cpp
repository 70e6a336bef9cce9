// Topology from hwloc 2.x. The live topology is restricted to sched_getaffinity() ∩ online CPUs
// before anything is read, so `taskset -c 0,1 wakebench ...` sees a two-CPU machine and the XML
// kept for the result set describes exactly the CPUs the run could use.
#include "common/system/topology.h"

#include <hwloc.h>
#include <sched.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>
#include <system_error>

#include "common/util/cpulist.h"
#include "common/util/input.h"

namespace wb {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using BitmapPtr = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

TopologyPtr init_topology(const std::string& what) {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0)
    throw std::runtime_error(what + ": hwloc_topology_init: " + std::strerror(errno));
  return TopologyPtr(t);
}

void load(hwloc_topology_t t, const std::string& what) {
  if (hwloc_topology_load(t) != 0)
    throw std::runtime_error(what + ": hwloc could not load it (" + std::strerror(errno) + ")");
}

// The allowed CPUs of this process. The mask grows until the kernel accepts its size, so machines
// with more than CPU_SETSIZE (1024) CPUs work too.
BitmapPtr affinity_bitmap() {
  for (int ncpus = CPU_SETSIZE;; ncpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(ncpus);
    const size_t size = CPU_ALLOC_SIZE(ncpus);
    if (sched_getaffinity(0, size, set) == 0) {
      BitmapPtr bitmap(hwloc_bitmap_alloc());
      for (int c = 0; c < ncpus; ++c)
        if (CPU_ISSET_S(c, size, set)) hwloc_bitmap_set(bitmap.get(), c);
      CPU_FREE(set);
      return bitmap;
    }
    const int err = errno;
    CPU_FREE(set);
    if (err != EINVAL || ncpus >= (1 << 20))
      throw std::system_error(err, std::generic_category(), "topology live: sched_getaffinity");
  }
}

bool is_cluster_object(hwloc_obj_t o) {
  if (hwloc_obj_type_is_cache(o->type)) return true;
  // hwloc's Linux backend creates Group objects with subtype "Cluster" from
  // /sys/devices/system/cpu/cpuN/topology/cluster_cpus, the same ids the kernel's CLS
  // sched domain is built from (drivers/base/arch_topology.c cpu_clustergroup_mask()).
  return o->type == HWLOC_OBJ_GROUP && o->subtype != nullptr &&
         strcasecmp(o->subtype, "Cluster") == 0;
}

int cores_inside(hwloc_topology_t t, hwloc_obj_t o) {
  return hwloc_get_nbobjs_inside_cpuset_by_type(t, o->cpuset, HWLOC_OBJ_CORE);
}

int count_distinct(const std::vector<Pu>& pus, int Pu::*field) {
  std::set<int> s;
  for (const Pu& p : pus)
    if (p.*field >= 0) s.insert(p.*field);
  return static_cast<int>(s.size());
}

// Width and numbering of SMT siblings. "contiguous": every multi-PU core holds consecutive ids;
// "strided": every core is p, p+N, p+2N... with one N for the whole machine (x86 Linux
// enumerates first threads then second threads); "mixed": cores differ in PU count (hybrid
// parts such as Raptor Lake P+E cores) or follow no single rule.
SmtInfo smt_info(const std::vector<Pu>& pus) {
  std::map<int, std::vector<int>> cores;  // core id -> sorted PU ids
  for (const Pu& p : pus)
    if (p.core >= 0) cores[p.core].push_back(p.os);
  SmtInfo smt;
  std::set<size_t> widths;
  for (const auto& [core, cpus] : cores) {
    widths.insert(cpus.size());
    smt.width = std::max(smt.width, static_cast<int>(cpus.size()));
  }
  if (smt.width == 1) return smt;  // "none"
  if (widths.size() > 1) {
    smt.numbering = "mixed";
    return smt;
  }
  bool contiguous = true, strided = true;
  int stride = 0;
  for (const auto& [core, cpus] : cores) {
    const int step = cpus[1] - cpus[0];
    for (size_t i = 1; i < cpus.size(); ++i) {
      if (cpus[i] != cpus[i - 1] + 1) contiguous = false;
      if (cpus[i] - cpus[i - 1] != step) strided = false;
    }
    if (stride == 0) stride = step;
    if (step != stride) strided = false;
  }
  if (contiguous) {
    smt.numbering = "contiguous";
  } else if (strided) {
    smt.numbering = "strided";
    smt.stride = stride;
  } else {
    smt.numbering = "mixed";
  }
  return smt;
}

// Loads an XML document; `what` prefixes every error ("topology FILE"). hwloc recurses once per
// level of nesting (20000 levels overflow the stack): it sees no document nested deeper than
// kMaxInputDepth.
TopologyPtr load_xml(const std::string& xml, const std::string& what) {
  try {
    check_xml_depth(xml);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(what + ": " + e.what());
  }
  TopologyPtr t = init_topology(what);
  // hwloc wants the size including the terminating '\0', as hwloc_topology_export_xmlbuffer
  // reports it.
  if (hwloc_topology_set_xmlbuffer(t.get(), xml.c_str(), static_cast<int>(xml.size() + 1)) != 0 ||
      hwloc_topology_load(t.get()) != 0)
    throw std::runtime_error(what + ": not a valid hwloc XML topology");
  if (hwloc_get_nbobjs_by_type(t.get(), HWLOC_OBJ_PU) <= 0)
    throw std::runtime_error(what + ": the topology holds no PU");
  return t;
}

std::string basename_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The PUs sorted by OS index. Throws when there is none.
std::vector<hwloc_obj_t> pus_by_os_index(hwloc_topology_t t, const std::string& source) {
  std::vector<hwloc_obj_t> pus;
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, o)) != nullptr;)
    pus.push_back(o);
  if (pus.empty()) throw std::runtime_error("topology " + source + ": no PUs");
  std::sort(pus.begin(), pus.end(),
            [](hwloc_obj_t a, hwloc_obj_t b) { return a->os_index < b->os_index; });
  // Bounded as a config's CPU ids are: tables indexed by CPU id stay small.
  if (pus.back()->os_index >= static_cast<unsigned>(kMaxCpus))
    throw std::runtime_error("topology " + source + ": PU " + std::to_string(pus.back()->os_index) +
                             " is over the highest CPU id " + std::to_string(kMaxCpus - 1) +
                             " (the kernel's NR_CPUS limit is " + std::to_string(kMaxCpus) + ")");
  return pus;
}

// NUMA nodes with CPUs only: POWER9 exposes GPU memory as CPU-less nodes.
std::vector<hwloc_obj_t> numa_nodes_with_cpus(hwloc_topology_t t) {
  std::vector<hwloc_obj_t> nodes;
  for (hwloc_obj_t o = nullptr;
       (o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, o)) != nullptr;)
    if (o->cpuset != nullptr && !hwloc_bitmap_iszero(o->cpuset)) nodes.push_back(o);
  return nodes;
}

// The closest node with CPUs: the smallest one holding the PU (with memory-side tiers such as
// HBM in flat mode several nodes hold it; their cpusets tie and the lowest id wins). Its OS
// index, -1 if none.
int closest_numa_node(const std::vector<hwloc_obj_t>& nodes, hwloc_obj_t pu) {
  hwloc_obj_t best = nullptr;
  for (hwloc_obj_t node : nodes) {
    if (!hwloc_bitmap_isset(node->cpuset, pu->os_index)) continue;
    if (best == nullptr || hwloc_bitmap_weight(node->cpuset) < hwloc_bitmap_weight(best->cpuset))
      best = node;
  }
  return best != nullptr ? static_cast<int>(best->os_index) : -1;
}

// The innermost cache or Cluster group strictly between the core and the LLC that spans more
// than one core but not every core of the LLC (docs/result-set.md#placement-classes); nullptr if
// none.
hwloc_obj_t cluster_between(hwloc_topology_t t, hwloc_obj_t core, hwloc_obj_t llc) {
  if (core == nullptr || llc == nullptr) return nullptr;
  const int llc_cores = cores_inside(t, llc);
  for (hwloc_obj_t o = core->parent; o != nullptr && o != llc; o = o->parent) {
    if (!is_cluster_object(o)) continue;
    const int c = cores_inside(t, o);
    if (c > 1 && c < llc_cores) return o;
  }
  return nullptr;
}

// The hwloc "Cluster" group above the PU wherever it lies (Pu::kernel_cluster); nullptr if none.
hwloc_obj_t kernel_cluster_above(hwloc_obj_t pu) {
  for (hwloc_obj_t o = pu->parent; o != nullptr; o = o->parent)
    if (o->type == HWLOC_OBJ_GROUP && is_cluster_object(o)) return o;
  return nullptr;
}

// The objects of one PU that its Pu fields number (nullptr = none).
struct PuObjects {
  hwloc_obj_t core, l2, l3, llc, cluster, package, kernel_cluster;
};

// The kernel's core of a PU (cpu_smt_mask()): its hwloc Core, or on powerpc the L1 inside it
// when the L1 splits the Core. powerpc's big cores (ibm,thread-groups) make cpu_smt_mask() the
// small core while thread_siblings, hwloc's Core, stays the SMT8 core: the small core shows as the
// L1's shared_cpu_map (arch/powerpc/kernel/cacheinfo.c), e.g. CPUs 0,2,4,6 of Core 0-7
// (docs/policy-model.md#inputs). Elsewhere the SMT mask is thread_siblings, whatever the L1s
// (qemu's x86 and arm64 guests show an L1 per thread).
hwloc_obj_t smt_core_of(hwloc_topology_t t, hwloc_obj_t pu, bool powerpc) {
  hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu);
  hwloc_obj_t l1 = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_L1CACHE, pu);
  if (!powerpc || core == nullptr || l1 == nullptr ||
      hwloc_bitmap_isequal(l1->cpuset, core->cpuset) ||
      !hwloc_bitmap_isincluded(l1->cpuset, core->cpuset))
    return core;
  return l1;
}

PuObjects objects_of(hwloc_topology_t t, hwloc_obj_t pu, bool powerpc) {
  PuObjects o{};
  o.core = smt_core_of(t, pu, powerpc);
  o.l2 = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_L2CACHE, pu);
  o.l3 = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_L3CACHE, pu);
  o.package = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, pu);
  // The LLC is the PU's L3, else its L2 (docs/policy-model.md#llc).
  o.llc = o.l3 != nullptr ? o.l3 : o.l2;
  o.cluster = cluster_between(t, o.core, o.llc);
  o.kernel_cluster = kernel_cluster_above(pu);
  return o;
}

// Dense ids for one kind of object: index in the list of distinct objects ordered by the lowest
// PU OS index they hold. `objs[i]` is the object of pus[i]; -1 where it is nullptr.
std::vector<int> dense_ids(const std::vector<PuObjects>& objs, hwloc_obj_t PuObjects::*kind) {
  std::vector<hwloc_obj_t> order;  // first appearance while walking PUs by OS index
  std::vector<int> ids(objs.size(), -1);
  for (size_t i = 0; i < objs.size(); ++i) {
    const hwloc_obj_t o = objs[i].*kind;
    if (o == nullptr) continue;
    auto it = std::find(order.begin(), order.end(), o);
    ids[i] = static_cast<int>(it - order.begin());
    if (it == order.end()) order.push_back(o);
  }
  return ids;
}

// Every PU, sorted by OS index, with the dense ids of its objects and its NUMA node.
std::vector<Pu> read_pus(hwloc_topology_t t, const std::string& source, bool powerpc) {
  const std::vector<hwloc_obj_t> pu_objs = pus_by_os_index(t, source);
  const std::vector<hwloc_obj_t> nodes = numa_nodes_with_cpus(t);
  std::vector<PuObjects> objs;
  for (hwloc_obj_t pu : pu_objs) objs.push_back(objects_of(t, pu, powerpc));
  const std::vector<int> core = dense_ids(objs, &PuObjects::core),
                         l2 = dense_ids(objs, &PuObjects::l2), l3 = dense_ids(objs, &PuObjects::l3),
                         llc = dense_ids(objs, &PuObjects::llc),
                         cluster = dense_ids(objs, &PuObjects::cluster),
                         package = dense_ids(objs, &PuObjects::package),
                         kernel_cluster = dense_ids(objs, &PuObjects::kernel_cluster);
  std::vector<Pu> pus(pu_objs.size());
  for (size_t i = 0; i < pus.size(); ++i)
    pus[i] = {.os = static_cast<int>(pu_objs[i]->os_index),
              .core = core[i],
              .l2 = l2[i],
              .l3 = l3[i],
              .llc = llc[i],
              .cluster = cluster[i],
              .numa = closest_numa_node(nodes, pu_objs[i]),
              .package = package[i],
              .kernel_cluster = kernel_cluster[i]};
  return pus;
}

TopologyCounts counts_of(const std::vector<Pu>& pus) {
  TopologyCounts c;
  c.pus = static_cast<int>(pus.size());
  c.cores = count_distinct(pus, &Pu::core);
  c.l2_groups = count_distinct(pus, &Pu::l2);
  c.llcs = count_distinct(pus, &Pu::llc);
  c.numa_nodes = count_distinct(pus, &Pu::numa);
  c.packages = count_distinct(pus, &Pu::package);
  return c;
}

// NUMA latencies, node OS index -> node OS index -> distance; empty without a latency matrix.
// hwloc 2 names the OS-provided matrix "NUMALatency"; matrices imported from hwloc 1.x XML (POWER9
// files) carry no name, so any latency matrix over NUMA nodes is taken, the named one first.
std::map<int, std::map<int, int>> numa_distances(hwloc_topology_t t) {
  std::map<int, std::map<int, int>> out;
  unsigned nr = 0;
  hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, nullptr,
                              HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
  if (nr == 0) return out;
  std::vector<hwloc_distances_s*> dists(nr);
  if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, dists.data(),
                                  HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0)
    return out;
  dists.resize(std::min<size_t>(nr, dists.size()));
  hwloc_distances_s* chosen = dists.front();
  for (hwloc_distances_s* d : dists) {
    const char* name = hwloc_distances_get_name(t, d);
    if (name != nullptr && std::strcmp(name, "NUMALatency") == 0) {
      chosen = d;
      break;
    }
  }
  for (unsigned a = 0; a < chosen->nbobjs; ++a)
    for (unsigned b = 0; b < chosen->nbobjs; ++b)
      out[static_cast<int>(chosen->objs[a]->os_index)]
         [static_cast<int>(chosen->objs[b]->os_index)] =
             static_cast<int>(chosen->values[a * chosen->nbobjs + b]);
  for (hwloc_distances_s* d : dists) hwloc_distances_release(t, d);
  return out;
}

// Info attributes: the machine (root) first, then the packages (x86 puts CPUModel there); the
// first value of a name wins.
std::map<std::string, std::string> infos_of(hwloc_topology_t t) {
  std::map<std::string, std::string> out;
  auto add_infos = [&](hwloc_obj_t o) {
    for (unsigned i = 0; i < o->infos_count; ++i) out.emplace(o->infos[i].name, o->infos[i].value);
  };
  add_infos(hwloc_get_root_obj(t));
  for (hwloc_obj_t o = nullptr;
       (o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PACKAGE, o)) != nullptr;)
    add_infos(o);
  return out;
}

bool says_powerpc(const std::map<std::string, std::string>& info) {
  auto has = [&](const char* key, const char* word) {
    auto it = info.find(key);
    return it != info.end() && strcasestr(it->second.c_str(), word) != nullptr;
  };
  return has("Architecture", "ppc") || has("CPUModel", "POWER");
}

std::string export_xml(hwloc_topology_t t, const std::string& source) {
  char* buffer = nullptr;
  int length = 0;
  if (hwloc_topology_export_xmlbuffer(t, &buffer, &length, 0) != 0)
    throw std::runtime_error("topology " + source +
                             ": hwloc XML export failed: " + std::strerror(errno));
  std::string xml(buffer, length > 0 ? static_cast<size_t>(length - 1) : 0);  // length counts '\0'
  hwloc_free_xmlbuffer(t, buffer);
  return xml;
}

}  // namespace

Topology Topology::from_hwloc(hwloc_topology* t, std::string source) {
  Topology topo;
  topo.source_ = std::move(source);
  topo.info_ = infos_of(t);
  topo.powerpc_ = says_powerpc(topo.info_);
  topo.pus_ = read_pus(t, topo.source_, topo.powerpc_);
  topo.counts_ = counts_of(topo.pus_);
  topo.smt_ = smt_info(topo.pus_);
  topo.numa_dist_ = numa_distances(t);
  topo.xml_ = export_xml(t, topo.source_);
  return topo;
}

Topology Topology::from_system() {
  const std::string what = "topology live";
  TopologyPtr t = init_topology(what);
  load(t.get(), what);
  // hwloc's topology cpuset holds the online CPUs; intersect with this process's affinity.
  BitmapPtr allowed = affinity_bitmap();
  hwloc_bitmap_and(allowed.get(), allowed.get(), hwloc_topology_get_topology_cpuset(t.get()));
  if (hwloc_bitmap_iszero(allowed.get()))
    throw std::runtime_error(what + ": no online CPU in this process's affinity mask");
  if (!hwloc_bitmap_isequal(allowed.get(), hwloc_topology_get_topology_cpuset(t.get())) &&
      hwloc_topology_restrict(t.get(), allowed.get(), 0) != 0)
    throw std::runtime_error(what + ": hwloc_topology_restrict: " + std::strerror(errno));
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown");
  return from_hwloc(t.get(), std::string("live:") + host);
}

Topology Topology::from_xml(const std::string& path) {
  const std::string what = "topology " + path;
  const std::string content = read_input_file("topology", path);
  if (content.empty()) throw std::runtime_error(what + ": empty file");
  TopologyPtr t = load_xml(content, what);
  return from_hwloc(t.get(), "xml:" + basename_of(path));
}

Topology Topology::from_xml_buffer(const std::string& xml, const std::string& source) {
  TopologyPtr t = load_xml(xml, "topology " + source);
  return from_hwloc(t.get(), source);
}

Topology Topology::from_synthetic(const std::string& description) {
  const std::string what = "topology synthetic:" + description;
  TopologyPtr t = init_topology(what);
  if (hwloc_topology_set_synthetic(t.get(), description.c_str()) != 0)
    throw std::runtime_error(what + ": invalid hwloc synthetic description");
  load(t.get(), what);
  return from_hwloc(t.get(), "synthetic:" + description);
}

const Pu* Topology::find(int os) const {
  auto it = std::lower_bound(pus_.begin(), pus_.end(), os,
                             [](const Pu& p, int value) { return p.os < value; });
  return it != pus_.end() && it->os == os ? &*it : nullptr;
}

std::vector<int> Topology::cpus() const {
  std::vector<int> out;
  out.reserve(pus_.size());
  for (const Pu& p : pus_) out.push_back(p.os);
  return out;
}

int Topology::numa_distance(int cpu_a, int cpu_b) const {
  const Pu* a = find(cpu_a);
  const Pu* b = find(cpu_b);
  if (a == nullptr || b == nullptr)
    throw std::out_of_range("CPU " + std::to_string(a == nullptr ? cpu_a : cpu_b) +
                            " is not in topology " + source_);
  if (auto row = numa_dist_.find(a->numa); row != numa_dist_.end())
    if (auto cell = row->second.find(b->numa); cell != row->second.end()) return cell->second;
  // Linux's defaults without a SLIT: LOCAL_DISTANCE 10, REMOTE_DISTANCE 20 in
  // include/linux/topology.h, but ACPI SLITs of two-socket boxes say 21, the value the policy
  // model's boxes assume (docs/policy-model.md#sched-domains).
  return a->numa == b->numa ? 10 : 21;
}

std::optional<std::string> Topology::info(const std::string& key) const {
  auto it = info_.find(key);
  if (it == info_.end()) return std::nullopt;
  return it->second;
}

}  // namespace wb
