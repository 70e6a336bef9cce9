// The policy model on tests/fixtures/policy-vectors.json (docs/policy-model.md#vectors), one per
// vector, through the same code path as `wakebench predict --topology F --scenario S --json`;
// plus the sched-domain construction the vectors rely on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "analysis/model/policy_model.h"
#include "analysis/predict/predict.h"
#include "common/schema/case.h"
#include "common/schema/registry.h"
#include "common/system/topology.h"

namespace wb {
namespace {

using nlohmann::json;

const std::string kFixtures = WB_FIXTURES_DIR;
const std::string kVectorsPath = kFixtures + "/policy-vectors.json";

struct Vector {
  std::string id;
  json body;  // the vector object, or null when the file could not be loaded
  std::string load_error;
};

std::vector<Vector> load_vectors() {
  std::ifstream in(kVectorsPath);
  if (!in) return {{"MissingVectorsFile", nullptr, "cannot open " + kVectorsPath}};
  json all;
  try {
    all = json::parse(in);
  } catch (const std::exception& e) {
    return {{"InvalidVectorsFile", nullptr, kVectorsPath + ": " + e.what()}};
  }
  std::vector<Vector> out;
  for (const auto& v : all) out.push_back({v.at("id").get<std::string>(), v, ""});
  if (out.empty()) return {{"EmptyVectorsFile", nullptr, kVectorsPath + " holds no vector"}};
  return out;
}

const SchedTopology& model_box(const std::string& rel) {
  static std::map<std::string, std::unique_ptr<SchedTopology>> cache;
  auto& slot = cache[rel];
  if (!slot) {
    slot = std::make_unique<SchedTopology>(Topology::from_xml(kFixtures + "/topologies/" + rel));
  }
  return *slot;
}

class PolicyVector : public ::testing::TestWithParam<Vector> {};

TEST_P(PolicyVector, AllPoliciesExactCpuAndClass) {
  const Vector& v = GetParam();
  ASSERT_TRUE(v.load_error.empty()) << "policy vectors not available: " << v.load_error;
  const json& body = v.body;
  const SchedTopology& sched = model_box(body.at("topology").get<std::string>());
  Scenario s = parse_scenario(body.at("scenario"), v.id);
  std::optional<SchedTopology> own;
  if (s.llc_level) own.emplace(sched.topology(), *s.llc_level);
  json got = predict_scenario(own ? *own : sched, s, v.id);
  const json& expect = body.at("expect");
  ASSERT_EQ(expect.size(), all_policies().size()) << "vector " << v.id << " must cover 6 policies";
  for (const auto* p : all_policies()) {
    std::string id(p->id());
    ASSERT_TRUE(expect.contains(id)) << v.id << ": no expectation for " << id;
    const json& g = got.at("policies").at(id);
    EXPECT_EQ(g.at("cpu").get<int>(), expect.at(id).at("cpu").get<int>())
        << v.id << " " << id << " path: " << g.at("path").get<std::string>();
    EXPECT_EQ(g.at("class").get<std::string>(), expect.at(id).at("class").get<std::string>())
        << v.id << " " << id;
  }
}

INSTANTIATE_TEST_SUITE_P(Section9, PolicyVector, ::testing::ValuesIn(load_vectors()),
                         [](const ::testing::TestParamInfo<Vector>& info) {
                           return info.param.id;
                         });

// Every rule the model names (docs/policy-model.md#rules) is the one that decides some vector
// under some policy, except those no vector reaches, listed here; each rule's id reads back.
TEST(PolicyVectors, EveryDecisionRuleDecidesSomeVector) {
  std::set<std::string> seen;
  for (const Vector& v : load_vectors()) {
    ASSERT_TRUE(v.load_error.empty()) << v.load_error;
    const SchedTopology& sched = model_box(v.body.at("topology").get<std::string>());
    Scenario s = parse_scenario(v.body.at("scenario"), v.id);
    std::optional<SchedTopology> own;
    if (s.llc_level) own.emplace(sched.topology(), *s.llc_level);
    const json got = predict_scenario(own ? *own : sched, s, v.id);
    for (const auto& [id, g] : got.at("policies").items()) seen.insert(g.at("rule"));
  }
  // Reached by the scenarios of other tests (PolicyModel.ResultOutsideAllowedFallsBack), or by
  // none yet: a vector for each is future work, listed so that a new one shows here.
  // ttwu_queue_wakelist needs a wakee still on its CPU, which no scenario states; EAS, the slow
  // path and select_idle_capacity() are not modelled (decision records name them).
  const std::set<std::string> uncovered = {"sis_no_sd_llc",
                                           "sis_prev_aff",
                                           "sis_recent_fallback",
                                           "sis_target_fallback",
                                           "select_fallback_rq",
                                           "ttwu_queue_wakelist",
                                           "find_energy_efficient_cpu",
                                           "sched_balance_find_dst_cpu",
                                           "sis_select_idle_capacity"};
  std::set<std::string> all;
  for (DecisionRule r : all_decision_rules()) {
    const std::string id(decision_rule_id(r));
    EXPECT_EQ(parse_decision_rule(id), r) << id;
    all.insert(id);
    EXPECT_TRUE(seen.count(id) || uncovered.count(id)) << id << " decides no vector";
    EXPECT_FALSE(seen.count(id) && uncovered.count(id)) << id << " is covered now";
  }
  for (const std::string& id : seen) EXPECT_TRUE(all.count(id)) << id;
  EXPECT_FALSE(parse_decision_rule("sis_nowhere"));
}

TEST(PolicyVectors, FileHoldsAll34Vectors) {
  auto vs = load_vectors();
  ASSERT_TRUE(vs.front().load_error.empty()) << vs.front().load_error;
  EXPECT_EQ(vs.size(), 34u);
}

// ---- sched domains --------------------------------------------------------------------------

std::vector<std::string> names(const SchedTopology& s, int cpu) {
  std::vector<std::string> out;
  for (const auto& d : s.domains(cpu)) out.push_back(d.name);
  return out;
}

TEST(SchedTopology, BoxDHasSmtMcAndAffineNumaLevel) {
  const auto& d = model_box("model/box-d-2s-8c-smt2-stride16-slit21.xml");
  EXPECT_EQ(names(d, 2), (std::vector<std::string>{"SMT", "MC", "NUMA(21)"}));
  EXPECT_TRUE(d.smt_active());
  EXPECT_EQ(d.smt_mask(2), (std::vector<int>{2, 18}));
  EXPECT_EQ(d.llc_size(2), 16);
  EXPECT_TRUE(d.cpus_share_cache(2, 23));
  EXPECT_FALSE(d.cpus_share_cache(2, 9));
  EXPECT_EQ(d.node_reclaim_distance(), 30);
  EXPECT_TRUE(d.domains(2).back().wake_affine);
}

TEST(SchedTopology, Slit32LosesWakeAffineAcrossNodes) {
  const auto& d = model_box("model/box-d32-2s-8c-smt2-stride16-slit32.xml");
  ASSERT_EQ(names(d, 2).back(), "NUMA(32)");
  EXPECT_FALSE(d.domains(2).back().wake_affine);
}

TEST(SchedTopology, LlcPerCoreDegeneratesMcIntoSmt) {
  const auto& b2 = model_box("model/box-b2-20c-smt8-contig-llc-per-core.xml");
  EXPECT_EQ(names(b2, 17), (std::vector<std::string>{"SMT", "PKG"}));
  ASSERT_NE(b2.sd_llc(17), nullptr);
  EXPECT_EQ(b2.sd_llc(17)->name, "SMT");
  EXPECT_EQ(b2.llc_size(17), 8);
  // The SIS_UTIL budgets of the default state (docs/policy-model.md#simplifications item 3).
  WakeInput w;
  w.waker = 17;
  w.prev = 42;
  w.nr_running = {{17, 1}};
  EXPECT_EQ(default_nr_idle_scan(b2, w, 17), 7);
  const auto& a2 = model_box("model/box-a2-80c-nosmt-l2pairs.xml");
  w.waker = 10;
  w.prev = 20;
  w.nr_running = {{10, 1}};
  EXPECT_EQ(default_nr_idle_scan(a2, w, 10), 1);
  EXPECT_EQ(a2.llc_size(10), 2);
  EXPECT_FALSE(a2.smt_active());
}

// The arm64-altra lab guest (configs/lab/topologies): 2-core hwloc Cluster groups, a private L2
// per core, no L3. Its 6.12 kernel built MC = the cluster and PKG (runners/lab/wblab/qemu.py
// PRESETS): the per-core LLC grows to the cluster, and CLS, which may not span as much, is gone.
TEST(SchedTopology, Arm64LlcPerCoreGrowsToTheCluster) {
  const std::string xml = std::string(WB_SOURCE_DIR) + "/configs/lab/topologies/arm64-altra.xml";
  const SchedTopology sched(Topology::from_xml(xml));
  ASSERT_EQ(sched.domains(3).size(), 2u);
  EXPECT_EQ(sched.domains(3)[0].name, "MC");
  EXPECT_EQ(sched.domains(3)[0].span, (std::vector<int>{2, 3}));
  EXPECT_EQ(sched.domains(3)[1].name, "PKG");
  EXPECT_EQ(sched.llc_size(3), 2);
  EXPECT_TRUE(sched.cpus_share_cache(2, 3));
  EXPECT_FALSE(sched.cpus_share_cache(1, 2));
  EXPECT_FALSE(sched.cluster_active());
  // An explicit --llc-level L2 keeps the per-core L2: no MC, the pair shares no cache.
  const SchedTopology l2(Topology::from_xml(xml), LlcSource::kL2);
  EXPECT_EQ(l2.llc_size(3), 1);
  EXPECT_EQ(l2.domains(3).front().name, "PKG");
}

TEST(SchedTopology, ReclaimDistanceFromTheXmlsOwnVendor) {
  SchedTopology amd(Topology::from_xml(
      kFixtures + "/topologies/amd-epyc7402-zen2-smt2-2pkg-nps4-8numa-16l3.xml"));
  EXPECT_EQ(amd.node_reclaim_distance(), 32);
  SchedTopology power(
      Topology::from_xml(kFixtures + "/topologies/power9-smt4-2pkg-2numa-128pu-butte.xml"));
  EXPECT_EQ(power.node_reclaim_distance(), 10);
  // Every remote NUMA level of a POWER box lacks SD_WAKE_AFFINE.
  for (const auto& d : power.domains(0)) {
    if (d.name.rfind("NUMA", 0) == 0) {
      EXPECT_FALSE(d.wake_affine) << d.name;
    }
  }
  SchedTopology intel(Topology::from_xml(
      kFixtures + "/topologies/xeon-silver4108-skylake-smt2-2pkg-2numa-32pu.xml"));
  EXPECT_EQ(intel.node_reclaim_distance(), 30);
}

TEST(SchedTopology, LlcLevelOverrideChangesSdLlc) {
  Topology t = Topology::from_xml(kFixtures + "/topologies/power9-smt4-2pkg-2numa-128pu-butte.xml");
  SchedTopology l3(t, LlcSource::kAuto);
  SchedTopology core(t, LlcSource::kCore);
  EXPECT_EQ(l3.llc_size(0), 8);    // L3 per core pair
  EXPECT_EQ(core.llc_size(0), 4);  // powerpc: sd_llc = one SMT4 core
  EXPECT_THROW(SchedTopology(
                   Topology::from_xml(kFixtures + "/topologies/model/box-a2-80c-nosmt-l2pairs.xml"),
                   LlcSource::kL3),
               std::invalid_argument);
}

TEST(SchedTopology, ClusterLevelOnKunpeng) {
  SchedTopology k(
      Topology::from_xml(kFixtures + "/topologies/arm64-kunpeng920-nosmt-2pkg-4numa-128c.xml"));
  EXPECT_TRUE(k.cluster_active());
  EXPECT_EQ(k.cluster_span(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(k.llc_size(0), 32);
  EXPECT_TRUE(k.cpus_share_resources(0, 3));
  EXPECT_FALSE(k.cpus_share_resources(0, 4));
  EXPECT_TRUE(k.cpus_share_cache(0, 4));
}

// The fixtures print "/sys/kernel/debug/sched/domains/cpu0/domainN/{name,flags}:VALUE".
std::vector<std::pair<std::string, std::string>> read_domains_fixture(const std::string& file) {
  std::ifstream in(kFixtures + "/captures/domains/" + file);
  std::map<int, std::pair<std::string, std::string>> by_level;
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto slash = line.rfind('/', colon);
    auto dom = line.rfind("/domain", slash);  // ".../domains/cpu0/domainN/file"
    if (slash == std::string::npos || dom == std::string::npos) continue;
    int level = std::stoi(line.substr(dom + 7));
    std::string file_name = line.substr(slash + 1, colon - slash - 1);
    if (file_name == "name") by_level[level].first = line.substr(colon + 1);
    if (file_name == "flags") by_level[level].second = line.substr(colon + 1);
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& [level, nf] : by_level) out.push_back(nf);
  return out;
}

TEST(LlcFromDebugfs, RealDomainListings) {
  auto kunpeng = read_domains_fixture(
      "debugfs-arm64-kunpeng920-96c-4numa-cpu0-name-flags-level-6.9rc-relax2.txt");
  ASSERT_EQ(kunpeng.size(), 5u);
  EXPECT_EQ(llc_source_from_domains(kunpeng), LlcSource::kAuto);  // MC is the highest LLC level
  auto spr = read_domains_fixture("debugfs-x86-spr-2s-224cpu-snc-on-cpu0-name-flags-6.4.txt");
  ASSERT_EQ(spr.size(), 4u);
  EXPECT_EQ(llc_source_from_domains(spr), LlcSource::kAuto);  // SD_SHARE_PKG_RESOURCES era
  EXPECT_EQ(llc_source_from_domains(
                {{"SMT", "SD_SHARE_CPUCAPACITY SD_SHARE_LLC"}, {"PKG", "SD_WAKE_AFFINE"}}),
            LlcSource::kCore);
  EXPECT_EQ(llc_source_from_domains({{"CLS", "SD_CLUSTER SD_SHARE_LLC"}, {"PKG", ""}}),
            LlcSource::kCluster);
  EXPECT_EQ(llc_source_from_domains({{"PKG", "SD_WAKE_AFFINE"}}), std::nullopt);
}

TEST(PolicyModel, PoliciesInDesignOrder) {
  std::vector<std::string> ids;
  for (const auto* p : all_policies()) ids.emplace_back(p->id());
  EXPECT_EQ(ids, (std::vector<std::string>{"mainline", "sync-pair", "sync-core", "sync-core-v2",
                                           "sync-2017", "current-cpu"}));
  EXPECT_THROW(policy_by_id("nope"), std::invalid_argument);
  // The vocabulary configs are checked against (a seed claim's policy) is the same list: a policy
  // in registry/registry.json with no model, or a model with no entry, fails here.
  EXPECT_EQ(ids, registry().policy_ids());
}

// Scenario-level WF_CURRENT_CPU is honoured by every policy (docs/policy-model.md#current-cpu).
TEST(PolicyModel, ScenarioCurrentCpuFlagHonouredByAll) {
  const auto& c = model_box("model/box-c-8c-smt2-stride8-1llc.xml");
  Scenario s = parse_scenario(json{{"waker", 2}, {"prev", 5}, {"current_cpu", true}}, "inline");
  json got = predict_scenario(c, s, "inline");
  for (const auto* p : all_policies()) {
    EXPECT_EQ(got["policies"][std::string(p->id())]["cpu"], 2) << p->id();
  }
}

// A prev CPU outside the allowed mask ends in select_fallback_rq.
TEST(PolicyModel, ResultOutsideAllowedFallsBack) {
  const auto& a = model_box("model/box-a-80c-nosmt-1llc.xml");
  Scenario s = parse_scenario(json{{"waker", 10}, {"prev", 11}, {"allowed", "20-21"}}, "inline");
  json got = predict_scenario(a, s, "inline");
  for (const auto* p : all_policies()) {
    int cpu = got["policies"][std::string(p->id())]["cpu"];
    EXPECT_TRUE(cpu == 20 || cpu == 21) << p->id() << " -> " << cpu;
  }
}

}  // namespace
}  // namespace wb
