// Placement classes and pair choice on the fixture topologies, synthetic ones and the live machine,
// plus `wakebench topology` end to end.
#include "common/schema/placement.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

using test::topologies_dir;
Topology machine(const std::string& name) { return test::fixture_topology(name); }

std::string pairs_text(const std::vector<CpuPair>& pairs) {
  std::string s;
  for (const auto& [a, b] : pairs)
    s += (s.empty() ? "" : " ") + std::to_string(a) + "," + std::to_string(b);
  return s;
}

// "0,16" for an available class, its reason otherwise.
std::string describe(const ClassPairs& cp) {
  return cp.available ? pairs_text(cp.pairs) : cp.reason;
}

const ClassPairs& of(const std::vector<ClassPairs>& all, PlacementClass c) {
  for (const ClassPairs& cp : all)
    if (cp.cls == c) return cp;
  throw std::logic_error("class missing");
}

TEST(Placement, ClassIds) {
  const std::vector<std::string> ids = {"same-cpu", "smt-sibling", "cluster",
                                        "llc",      "cross-llc",   "cross-numa"};
  for (size_t i = 0; i < kAllClasses.size(); ++i) {
    EXPECT_EQ(class_id(kAllClasses[i]), ids[i]);
    EXPECT_EQ(parse_class(ids[i]), kAllClasses[i]);
  }
  EXPECT_FALSE(parse_class("kernel").has_value());
  EXPECT_FALSE(parse_class("LLC").has_value());
}

constexpr const char* kNoSmt = "no SMT: 1 PU per core";
constexpr const char* kNoCluster = "no cluster cache in any LLC";
constexpr const char* kOneLlc = "one LLC";
constexpr const char* kNodeOneLlc = "each NUMA node has one LLC";
constexpr const char* kOneNode = "one NUMA node with CPUs";

struct ExpectedClasses {
  std::string file;
  std::array<std::string, 6> classes;  // kAllClasses order: first pair "waker,wakee" or reason
};

// First pairs follow the README layouts: e.g. EPYC sibling +48, L3 = 3 cores, node = 2 L3s;
// Cascade Lake: PU 2 is the next core of package 0 (even PUs) and PU 1 is on package 1.
const std::vector<ExpectedClasses> kExpected = {
    {"arm64-kunpeng920-nosmt-2pkg-4numa-128c.xml",
     {"0,0", kNoSmt, "0,1", "0,4", kNodeOneLlc, "0,32"}},
    {"power9-smt4-2pkg-2numa-128pu-butte.xml", {"0,0", "0,1", kNoCluster, "0,4", "0,8", "0,64"}},
    {"amd-epyc7402-zen2-smt2-2pkg-nps4-8numa-16l3.xml",
     {"0,0", "0,48", kNoCluster, "0,1", "0,3", "0,6"}},
    {"xeon-silver4108-skylake-smt2-2pkg-2numa-32pu.xml",
     {"0,0", "0,16", kNoCluster, "0,1", kNodeOneLlc, "0,8"}},
    {"xeon-gold6230-cascadelake-snc2-smt2-2pkg-4numa-80pu.xml",
     {"0,0", "0,40", kNoCluster, "0,2", kNodeOneLlc, "0,1"}},
    {"intel-raptorlake-i7-1370p-hybrid-6p8e-20pu.xml",
     {"0,0", "0,1", "12,13", "0,2", kOneLlc, kOneNode}},
    {"amd-ryzen-ai9-hx370-zen5-strixpoint-smt2-2l3-asym.xml",
     {"0,0", "0,12", kNoCluster, "0,1", "0,4", kOneNode}},
    {"power9-smt4-2pkg-2numa-176pu-sierra-asym-l3.xml",
     {"0,0", "0,1", kNoCluster, "0,4", "0,8", "0,88"}},
    {"xeon-max9462-sapphirerapids-snc4-smt2-2pkg-8numa.xml",
     {"0,0", "0,64", kNoCluster, "0,1", kNodeOneLlc, "0,32"}},
    {"arm64-nvidia-gb10-hybrid-nosmt-2l3-20c.xml",
     {"0,0", kNoSmt, kNoCluster, "0,1", "0,10", kOneNode}},
    {"model/box-a-80c-nosmt-1llc.xml", {"0,0", kNoSmt, kNoCluster, "0,1", kOneLlc, kOneNode}},
    {"model/box-a2-80c-nosmt-l2pairs.xml", {"0,0", kNoSmt, kNoCluster, "0,1", "0,2", kOneNode}},
    {"model/box-b-20c-smt8-contig-1llc.xml", {"0,0", "0,1", kNoCluster, "0,8", kOneLlc, kOneNode}},
    {"model/box-b2-20c-smt8-contig-llc-per-core.xml",
     {"0,0", "0,1", kNoCluster, "each LLC has one core", "0,8", kOneNode}},
    {"model/box-c-8c-smt2-stride8-1llc.xml", {"0,0", "0,8", kNoCluster, "0,1", kOneLlc, kOneNode}},
    {"model/box-d-2s-8c-smt2-stride16-slit21.xml",
     {"0,0", "0,16", kNoCluster, "0,1", kNodeOneLlc, "0,8"}},
    {"model/box-d32-2s-8c-smt2-stride16-slit32.xml",
     {"0,0", "0,16", kNoCluster, "0,1", kNodeOneLlc, "0,8"}},
    {"model/box-dn-2s-8c-nosmt-slit21.xml", {"0,0", kNoSmt, kNoCluster, "0,1", kNodeOneLlc, "0,8"}},
};

TEST(Placement, EverySharedFileHasExpectations) {
  const fs::path dir = topologies_dir();
  std::set<std::string> listed;
  for (const ExpectedClasses& e : kExpected) listed.insert(e.file);
  for (const fs::path& sub : {dir, dir / "model"})
    for (const auto& entry : fs::directory_iterator(sub))
      if (entry.path().extension() == ".xml") {
        EXPECT_TRUE(listed.count(fs::relative(entry.path(), dir).string()))
            << entry.path() << " has no expected classes in placement_test.cpp";
      }
}

TEST(Placement, SharedFilesFirstPairsAndReasons) {
  for (const ExpectedClasses& e : kExpected) {
    SCOPED_TRACE(e.file);
    const std::vector<ClassPairs> all = choose_pairs(machine(e.file));
    ASSERT_EQ(all.size(), kAllClasses.size());
    for (size_t i = 0; i < all.size(); ++i) {
      EXPECT_EQ(all[i].cls, kAllClasses[i]);
      EXPECT_EQ(describe(all[i]), e.classes[i]) << class_id(all[i].cls);
    }
  }
}

// Invariants for any topology and any N: pairs really have their class, are CPU-disjoint, at most
// N; a class is available iff some pair of it exists; the first pair is the lowest waker with a
// partner and its lowest partner; no pair left out would have reached more new NUMA nodes, then
// LLCs, then cores than the one chosen in its place.
void check_choice(const Topology& t, int n) {
  const std::vector<ClassPairs> all = choose_pairs(t, n);
  ASSERT_EQ(all.size(), kAllClasses.size());
  for (const ClassPairs& cp : all) {
    SCOPED_TRACE(std::string(class_id(cp.cls)) + " N=" + std::to_string(n));
    std::vector<CpuPair> candidates;
    for (int a : t.cpus())
      for (int b : t.cpus())
        if (classify(t, a, b) == cp.cls) candidates.emplace_back(a, b);
    EXPECT_EQ(cp.available, !candidates.empty());
    EXPECT_EQ(cp.available, !cp.pairs.empty());
    EXPECT_EQ(cp.reason.empty(), cp.available);
    EXPECT_LE(static_cast<int>(cp.pairs.size()), n);
    if (!cp.available) continue;
    EXPECT_EQ(cp.pairs.front(), candidates.front());
    std::set<int> cpus, cores, llcs, nodes;
    auto fresh = [](const std::set<int>& used, int x, int y) {
      return static_cast<int>((x >= 0 && !used.count(x)) + (y >= 0 && y != x && !used.count(y)));
    };
    for (size_t k = 0; k < cp.pairs.size(); ++k) {
      const auto [a, b] = cp.pairs[k];
      EXPECT_EQ(classify(t, a, b), cp.cls) << a << "," << b;
      EXPECT_FALSE(cpus.count(a) || cpus.count(b)) << "pair " << k << " reuses a CPU";
      auto score = [&](int x, int y) {
        const Pu &px = *t.find(x), &py = *t.find(y);
        return std::make_tuple(fresh(nodes, px.numa, py.numa), fresh(llcs, px.llc, py.llc),
                               fresh(cores, px.core, py.core));
      };
      if (k > 0)
        for (const auto& [x, y] : candidates)
          if (!cpus.count(x) && !cpus.count(y)) {
            EXPECT_LE(score(x, y), score(a, b))
                << x << "," << y << " spreads further than pair " << k;
          }
      for (int c : {a, b}) {
        const Pu& p = *t.find(c);
        cpus.insert(c);
        cores.insert(p.core);
        llcs.insert(p.llc);
        nodes.insert(p.numa);
      }
    }
    // Fewer pairs only when no CPU-disjoint candidate is left.
    if (static_cast<int>(cp.pairs.size()) < n) {
      for (const auto& [x, y] : candidates)
        EXPECT_TRUE(cpus.count(x) || cpus.count(y)) << x << "," << y << " was left out";
    }
  }
}

TEST(Placement, SharedFilesPairInvariants) {
  for (const ExpectedClasses& e : kExpected) {
    SCOPED_TRACE(e.file);
    const Topology t = machine(e.file);
    check_choice(t, 1);
    check_choice(t, 3);
  }
}

TEST(Placement, SpreadOverNodesLlcsCores) {
  const auto silver = choose_pairs(machine("xeon-silver4108-skylake-smt2-2pkg-2numa-32pu.xml"), 2);
  EXPECT_EQ(describe(of(silver, PlacementClass::kSameCpu)), "0,0 8,8");
  EXPECT_EQ(describe(of(silver, PlacementClass::kSmtSibling)), "0,16 8,24");
  EXPECT_EQ(describe(of(silver, PlacementClass::kLlc)), "0,1 8,9");
  EXPECT_EQ(describe(of(silver, PlacementClass::kCrossNuma)), "0,8 1,9");

  const auto epyc = choose_pairs(machine("amd-epyc7402-zen2-smt2-2pkg-nps4-8numa-16l3.xml"), 3);
  EXPECT_EQ(describe(of(epyc, PlacementClass::kSmtSibling)), "0,48 6,54 12,60");
  EXPECT_EQ(describe(of(epyc, PlacementClass::kLlc)), "0,1 6,7 12,13");
  EXPECT_EQ(describe(of(epyc, PlacementClass::kCrossLlc)), "0,3 6,9 12,15");
  EXPECT_EQ(describe(of(epyc, PlacementClass::kCrossNuma)), "0,6 12,18 24,30");

  const auto kunpeng = choose_pairs(machine("arm64-kunpeng920-nosmt-2pkg-4numa-128c.xml"), 2);
  EXPECT_EQ(describe(of(kunpeng, PlacementClass::kCluster)), "0,1 32,33");
  EXPECT_EQ(describe(of(kunpeng, PlacementClass::kCrossNuma)), "0,32 64,96");

  // Fewer pairs when the machine has fewer: 6 SMT cores, two E-core clusters of 4.
  const auto raptor = choose_pairs(machine("intel-raptorlake-i7-1370p-hybrid-6p8e-20pu.xml"), 8);
  EXPECT_EQ(describe(of(raptor, PlacementClass::kSmtSibling)), "0,1 2,3 4,5 6,7 8,9 10,11");
  EXPECT_EQ(describe(of(raptor, PlacementClass::kCluster)), "12,13 14,15 16,17 18,19");
}

TEST(Placement, SyntheticTopologies) {
  const Topology two = Topology::from_synthetic("pack:1 l3:1 core:2 pu:1");
  const auto pairs = choose_pairs(two, 4);
  EXPECT_EQ(describe(of(pairs, PlacementClass::kSameCpu)), "0,0 1,1");
  EXPECT_EQ(describe(of(pairs, PlacementClass::kLlc)), "0,1");  // 1,0 reuses both CPUs
  EXPECT_EQ(describe(of(pairs, PlacementClass::kCrossLlc)), kOneLlc);
  EXPECT_EQ(describe(of(pairs, PlacementClass::kCrossNuma)), kOneNode);

  const Topology cls = Topology::from_synthetic("pack:2 numa:1 l3:2 l2:2 core:2 pu:2");
  EXPECT_EQ(classify(cls, 0, 1), PlacementClass::kSmtSibling);
  EXPECT_EQ(classify(cls, 0, 2), PlacementClass::kCluster);
  EXPECT_EQ(classify(cls, 0, 4), PlacementClass::kLlc);
  EXPECT_EQ(classify(cls, 0, 8), PlacementClass::kCrossLlc);
  EXPECT_EQ(classify(cls, 0, 16), PlacementClass::kCrossNuma);
  EXPECT_EQ(classify(cls, 16, 0), PlacementClass::kCrossNuma);
  check_choice(cls, 1);
  check_choice(cls, 5);

  const Topology no_cache = Topology::from_synthetic("pack:1 core:4 pu:1");
  EXPECT_EQ(describe(of(choose_pairs(no_cache), PlacementClass::kLlc)),
            "no L2 or L3 cache above the PUs");
}

TEST(Placement, Errors) {
  const Topology t = Topology::from_synthetic("pack:1 l3:1 core:2 pu:1");
  EXPECT_THROW(classify(t, 0, 7), std::out_of_range);
  EXPECT_THROW(choose_pairs(t, 0), std::invalid_argument);
}

TEST(Placement, TopologyJsonMatchesContract) {
  const Topology t = machine("xeon-silver4108-skylake-smt2-2pkg-2numa-32pu.xml");
  // docs/result-set.md#topology: `wakebench topology --json`.
  const auto expected = nlohmann::ordered_json::parse(R"({
    "source": "xml:xeon-silver4108-skylake-smt2-2pkg-2numa-32pu.xml",
    "counts": { "pus": 32, "cores": 16, "l2_groups": 16, "llcs": 2, "numa_nodes": 2, "packages": 2 },
    "smt": { "width": 2, "numbering": "strided", "stride": 16 },
    "classes": [
      { "class": "same-cpu", "available": true, "pairs": [[0, 0]] },
      { "class": "smt-sibling", "available": true, "pairs": [[0, 16]] },
      { "class": "cluster", "available": false, "reason": "no cluster cache in any LLC" },
      { "class": "llc", "available": true, "pairs": [[0, 1]] },
      { "class": "cross-llc", "available": false, "reason": "each NUMA node has one LLC" },
      { "class": "cross-numa", "available": true, "pairs": [[0, 8]] } ] })");
  const nlohmann::ordered_json got = topology_json(t, choose_pairs(t));
  EXPECT_EQ(got, expected) << got.dump();
  EXPECT_EQ(got.dump(), expected.dump());  // same key order as the contract
  const nlohmann::json plain = got;        // embeds into result sets as nlohmann::json
  EXPECT_EQ(plain["classes"][1]["pairs"][0][1], 16);
}

TEST(Placement, LiveMachineInvariants) {
  const Topology t = Topology::from_system();
  check_choice(t, 1);
  check_choice(t, 2);
  const auto all = choose_pairs(t);
  EXPECT_TRUE(of(all, PlacementClass::kSameCpu).available);
  const std::vector<int> cpus = t.cpus();
  for (const ClassPairs& cp : all)
    for (const auto& [a, b] : cp.pairs) {
      EXPECT_TRUE(std::binary_search(cpus.begin(), cpus.end(), a));
      EXPECT_TRUE(std::binary_search(cpus.begin(), cpus.end(), b));
    }
  if (t.smt().width == 1) {
    EXPECT_EQ(of(all, PlacementClass::kSmtSibling).reason, kNoSmt);
  }
  if (t.counts().llcs == 1) {
    EXPECT_EQ(of(all, PlacementClass::kCrossLlc).reason, kOneLlc);
  }
  if (t.counts().numa_nodes == 1) {
    EXPECT_EQ(of(all, PlacementClass::kCrossNuma).reason, kOneNode);
  }
}

// ---- `wakebench topology` end to end ----

struct CommandResult {
  int status = -1;
  std::string out, err;
};

CommandResult run_command(const std::string& command) {
  const fs::path dir = fs::temp_directory_path();
  const std::string tag = "wb-placement-test-" + std::to_string(getpid());
  const fs::path out = dir / (tag + ".out"), err = dir / (tag + ".err");
  const int raw = std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
  CommandResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::stringstream o, e;
  o << std::ifstream(out).rdbuf();
  e << std::ifstream(err).rdbuf();
  r.out = o.str();
  r.err = e.str();
  fs::remove(out);
  fs::remove(err);
  return r;
}

int first_allowed_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) throw std::runtime_error("sched_getaffinity");
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) return c;
  throw std::runtime_error("no allowed CPU");
}

TEST(PlacementCli, TasksetRestrictsLiveTopology) {
  const int cpu = first_allowed_cpu();  // CPU 0 on an unrestricted run
  const CommandResult r =
      run_command("taskset -c " + std::to_string(cpu) + " " WB_BINARY " topology --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["source"].get<std::string>().rfind("live:", 0), 0u);
  EXPECT_EQ(j["counts"]["pus"], 1);
  EXPECT_EQ(j["counts"]["cores"], 1);
  EXPECT_EQ(j["smt"]["numbering"], "none");
  ASSERT_EQ(j["classes"].size(), 6u);
  EXPECT_EQ(j["classes"][0]["class"], "same-cpu");
  EXPECT_EQ(j["classes"][0]["pairs"], nlohmann::json::array({{cpu, cpu}}));
  for (size_t i = 1; i < 6; ++i) {
    EXPECT_EQ(j["classes"][i]["available"], false) << j["classes"][i];
    EXPECT_FALSE(j["classes"][i]["reason"].get<std::string>().empty());
  }
}

TEST(PlacementCli, XmlJsonAndText) {
  const std::string file =
      (topologies_dir() / "xeon-silver4108-skylake-smt2-2pkg-2numa-32pu.xml").string();
  const CommandResult json =
      run_command(WB_BINARY " topology --json --pairs-per-class 2 --topology " + file);
  ASSERT_EQ(json.status, 0) << json.err;
  const Topology t = Topology::from_xml(file);
  EXPECT_EQ(nlohmann::ordered_json::parse(json.out), topology_json(t, choose_pairs(t, 2)));

  const CommandResult text = run_command(WB_BINARY " topology --topology " + file);
  ASSERT_EQ(text.status, 0) << text.err;
  for (const std::string line :
       {"counts: 32 PUs, 16 cores, 16 L2 groups, 2 LLCs, 2 NUMA nodes, 2 packages\n",
        "SMT: width 2, numbering strided +16\n", "  smt-sibling  0,16\n",
        "  cluster      unavailable: no cluster cache in any LLC\n", "  cross-numa   0,8\n"})
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "in:\n" << text.out;
}

}  // namespace
}  // namespace wb
