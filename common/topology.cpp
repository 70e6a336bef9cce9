// Topology from hwloc 2.x. The live topology is restricted to sched_getaffinity() ∩ online CPUs
// before anything is read, so `taskset -c 0,1 wakebench ...` sees a two-CPU machine and the XML
// kept for the result set describes exactly the CPUs the run could use.
#include "common/topology.h"

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

#include "common/input.h"

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

// Dense ids for one kind of object: index in the list of distinct objects ordered by the lowest
// PU OS index they hold. `objs[i]` is the object of pus[i] (nullptr = none).
std::vector<int> dense_ids(const std::vector<hwloc_obj_t>& objs) {
  std::vector<hwloc_obj_t> order;  // first appearance while walking PUs by OS index
  std::vector<int> ids(objs.size(), -1);
  for (size_t i = 0; i < objs.size(); ++i) {
    if (objs[i] == nullptr) continue;
    auto it = std::find(order.begin(), order.end(), objs[i]);
    ids[i] = static_cast<int>(it - order.begin());
    if (it == order.end()) order.push_back(objs[i]);
  }
  return ids;
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

// Loads an XML document; `what` prefixes every error ("topology FILE").
TopologyPtr load_xml(const std::string& xml, const std::string& what) {
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

}  // namespace

Topology Topology::from_hwloc(hwloc_topology* t, std::string source) {
  Topology topo;
  topo.source_ = std::move(source);

  std::vector<hwloc_obj_t> pu_objs;
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, o)) != nullptr;)
    pu_objs.push_back(o);
  if (pu_objs.empty()) throw std::runtime_error("topology " + topo.source_ + ": no PUs");
  std::sort(pu_objs.begin(), pu_objs.end(),
            [](hwloc_obj_t a, hwloc_obj_t b) { return a->os_index < b->os_index; });

  // NUMA nodes with CPUs only: POWER9 exposes GPU memory as CPU-less nodes (P#252-255).
  std::vector<hwloc_obj_t> nodes;
  for (hwloc_obj_t o = nullptr;
       (o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, o)) != nullptr;)
    if (o->cpuset != nullptr && !hwloc_bitmap_iszero(o->cpuset)) nodes.push_back(o);

  const size_t n = pu_objs.size();
  std::vector<hwloc_obj_t> core(n), l2(n), l3(n), llc(n), cluster(n), package(n), kernel_cluster(n);
  topo.pus_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    hwloc_obj_t pu = pu_objs[i];
    topo.pus_[i].os = static_cast<int>(pu->os_index);
    core[i] = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu);
    l2[i] = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_L2CACHE, pu);
    l3[i] = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_L3CACHE, pu);
    package[i] = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, pu);
    // The LLC is the PU's L3, else its L2 (docs/result-set.md; model boxes A' and B').
    llc[i] = l3[i] != nullptr ? l3[i] : l2[i];
    for (hwloc_obj_t o = pu->parent; o != nullptr && kernel_cluster[i] == nullptr; o = o->parent)
      if (o->type == HWLOC_OBJ_GROUP && is_cluster_object(o)) kernel_cluster[i] = o;
    // Cluster: the innermost cache or Cluster group strictly between the core and the LLC that
    // spans more than one core but not every core of the LLC (placement.h).
    if (core[i] != nullptr && llc[i] != nullptr) {
      const int llc_cores = cores_inside(t, llc[i]);
      for (hwloc_obj_t o = core[i]->parent; o != nullptr && o != llc[i]; o = o->parent) {
        if (!is_cluster_object(o)) continue;
        const int c = cores_inside(t, o);
        if (c > 1 && c < llc_cores) {
          cluster[i] = o;
          break;
        }
      }
    }
    // The closest node with CPUs: the smallest one holding the PU (with memory-side tiers such
    // as HBM in flat mode several nodes hold it; their cpusets tie and the lowest id wins).
    hwloc_obj_t best = nullptr;
    for (hwloc_obj_t node : nodes) {
      if (!hwloc_bitmap_isset(node->cpuset, pu->os_index)) continue;
      if (best == nullptr || hwloc_bitmap_weight(node->cpuset) < hwloc_bitmap_weight(best->cpuset))
        best = node;
    }
    topo.pus_[i].numa = best != nullptr ? static_cast<int>(best->os_index) : -1;
  }
  const std::vector<int> core_ids = dense_ids(core), l2_ids = dense_ids(l2), l3_ids = dense_ids(l3),
                         llc_ids = dense_ids(llc), cluster_ids = dense_ids(cluster),
                         package_ids = dense_ids(package),
                         kernel_cluster_ids = dense_ids(kernel_cluster);
  for (size_t i = 0; i < n; ++i) {
    Pu& p = topo.pus_[i];
    p.core = core_ids[i];
    p.l2 = l2_ids[i];
    p.l3 = l3_ids[i];
    p.llc = llc_ids[i];
    p.cluster = cluster_ids[i];
    p.package = package_ids[i];
    p.kernel_cluster = kernel_cluster_ids[i];
  }

  topo.counts_.pus = static_cast<int>(n);
  topo.counts_.cores = count_distinct(topo.pus_, &Pu::core);
  topo.counts_.l2_groups = count_distinct(topo.pus_, &Pu::l2);
  topo.counts_.llcs = count_distinct(topo.pus_, &Pu::llc);
  topo.counts_.numa_nodes = count_distinct(topo.pus_, &Pu::numa);
  topo.counts_.packages = count_distinct(topo.pus_, &Pu::package);
  topo.smt_ = smt_info(topo.pus_);

  // NUMA latencies: hwloc 2 names the OS-provided matrix "NUMALatency"; matrices imported from
  // hwloc 1.x XML (POWER9 files) carry no name, so any latency matrix over NUMA nodes is taken,
  // the named one first.
  unsigned nr = 0;
  hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, nullptr,
                              HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
  if (nr > 0) {
    std::vector<hwloc_distances_s*> dists(nr);
    if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, dists.data(),
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0) {
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
          topo.numa_dist_[static_cast<int>(chosen->objs[a]->os_index)]
                         [static_cast<int>(chosen->objs[b]->os_index)] =
              static_cast<int>(chosen->values[a * chosen->nbobjs + b]);
      for (hwloc_distances_s* d : dists) hwloc_distances_release(t, d);
    }
  }

  // Info attributes: the machine (root) first, then the packages (x86 puts CPUModel there).
  auto add_infos = [&](hwloc_obj_t o) {
    for (unsigned i = 0; i < o->infos_count; ++i)
      topo.info_.emplace(o->infos[i].name, o->infos[i].value);  // first value wins
  };
  add_infos(hwloc_get_root_obj(t));
  for (hwloc_obj_t o = nullptr;
       (o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PACKAGE, o)) != nullptr;)
    add_infos(o);

  char* buffer = nullptr;
  int length = 0;
  if (hwloc_topology_export_xmlbuffer(t, &buffer, &length, 0) != 0)
    throw std::runtime_error("topology " + topo.source_ +
                             ": hwloc XML export failed: " + std::strerror(errno));
  topo.xml_.assign(buffer, length > 0 ? static_cast<size_t>(length - 1) : 0);  // length counts '\0'
  hwloc_free_xmlbuffer(t, buffer);
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
