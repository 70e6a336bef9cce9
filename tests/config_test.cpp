#include "common/schema/config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "benchmarks/registry.h"
#include "common/util/cpulist.h"

namespace wb {
namespace {

const std::vector<std::string> kKnown = {"pipe", "eventfd"};

std::string error_of(const std::string& text) {
  try {
    parse_config(text, "x.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

std::string expand_error_of(const std::string& text, const Topology& topo) {
  try {
    expand_cases(parse_config(text, "x.json"), topo, kKnown);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

const char* kGood = R"({"schema_version": 1, "name": "t",
  "defaults": {"round_trips": 100, "warmup": 10, "repetitions": 2},
  "cases": [{"mechanisms": ["pipe"], "modes": ["threads", "processes"],
             "placements": ["same-cpu", "llc", "smt-sibling", "kernel"],
             "params": {"payload": [1, 64]}}]})";

Topology xeon() {
  return Topology::from_xml(std::string(WB_FIXTURES_DIR) +
                            "/topologies/xeon-silver4108-skylake-smt2-2pkg-2numa-32pu.xml");
}

TEST(Config, ExpandsTheCrossProduct) {
  const auto cases = expand_cases(parse_config(kGood, "x.json"), xeon(), kKnown);
  ASSERT_EQ(cases.size(), 2u * 4u * 2u);
  EXPECT_EQ(cases[0].name, "pipe/threads/same-cpu");
  EXPECT_EQ(cases[1].name, "pipe/threads/same-cpu/payload=64");
  EXPECT_EQ(cases[0].round_trips, 100);
  EXPECT_EQ(cases[0].warmup, 10);
  EXPECT_EQ(cases[0].repetitions, 2);
  for (const auto& c : cases) {
    std::string name = c.name;
    if (auto at = name.find("/payload=64"); at != std::string::npos) name.erase(at);
    EXPECT_EQ(name.find_first_of("0123456789"), std::string::npos) << "no CPU ids: " << c.name;
    if (c.placement == "smt-sibling") {
      ASSERT_EQ(c.cpu_pairs.size(), 1u);
      EXPECT_EQ(c.cpu_pairs[0], CpuPair(0, 16));
    }
    if (c.placement == "kernel") {
      EXPECT_TRUE(c.by_kernel());
      EXPECT_EQ(c.cpuset.size(), 32u);
      EXPECT_EQ(c.cpu_pairs[0], CpuPair(0, 1));  // the documented start placement
    }
  }
}

TEST(Config, UnavailableClassBecomesASkippedCaseWithTheReason) {
  const auto topo = Topology::from_synthetic("pack:1 l3:1 core:2 pu:1");
  const auto cases = expand_cases(parse_config(kGood, "x.json"), topo, kKnown);
  bool found = false;
  for (const auto& c : cases)
    if (c.placement == "smt-sibling") {
      found = true;
      EXPECT_EQ(c.skip_reason.rfind("unavailable: no SMT", 0), 0u) << c.skip_reason;
    } else {
      EXPECT_TRUE(c.skip_reason.empty()) << c.name;
    }
  EXPECT_TRUE(found);
}

TEST(Config, PairsPerClassAppendsThePairIndex) {
  const auto cases = expand_cases(
      parse_config(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
                     "placements":["cross-numa"]}]})",
                   "x.json"),
      xeon(), kKnown, 2);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].name, "pipe/threads/cross-numa/pair0");
  EXPECT_EQ(cases[1].name, "pipe/threads/cross-numa/pair1");
  EXPECT_EQ(cases[0].placement, "cross-numa");
  EXPECT_NE(cases[0].cpu_pairs[0], cases[1].cpu_pairs[0]);
}

// The pairs knob runs K pairs at once, spread like --pairs-per-class: CPU-disjoint pairs of the
// class while the machine has them, then the same pairs again with waker and wakee swapped.
TEST(Config, ConcurrentPairsAreSpreadOverDisjointCpus) {
  const auto cases = expand_cases(
      parse_config(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
                     "placements":["llc", "cross-numa", "kernel"], "params": {"pairs": [4]}}]})",
                   "x.json"),
      xeon(), kKnown);
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto pairs = concurrent_pairs(c);
    ASSERT_EQ(pairs.size(), 4u);
    std::set<int> cpus;
    for (auto [w, e] : pairs) {
      EXPECT_TRUE(cpus.insert(w).second) << "CPU " << w << " used twice";
      EXPECT_TRUE(cpus.insert(e).second) << "CPU " << e << " used twice";
      if (!c.by_kernel()) {
        EXPECT_EQ(class_id(classify(xeon(), w, e)), c.placement);
      }
    }
  }
  EXPECT_EQ(cases[0].cpu_pairs[0], CpuPair(0, 1)) << "the placement's own pair comes first";
  // Two CPUs, one llc pair: the second pair is the first one swapped.
  const auto two = expand_cases(
      parse_config(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
                     "placements":["llc", "same-cpu", "kernel"], "params": {"pairs": [3]}}]})",
                   "x.json"),
      Topology::from_synthetic("pack:1 l3:1 core:2 pu:1"), kKnown);
  ASSERT_EQ(two.size(), 3u);
  EXPECT_EQ(two[0].cpu_pairs, (std::vector<CpuPair>{{0, 1}, {1, 0}, {0, 1}}));
  EXPECT_EQ(two[1].cpu_pairs, (std::vector<CpuPair>{{0, 0}, {1, 1}, {0, 0}}));
  EXPECT_EQ(two[2].cpu_pairs, (std::vector<CpuPair>{{0, 1}, {1, 0}, {0, 1}}))
      << "kernel start CPUs";
}

// matrix: every ordered CPU pair, the diagonal included, each cell pinned and named by its CPUs.
TEST(Config, MatrixPlacementCoversEveryOrderedPair) {
  const auto cases = expand_cases(
      parse_config(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
                     "placements":["matrix:0,1,16"]}]})",
                   "x.json"),
      xeon(), kKnown);
  ASSERT_EQ(cases.size(), 9u);
  std::set<CpuPair> seen;
  for (const auto& c : cases) {
    EXPECT_FALSE(c.by_kernel());
    ASSERT_EQ(c.cpu_pairs.size(), 1u);
    seen.insert(c.cpu_pairs[0]);
    EXPECT_EQ(c.placement, "cpu:" + std::to_string(c.cpu_pairs[0].first) + "," +
                               std::to_string(c.cpu_pairs[0].second));
    EXPECT_EQ(c.name, "pipe/threads/matrix/" + std::to_string(c.cpu_pairs[0].first) + "-" +
                          std::to_string(c.cpu_pairs[0].second));
  }
  EXPECT_EQ(seen.size(), 9u);
  EXPECT_TRUE(seen.count({16, 0}) && seen.count({0, 16}) && seen.count({1, 1}));
  const auto all = expand_cases(
      parse_config(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
                     "placements":["matrix"]}]})",
                   "x.json"),
      xeon(), kKnown);
  EXPECT_EQ(all.size(), 32u * 32u);
  EXPECT_THROW(expand_cases(parse_config(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],
                   "modes":["threads"], "placements":["matrix:0,99"]}]})",
                                         "x.json"),
                            xeon(), kKnown),
               std::runtime_error);
}

TEST(Config, KernelPlacements) {
  const auto cases = expand_cases(
      parse_config(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
                     "placements":["kernel:llc", "kernel:30,31", "kernel:smt-sibling"]}]})",
                   "x.json"),
      xeon(), kKnown);
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].name, "pipe/threads/kernel-llc");
  EXPECT_EQ(cases[0].cpuset, (std::vector<int>{0, 1}));
  EXPECT_EQ(cases[1].name, "pipe/threads/kernel-2cpus");
  EXPECT_EQ(cases[1].cpuset, (std::vector<int>{30, 31}));
  EXPECT_EQ(cases[1].cpu_pairs[0], CpuPair(30, 31));
  EXPECT_EQ(cases[2].cpuset, (std::vector<int>{0, 16}));
}

// `start` sets a kernel case's start CPUs apart from its cpuset: the wakee can start on a CPU
// other than the cpuset's second lowest (here on another core, with the waker's sibling allowed).
TEST(Config, StartKnobSetsAKernelCasesStartCpus) {
  const auto cases = expand_cases(
      parse_config(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
                     "placements":["kernel:0-2,16-18"],
                     "params":{"start":["0,2", "2,0"], "background":["2"]}}]})",
                   "x.json"),
      xeon(), kKnown);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].name, "pipe/threads/kernel-6cpus/bg=2/start=0,2");
  EXPECT_EQ(cases[0].cpu_pairs, (std::vector<CpuPair>{{0, 2}}));
  EXPECT_EQ(cases[1].cpu_pairs, (std::vector<CpuPair>{{2, 0}}));
  EXPECT_EQ(cases[0].cpuset, (std::vector<int>{0, 1, 2, 16, 17, 18}));
  EXPECT_EQ(to_json(cases[0].params)["start"], nlohmann::json::array({0, 2}));
  // Without the knob the start is the cpuset's two lowest CPUs, and nothing is recorded.
  const auto plain = expand_cases(
      parse_config(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
                     "placements":["kernel:0-2,16-18"]}]})",
                   "x.json"),
      xeon(), kKnown);
  EXPECT_EQ(plain[0].cpu_pairs, (std::vector<CpuPair>{{0, 1}}));
  EXPECT_FALSE(to_json(plain[0].params).contains("start"));
  EXPECT_TRUE(same_workload(cases[0].params, cases[1].params));
  EXPECT_FALSE(cases[0].params == cases[1].params);
}

TEST(Config, StartKnobErrors) {
  const auto topo = xeon();
  auto with = [&](const std::string& placement, const std::string& params) {
    return expand_error_of(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],
              "modes":["threads"],"placements":[")" +
                               placement + R"("],"params":)" + params + "}]}",
                           topo);
  };
  EXPECT_NE(with("kernel:0-3", R"({"start":["0,5"]})")
                .find("cases[0].params.start: CPU 5 is not in kernel:0-3's cpuset 0-3"),
            std::string::npos);
  EXPECT_NE(with("llc", R"({"start":["0,1"]})").find("only for kernel placements"),
            std::string::npos);
  EXPECT_NE(with("kernel", R"({"start":["0,1"], "pairs":[2]})").find("pairs > 1"),
            std::string::npos);
  for (const char* bad : {R"("0")", R"("0,1,2")", R"("a,1")", R"("0-1,2")", R"([0])", R"(3)"})
    EXPECT_NE(error_of(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
               "placements":["kernel"], "params": {"start": [)" +
                       std::string(bad) + "]}}]}")
                  .find("params.start: expected \"a,b\""),
              std::string::npos)
        << bad;
}

TEST(Config, ErrorsNameTheFileAndTheKey) {
  EXPECT_EQ(error_of("{"), error_of("{"));  // deterministic
  EXPECT_NE(error_of("{").find("config x.json: invalid JSON at byte"), std::string::npos);
  // A number beyond a double is invalid JSON too, not an escaped library exception (found by
  // fuzzing: tests/fuzz/corpus/config/crash-number-overflow-*).
  EXPECT_NE(
      error_of(R"({"schema_version": 1e999, "cases": []})").find("config x.json: invalid JSON"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 1, "cases": [], "bogus": 1})")
                .find("config x.json: bogus: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 2, "cases": []})").find("schema_version: unsupported"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"cases": []})").find("schema_version: missing"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["thread"],
               "placements":["llc"]}]})")
                .find("cases[0].modes[0]: unknown mode \"thread\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
               "placements":["llc"], "params": {"payload": ["x"]}}]})")
                .find("params.payload: expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
               "placements":["llc"], "params": {"colour": [1]}}]})")
                .find("unknown knob \"colour\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version":1,"defaults":{"round_trips":0},"cases":[{}]})")
                .find("defaults.round_trips: expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version":1,"cases":[{"modes":["threads"],"placements":["llc"]}]})")
                .find("cases[0].mechanisms: missing"),
            std::string::npos);
  for (const auto& e : {error_of("{"), error_of(R"({"cases": []})")})
    EXPECT_EQ(e.find('\n'), std::string::npos) << "one line: " << e;
}

TEST(Config, ExpansionErrors) {
  const auto topo = xeon();
  EXPECT_NE(expand_error_of(R"({"schema_version":1,"cases":[{"mechanisms":["pipez"],
              "modes":["threads"],"placements":["llc"]}]})",
                            topo)
                .find("cases[0].mechanisms[0]: unknown mechanism \"pipez\" (known: pipe, eventfd)"),
            std::string::npos);
  EXPECT_NE(expand_error_of(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],
              "modes":["threads"],"placements":["same-llc"]}]})",
                            topo)
                .find("cases[0].placements[0]: unknown placement \"same-llc\""),
            std::string::npos);
  EXPECT_NE(expand_error_of(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],
              "modes":["threads"],"placements":["kernel:0,99"]}]})",
                            topo)
                .find("CPU 99 is offline or not allowed"),
            std::string::npos);
  EXPECT_NE(expand_error_of(R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],
              "modes":["threads"],"placements":["kernel:0-"]}]})",
                            topo)
                .find("cases[0].placements[0]"),
            std::string::npos);
  EXPECT_NE(expand_error_of(R"({"schema_version":1,"cases":[
              {"mechanisms":["pipe"],"modes":["threads"],"placements":["llc"]},
              {"mechanisms":["pipe"],"modes":["threads"],"placements":["llc"]}]})",
                            topo)
                .find("duplicate case pipe/threads/llc (also from cases[0])"),
            std::string::npos);
}

// Every config the repository ships parses and expands on this machine with the real mechanisms,
// and every claim of a seed config names cases the config really produces.
TEST(Config, ShippedConfigsParseAndExpand) {
  std::vector<std::string> known;
  for (const Mechanism* m : all_mechanisms()) known.emplace_back(m->id());
  const Topology live = Topology::from_system();
  size_t n = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(WB_SOURCE_DIR) + "/configs")) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    ++n;
    const Config c = load_config(entry.path().string());
    EXPECT_FALSE(c.entries.empty());
    // The lab's configs name CPUs of its qemu guests, not of this machine: each expands on its
    // preset's guest topology (configs/lab/topologies/<preset>.xml), and a searched one into the
    // cases its record names; vm-test.json is parsed only.
    const bool lab = entry.path().string().find("/configs/lab/") != std::string::npos;
    const auto xml = std::filesystem::path(WB_SOURCE_DIR) / "configs/lab/topologies" /
                     (entry.path().stem().string() + ".xml");
    if (lab && !std::filesystem::exists(xml)) continue;
    const auto cases = expand_cases(c, lab ? Topology::from_xml(xml.string()) : live, known);
    if (c.json.contains("search")) {
      ASSERT_EQ(c.json["search"]["cases"].size(), cases.size());
      for (size_t k = 0; k < cases.size(); ++k)
        EXPECT_EQ(c.json["search"]["cases"][k]["case"], cases[k].name);
    }
    std::set<std::string> names;
    for (const auto& cs : cases) names.insert(cs.name);
    for (const auto& claim : c.json.value("claims", nlohmann::json::array()))
      for (const auto& name : claim["cases"]) EXPECT_TRUE(names.count(name)) << name;
  }
  EXPECT_GE(n, 7u) << "quick, overhead and the seed configs at least";
}

// The sched-feature seeds (configs/seeds/README.md#features) plan on the lab preset each is
// written for: no case skipped, the kernel cases on the CPUs their claims reason about.
TEST(Config, FeatureSeedsPlanOnTheirPresets) {
  std::vector<std::string> known;
  for (const Mechanism* m : all_mechanisms()) known.emplace_back(m->id());
  const std::string dir = std::string(WB_SOURCE_DIR) + "/configs/";
  const std::pair<const char*, const char*> seeds[] = {{"wake-affine", "2llc"},
                                                       {"idle-search", "4core"},
                                                       {"queueing", "2llc"},
                                                       {"preemption", "2llc"}};
  std::map<std::string, std::string> kernel;  // case -> "cpuset start"
  for (const auto& [seed, preset] : seeds) {
    SCOPED_TRACE(seed);
    const Config c = load_config(dir + "seeds/features-" + seed + ".json");
    EXPECT_FALSE(c.json["claims"].empty());
    const auto cases =
        expand_cases(c, Topology::from_xml(dir + "lab/topologies/" + preset + ".xml"), known);
    for (const CaseSpec& cs : cases) {
      EXPECT_EQ(cs.skip_reason, "") << cs.name;
      if (!cs.cpuset.empty())
        kernel[cs.name] = format_cpu_list(cs.cpuset) + " " +
                          std::to_string(cs.cpu_pairs.at(0).first) + "," +
                          std::to_string(cs.cpu_pairs.at(0).second);
    }
  }
  EXPECT_EQ(kernel["pipe/threads/kernel-cross-llc"], "0,2 0,2");
  EXPECT_EQ(kernel["eventfd/threads/kernel-cross-llc/bg=prev-cpu"], "0,2 0,2");
  EXPECT_EQ(kernel["pipe/threads/kernel/bg=1-2/start=0,1"], "0-3 0,1");
}

// The loaded configs (issue 53) plan on the presets they are scaled to: no case skipped, the
// duty-cycled pair from CPUs 0 and 2 (one core apart), every fan-out group at its task count, every
// case one its mechanism runs.
TEST(Config, LoadedConfigsPlanOnTheirPresets) {
  std::vector<std::string> known;
  for (const Mechanism* m : all_mechanisms()) known.emplace_back(m->id());
  const std::string dir = std::string(WB_SOURCE_DIR) + "/configs/lab/";
  const std::tuple<const char*, const char*, std::size_t> loads[] = {
      {"loads-6cpu", "smt2-3core", 12 + 6 + 3},
      {"loads-8cpu", "smt2-2socket-numa", 12 + 6 + 3},
      {"loads-8cpu", "arm64-smt2-cls", 12 + 6 + 3},
      {"loads-8cpu", "x86-cls4", 12 + 6 + 3},
      {"loads-4cpu", "smt2", 12 + 3 + 3}};
  for (const auto& [config, preset, count] : loads) {
    SCOPED_TRACE(std::string(config) + " on " + preset);
    const Topology topo = Topology::from_xml(dir + "topologies/" + preset + ".xml");
    const auto cases = expand_cases(load_config(dir + config + ".json"), topo, known);
    EXPECT_EQ(cases.size(), count);
    for (const CaseSpec& cs : cases) {
      EXPECT_EQ(cs.skip_reason, "") << cs.name;
      // The mechanism takes its params too (a guest would skip the case "unsupported: ...").
      const auto why = find_mechanism(cs.mechanism)->skip_reason(cs, topo);
      EXPECT_NE(why.value_or("").rfind("unsupported:", 0), 0u) << cs.name << ": " << *why;
      if (cs.params.duty) {
        EXPECT_EQ(cs.cpu_pairs.at(0), (CpuPair{0, 2})) << cs.name;
      }
    }
  }
}

TEST(Config, ClaimsAreValidated) {
  const std::string base =
      R"({"schema_version":1,"cases":[{"mechanisms":["pipe"],"modes":["threads"],
      "placements":["llc"]}], "claims": )";
  EXPECT_NE(error_of(base + R"([{"seed": "000", "text": "t"}]})").find("claims[0].cases: missing"),
            std::string::npos);
  EXPECT_NE(error_of(base + R"([{"seed": "000", "text": "t", "cases": ["x"], "metric": "max"}]})")
                .find("claims[0].metric: expected one of"),
            std::string::npos);
  EXPECT_NE(error_of(base + R"([{"seed": "000", "text": "t", "cases": ["x"],
                                  "needs_hardware": "yes"}]})")
                .find("claims[0].needs_hardware: expected true or false"),
            std::string::npos);
  EXPECT_EQ(error_of(base + R"([{"seed": "f", "text": "t", "cases": ["x"], "metric": "placement",
                                  "needs_hardware": false}]})"),
            "");
  EXPECT_NE(error_of(base + R"([{"seed": "000", "text": "t", "cases": ["x"], "why": 1}]})")
                .find("claims[0].why: unknown key"),
            std::string::npos);
  EXPECT_NE(
      error_of(base + R"([{"seed": "000", "text": "t", "cases": ["x"], "policy": "sync-pairs"}]})")
          .find("claims[0].policy: unknown policy \"sync-pairs\" (known: mainline, sync-pair, "
                "sync-core, sync-core-v2, sync-2017, current-cpu)"),
      std::string::npos);
  EXPECT_EQ(error_of(base + R"([{"seed": "000", "text": "t", "cases": ["pipe/threads/llc"],
                               "policy": "sync-core-v2"}]})"),
            "");
}

}  // namespace
}  // namespace wb
