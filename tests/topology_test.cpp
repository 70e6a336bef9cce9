// Topology facts on the real-machine hwloc XMLs of tests/fixtures/topologies (its README lists what
// each must yield), on hwloc synthetic topologies and on the live machine.
#include "common/system/topology.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/util/cpulist.h"
#include "tests/support.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

// The fixtures are part of the repository: without them these tests fail rather than skip.
using test::topologies_dir;
Topology fixture_machine(const std::string& name) { return test::fixture_topology(name); }

const Pu& pu(const Topology& t, int os) {
  const Pu* p = t.find(os);
  if (p == nullptr) throw std::out_of_range("CPU " + std::to_string(os) + " not in " + t.source());
  return *p;
}

std::vector<int> cpu_range(int first, int last) {
  std::vector<int> v;
  for (int i = first; i <= last; ++i) v.push_back(i);
  return v;
}

struct Expected {
  std::string file;
  TopologyCounts counts;
  int smt_width;
  std::string numbering;
  int stride;
};

// From topologies/README.md and topologies/model/README.md. L2 groups: one per core unless the
// README says otherwise (Raptor Lake's E-core clusters, POWER9's core-pair L2, the model boxes'
// synthetic caches).
const std::vector<Expected> kExpectedShapes = {
    {"arm64-kunpeng920-nosmt-2pkg-4numa-128c.xml", {128, 128, 128, 4, 4, 2}, 1, "none", 0},
    {"power9-smt4-2pkg-2numa-128pu-butte.xml", {128, 32, 16, 16, 2, 2}, 4, "contiguous", 0},
    {"amd-epyc7402-zen2-smt2-2pkg-nps4-8numa-16l3.xml", {96, 48, 48, 16, 8, 2}, 2, "strided", 48},
    {"xeon-silver4108-skylake-smt2-2pkg-2numa-32pu.xml", {32, 16, 16, 2, 2, 2}, 2, "strided", 16},
    {"xeon-gold6230-cascadelake-snc2-smt2-2pkg-4numa-80pu.xml",
     {80, 40, 40, 2, 4, 2},
     2,
     "strided",
     40},
    {"intel-raptorlake-i7-1370p-hybrid-6p8e-20pu.xml", {20, 14, 8, 1, 1, 1}, 2, "mixed", 0},
    {"amd-ryzen-ai9-hx370-zen5-strixpoint-smt2-2l3-asym.xml",
     {24, 12, 12, 2, 1, 1},
     2,
     "strided",
     12},
    {"power9-smt4-2pkg-2numa-176pu-sierra-asym-l3.xml",
     {176, 44, 23, 23, 2, 2},
     4,
     "contiguous",
     0},
    {"xeon-max9462-sapphirerapids-snc4-smt2-2pkg-8numa.xml",
     {128, 64, 64, 2, 8, 2},
     2,
     "strided",
     64},
    {"arm64-nvidia-gb10-hybrid-nosmt-2l3-20c.xml", {20, 20, 20, 2, 1, 1}, 1, "none", 0},
    {"model/box-a-80c-nosmt-1llc.xml", {80, 80, 0, 1, 1, 1}, 1, "none", 0},
    {"model/box-a2-80c-nosmt-l2pairs.xml", {80, 80, 40, 40, 1, 1}, 1, "none", 0},
    {"model/box-b-20c-smt8-contig-1llc.xml", {160, 20, 0, 1, 1, 1}, 8, "contiguous", 0},
    {"model/box-b2-20c-smt8-contig-llc-per-core.xml", {160, 20, 20, 20, 1, 1}, 8, "contiguous", 0},
    {"model/box-c-8c-smt2-stride8-1llc.xml", {16, 8, 0, 1, 1, 1}, 2, "strided", 8},
    {"model/box-d-2s-8c-smt2-stride16-slit21.xml", {32, 16, 0, 2, 2, 2}, 2, "strided", 16},
    {"model/box-d32-2s-8c-smt2-stride16-slit32.xml", {32, 16, 0, 2, 2, 2}, 2, "strided", 16},
    {"model/box-dn-2s-8c-nosmt-slit21.xml", {16, 16, 0, 2, 2, 2}, 1, "none", 0},
};

TEST(Topology, EverySharedFileHasExpectations) {
  const fs::path dir = topologies_dir();
  std::set<std::string> listed;
  for (const Expected& e : kExpectedShapes) listed.insert(e.file);
  for (const fs::path& sub : {dir, dir / "model"})
    for (const auto& entry : fs::directory_iterator(sub))
      if (entry.path().extension() == ".xml") {
        EXPECT_TRUE(listed.count(fs::relative(entry.path(), dir).string()))
            << entry.path() << " has no expected facts in topology_test.cpp";
      }
}

TEST(Topology, SharedFilesCountsAndSmt) {
  for (const Expected& e : kExpectedShapes) {
    SCOPED_TRACE(e.file);
    const Topology t = fixture_machine(e.file);
    EXPECT_EQ(t.source(), "xml:" + fs::path(e.file).filename().string());
    const TopologyCounts c = t.counts();
    EXPECT_EQ(c.pus, e.counts.pus);
    EXPECT_EQ(c.cores, e.counts.cores);
    EXPECT_EQ(c.l2_groups, e.counts.l2_groups);
    EXPECT_EQ(c.llcs, e.counts.llcs);
    EXPECT_EQ(c.numa_nodes, e.counts.numa_nodes);
    EXPECT_EQ(c.packages, e.counts.packages);
    EXPECT_EQ(t.smt().width, e.smt_width);
    EXPECT_EQ(t.smt().numbering, e.numbering);
    EXPECT_EQ(t.smt().stride, e.stride);
    // Every real file here numbers its PUs densely from 0.
    EXPECT_EQ(t.cpus(), cpu_range(0, e.counts.pus - 1));
  }
}

// Structural invariants that hold for any topology: dense ids, nesting, siblings by stride.
void check_invariants(const Topology& t) {
  const std::vector<Pu>& pus = t.pus();
  ASSERT_FALSE(pus.empty());
  for (size_t i = 1; i < pus.size(); ++i) EXPECT_LT(pus[i - 1].os, pus[i].os);
  auto dense = [&](int Pu::*field, int count) {
    std::set<int> ids;
    int next = 0;  // ids appear in order of their lowest PU
    for (const Pu& p : pus) {
      if (p.*field < 0) continue;
      if (!ids.count(p.*field)) {
        EXPECT_EQ(p.*field, next);
        ++next;
      }
      ids.insert(p.*field);
    }
    EXPECT_EQ(static_cast<int>(ids.size()), count);
  };
  const TopologyCounts c = t.counts();
  dense(&Pu::core, c.cores);
  dense(&Pu::l2, c.l2_groups);
  dense(&Pu::llc, c.llcs);
  dense(&Pu::package, c.packages);
  for (const Pu& a : pus) {
    EXPECT_GE(a.numa, 0) << "CPU " << a.os;
    for (const Pu& b : pus) {
      if (a.core >= 0 && a.core == b.core) {  // nesting: a core sits in one of each
        EXPECT_EQ(a.llc, b.llc);
        EXPECT_EQ(a.cluster, b.cluster);
        EXPECT_EQ(a.numa, b.numa);
        EXPECT_EQ(a.package, b.package);
      }
      if (a.cluster >= 0 && a.cluster == b.cluster) {
        EXPECT_EQ(a.llc, b.llc);
      }
      // The LLC is the L3, else the L2.
      if (a.l3 >= 0 && b.l3 >= 0) {
        EXPECT_EQ(a.llc == b.llc, a.l3 == b.l3);
      } else if (a.l3 < 0 && b.l3 < 0) {
        EXPECT_EQ(a.llc == b.llc, a.l2 == b.l2);
      }
    }
  }
  if (t.smt().numbering == "strided") {
    for (const Pu& p : pus) {
      const Pu* sibling = t.find(p.os + t.smt().stride);
      if (sibling != nullptr && sibling->core == p.core) continue;
      const Pu* below = t.find(p.os - t.smt().stride);
      EXPECT_TRUE(below != nullptr && below->core == p.core) << "CPU " << p.os << " lacks +stride";
    }
  }
  EXPECT_EQ(t.numa_distance(pus.front().os, pus.front().os), 10);
}

TEST(Topology, SharedFilesInvariants) {
  for (const Expected& e : kExpectedShapes) {
    SCOPED_TRACE(e.file);
    check_invariants(fixture_machine(e.file));
  }
}

TEST(Topology, XmlExportRoundTrips) {
  for (const Expected& e : kExpectedShapes) {
    SCOPED_TRACE(e.file);
    const Topology t = fixture_machine(e.file);
    const Topology again = Topology::from_xml_buffer(t.xml(), "resultset");
    EXPECT_EQ(again.source(), "resultset");
    ASSERT_EQ(again.pus().size(), t.pus().size());
    for (size_t i = 0; i < t.pus().size(); ++i) {
      const Pu &a = t.pus()[i], &b = again.pus()[i];
      EXPECT_TRUE(a.os == b.os && a.core == b.core && a.l2 == b.l2 && a.l3 == b.l3 &&
                  a.llc == b.llc && a.cluster == b.cluster && a.numa == b.numa &&
                  a.package == b.package)
          << "CPU " << a.os;
    }
    EXPECT_EQ(again.smt().numbering, t.smt().numbering);
    const int last = t.pus().back().os;
    EXPECT_EQ(again.numa_distance(0, last), t.numa_distance(0, last));
  }
}

TEST(Topology, EpycSiblingsL3sAndNodes) {
  const Topology t = fixture_machine("amd-epyc7402-zen2-smt2-2pkg-nps4-8numa-16l3.xml");
  std::set<int> nodes;
  for (int p = 0; p < 48; ++p) {
    EXPECT_EQ(pu(t, p).core, pu(t, p + 48).core) << p;     // strided +48
    EXPECT_EQ(pu(t, p).llc, pu(t, 3 * (p / 3)).llc) << p;  // L3 k = PUs 3k..3k+2 (+48)
    EXPECT_EQ(pu(t, p + 48).llc, pu(t, p).llc) << p;
    EXPECT_EQ(pu(t, p).numa, pu(t, 6 * (p / 6)).numa) << p;  // node n = PUs 6n..6n+5 (+48)
    EXPECT_EQ(pu(t, p).package, p < 24 ? 0 : 1) << p;
    EXPECT_EQ(pu(t, p).cluster, -1);  // the L2 is per core, the L3 is the LLC
    nodes.insert(pu(t, p).numa);
  }
  EXPECT_EQ(nodes.size(), 8u);
  EXPECT_NE(pu(t, 2).llc, pu(t, 3).llc);
  EXPECT_EQ(t.numa_distance(0, 6), 12);   // NPS4: nodes of one package
  EXPECT_EQ(t.numa_distance(0, 24), 32);  // the other package
  EXPECT_EQ(t.info("CPUVendor"), "AuthenticAMD");
  EXPECT_EQ(t.info("CPUFamilyNumber"), "23");
  EXPECT_EQ(t.info("Architecture"), "x86_64");
}

TEST(Topology, CascadeLakeInterleavedPackagesAndSncInsideLlc) {
  const Topology t = fixture_machine("xeon-gold6230-cascadelake-snc2-smt2-2pkg-4numa-80pu.xml");
  for (int p = 0; p < 80; ++p) {
    EXPECT_EQ(pu(t, p).package, p % 2) << p;  // even PUs package 0, odd package 1
    EXPECT_EQ(pu(t, p).llc, p % 2) << p;      // one L3 per package
    EXPECT_EQ(pu(t, p).numa, p % 4) << p;     // P#0 = 0,4,...; P#2 = 2,6,...; P#1; P#3
    EXPECT_EQ(pu(t, p).core, pu(t, (p + 40) % 80).core) << p;
  }
  // Two SNC nodes inside one LLC.
  EXPECT_EQ(pu(t, 0).llc, pu(t, 2).llc);
  EXPECT_NE(pu(t, 0).numa, pu(t, 2).numa);
  EXPECT_EQ(t.numa_distance(0, 2), 11);  // SLIT by OS index, not hwloc's logical order
  EXPECT_EQ(t.numa_distance(0, 1), 21);
  EXPECT_EQ(t.numa_distance(1, 3), 11);
}

TEST(Topology, Power9IgnoresCpuLessNodes) {
  const Topology t = fixture_machine("power9-smt4-2pkg-2numa-128pu-butte.xml");
  std::set<int> nodes;
  for (const Pu& p : t.pus()) nodes.insert(p.numa);
  EXPECT_EQ(nodes, (std::set<int>{0, 8}));  // GPU memory nodes P#252..255 have no CPUs
  for (int p = 0; p < 128; ++p) {
    EXPECT_EQ(pu(t, p).core, p / 4) << p;  // contiguous SMT4, dense core ids
    EXPECT_EQ(pu(t, p).llc, p / 8) << p;   // L3 k = PUs 8k..8k+7
    EXPECT_EQ(pu(t, p).numa, p < 64 ? 0 : 8) << p;
    EXPECT_EQ(pu(t, p).package, p < 64 ? 0 : 1) << p;
    EXPECT_EQ(pu(t, p).cluster, -1) << p;  // L2 = L3 = the core pair: all cores of the LLC
  }
  EXPECT_EQ(t.numa_distance(0, 64), 40);  // hwloc 1.x latency matrix, unnamed
  EXPECT_EQ(t.info("Architecture"), "ppc64le");
}

TEST(Topology, SierraAsymmetricL3s) {
  const Topology t = fixture_machine("power9-smt4-2pkg-2numa-176pu-sierra-asym-l3.xml");
  std::map<int, std::vector<int>> llcs;
  for (const Pu& p : t.pus()) llcs[p.llc].push_back(p.os);
  ASSERT_EQ(llcs.size(), 23u);
  int single_core = 0;
  for (const auto& [id, cpus] : llcs) {
    if (cpus.size() == 8) continue;
    ++single_core;
    EXPECT_EQ(cpus.size(), 4u);
    EXPECT_TRUE(cpus == cpu_range(104, 107) || cpus == cpu_range(140, 143))
        << format_cpu_list(cpus);
  }
  EXPECT_EQ(single_core, 2);
  std::set<int> nodes;
  for (const Pu& p : t.pus()) nodes.insert(p.numa);
  EXPECT_EQ(nodes, (std::set<int>{0, 8}));
  EXPECT_EQ(pu(t, 87).numa, 0);
  EXPECT_EQ(pu(t, 88).numa, 8);
}

TEST(Topology, KunpengClusters) {
  const Topology t = fixture_machine("arm64-kunpeng920-nosmt-2pkg-4numa-128c.xml");
  for (int p = 0; p < 128; ++p) {
    EXPECT_EQ(pu(t, p).cluster, p / 4) << p;  // hwloc Group "Cluster" of 4 cores
    EXPECT_EQ(pu(t, p).llc, p / 32) << p;
    EXPECT_EQ(pu(t, p).numa, p / 32) << p;
    EXPECT_EQ(pu(t, p).package, p / 64) << p;
    EXPECT_EQ(pu(t, p).l2, p) << p;  // private L2: not a cluster
  }
  EXPECT_EQ(t.info("Architecture"), "aarch64");
}

TEST(Topology, RaptorLakeEcoreL2Clusters) {
  const Topology t = fixture_machine("intel-raptorlake-i7-1370p-hybrid-6p8e-20pu.xml");
  for (int p = 0; p < 12; ++p) {
    EXPECT_EQ(pu(t, p).core, p / 2) << p;  // P-cores: contiguous pairs
    EXPECT_EQ(pu(t, p).cluster, -1) << p;  // private L2
  }
  for (int p = 12; p < 20; ++p) {
    EXPECT_EQ(pu(t, p).core, p - 6) << p;  // E-cores: one PU each
    EXPECT_EQ(pu(t, p).cluster, p < 16 ? 0 : 1) << p;
    EXPECT_EQ(pu(t, p).l2, p < 16 ? 6 : 7) << p;
    EXPECT_EQ(pu(t, p).llc, 0);
  }
}

TEST(Topology, Gb10TwoL3s) {
  const Topology t = fixture_machine("arm64-nvidia-gb10-hybrid-nosmt-2l3-20c.xml");
  for (int p = 0; p < 20; ++p) {
    EXPECT_EQ(pu(t, p).llc, p < 10 ? 0 : 1) << p;
    EXPECT_EQ(pu(t, p).cluster, -1) << p;
  }
}

TEST(Topology, StrixPointAsymmetricL3s) {
  const Topology t = fixture_machine("amd-ryzen-ai9-hx370-zen5-strixpoint-smt2-2l3-asym.xml");
  std::vector<int> l3_0, l3_1;
  for (const Pu& p : t.pus()) (p.llc == 0 ? l3_0 : l3_1).push_back(p.os);
  EXPECT_EQ(format_cpu_list(l3_0), "0-3,12-15");
  EXPECT_EQ(format_cpu_list(l3_1), "4-11,16-23");
}

TEST(Topology, SilverAndSapphireRapidsLayouts) {
  const Topology silver = fixture_machine("xeon-silver4108-skylake-smt2-2pkg-2numa-32pu.xml");
  for (const Pu& p : silver.pus()) {
    const int pkg = (p.os % 16) / 8;
    EXPECT_EQ(p.package, pkg);
    EXPECT_EQ(p.llc, pkg);
    EXPECT_EQ(p.numa, pkg);
  }
  EXPECT_EQ(silver.info("CPUModel"), "Intel(R) Xeon(R) Silver 4108 CPU @ 1.80GHz");
  EXPECT_EQ(silver.info("CPUVendor"), "GenuineIntel");
  EXPECT_FALSE(silver.info("NoSuchKey").has_value());

  const Topology spr = fixture_machine("xeon-max9462-sapphirerapids-snc4-smt2-2pkg-8numa.xml");
  for (const Pu& p : spr.pus()) {
    EXPECT_EQ(p.numa, (p.os % 64) / 8) << p.os;  // node n = 8n..8n+7 plus +64
    EXPECT_EQ(p.llc, (p.os % 64) / 32) << p.os;  // one L3 spans 4 nodes
  }
}

TEST(Topology, ModelBoxes) {
  // A': no L3, the LLC is the 2-core L2.
  const Topology a2 = fixture_machine("model/box-a2-80c-nosmt-l2pairs.xml");
  for (const Pu& p : a2.pus()) EXPECT_EQ(p.llc, p.os / 2);
  // B': the LLC is one 8-thread core.
  const Topology b2 = fixture_machine("model/box-b2-20c-smt8-contig-llc-per-core.xml");
  for (const Pu& p : b2.pus()) EXPECT_EQ(p.llc, p.core);
  // C: x86 numbering, sibling of c is c+8.
  const Topology c = fixture_machine("model/box-c-8c-smt2-stride8-1llc.xml");
  for (int p = 0; p < 8; ++p) EXPECT_EQ(pu(c, p).core, pu(c, p + 8).core);
  // D / D32: SLIT 21 and 32.
  EXPECT_EQ(fixture_machine("model/box-d-2s-8c-smt2-stride16-slit21.xml").numa_distance(0, 8), 21);
  EXPECT_EQ(fixture_machine("model/box-d32-2s-8c-smt2-stride16-slit32.xml").numa_distance(0, 8),
            32);
  EXPECT_EQ(fixture_machine("model/box-d32-2s-8c-smt2-stride16-slit32.xml").numa_distance(0, 16),
            10);
}

TEST(Topology, Synthetic) {
  const Topology t = Topology::from_synthetic("pack:2 numa:1 l3:2 l2:2 core:2 pu:2");
  EXPECT_EQ(t.source(), "synthetic:pack:2 numa:1 l3:2 l2:2 core:2 pu:2");
  const TopologyCounts c = t.counts();
  EXPECT_EQ(c.pus, 32);
  EXPECT_EQ(c.cores, 16);
  EXPECT_EQ(c.l2_groups, 8);
  EXPECT_EQ(c.llcs, 4);
  EXPECT_EQ(c.numa_nodes, 2);
  EXPECT_EQ(c.packages, 2);
  EXPECT_EQ(t.smt().numbering, "contiguous");  // synthetic OS indexes follow logical order
  for (const Pu& p : t.pus()) {
    EXPECT_EQ(p.core, p.os / 2);
    EXPECT_EQ(p.cluster, p.os / 4);  // 2-core L2 under a 4-core L3
    EXPECT_EQ(p.llc, p.os / 8);
    EXPECT_EQ(p.numa, p.os / 16);
  }
  check_invariants(t);
  // Without NUMALatency the defaults apply.
  EXPECT_EQ(t.numa_distance(0, 16), 21);
  EXPECT_EQ(t.numa_distance(0, 8), 10);
  EXPECT_THROW(t.numa_distance(0, 99), std::out_of_range);
  EXPECT_EQ(t.find(99), nullptr);

  // An L2 covering every core of its LLC is no cluster; strided numbering from explicit indexes.
  const Topology s =
      Topology::from_synthetic("pack:1 l3:1 l2:1 core:4 pu:2(indexes=0,4,1,5,2,6,3,7)");
  EXPECT_EQ(s.smt().numbering, "strided");
  EXPECT_EQ(s.smt().stride, 4);
  for (const Pu& p : s.pus()) EXPECT_EQ(p.cluster, -1);
  EXPECT_THROW(Topology::from_synthetic("pack:x"), std::runtime_error);
}

std::string topology_error(const std::string& path) {
  try {
    Topology::from_xml(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Topology, XmlErrorsNameTheFile) {
  const fs::path dir = fs::temp_directory_path() / ("wb-topology-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path garbage = dir / "garbage.xml";
  std::ofstream(garbage) << "this is not <xml";
  const fs::path empty = dir / "empty.xml";
  std::ofstream(empty) << "";
  const fs::path no_pu = dir / "nopu.xml";
  std::ofstream(no_pu) << "<?xml version=\"1.0\"?>\n<topology version=\"2.0\"></topology>\n";
  EXPECT_EQ(
      topology_error((dir / "missing.xml").string()),
      "topology " + (dir / "missing.xml").string() + ": cannot open: No such file or directory");
  EXPECT_EQ(topology_error(garbage.string()),
            "topology " + garbage.string() + ": not a valid hwloc XML topology");
  EXPECT_EQ(topology_error(empty.string()), "topology " + empty.string() + ": empty file");
  EXPECT_EQ(topology_error(dir.string()),
            "topology " + dir.string() + ": is a directory, not a regular file");
  EXPECT_EQ(topology_error(no_pu.string()).rfind("topology " + no_pu.string() + ": ", 0), 0u)
      << topology_error(no_pu.string());
  fs::remove_all(dir);
  EXPECT_THROW(Topology::from_xml_buffer("<nope", "buffer"), std::runtime_error);
}

std::vector<int> allowed_online_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) throw std::runtime_error("sched_getaffinity");
  std::ifstream f("/sys/devices/system/cpu/online");
  std::stringstream text;
  text << f.rdbuf();
  std::vector<int> out;
  for (int c : parse_cpu_list(text.str()))
    if (c < CPU_SETSIZE && CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

TEST(Topology, LiveMachineIsAllowedOnlineCpus) {
  const Topology t = Topology::from_system();
  EXPECT_EQ(t.source().rfind("live:", 0), 0u) << t.source();
  EXPECT_EQ(t.cpus(), allowed_online_cpus());
  EXPECT_EQ(t.counts().pus, static_cast<int>(t.cpus().size()));
  EXPECT_GE(t.counts().cores, 1);
  EXPECT_GE(t.counts().numa_nodes, 1);
  check_invariants(t);
  const Topology again = Topology::from_xml_buffer(t.xml(), "live-export");
  EXPECT_EQ(again.cpus(), t.cpus());
}

}  // namespace
}  // namespace wb
