// The discrimination rule and `wakebench search` (analysis/predict/discriminate.h,
// analysis/predict/search.h, runners/cmd_search.cpp): cases the rule admits, cases it must refuse
// although the steady states differ, and the config the command writes.
#include "analysis/predict/search.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "analysis/predict/discriminate.h"
#include "analysis/predict/predict_results.h"
#include "common/schema/config.h"
#include "common/schema/registry.h"
#include "tests/support.h"

namespace wb {
namespace {

using nlohmann::json;

const std::string kLab = std::string(WB_SOURCE_DIR) + "/configs/lab/topologies/";

// The lab's SMT2 LLC of 3 cores (siblings 0-1, 2-3, 4-5), as its guest's hwloc sees it.
SchedTopology smt2_3core() { return SchedTopology(Topology::from_xml(kLab + "smt2-3core.xml")); }

SteadyResult steady(const SchedTopology& t, const std::string& policy, int a, int b,
                    std::vector<int> busy = {}, bool emulated = false) {
  SteadyOptions o;
  o.start_a = a;
  o.start_b = b;
  o.busy = std::move(busy);
  o.slow_switch_out = emulated;
  return simulate_steady_state(t, o, policy_by_id(policy));
}

// From siblings 0,1 mainline keeps the pair on the siblings and sync-2017 stacks it: 1.0 apart,
// and neither lies in the other's range.
TEST(Discriminate, StackedAgainstSplitDiscriminates) {
  const SchedTopology t = smt2_3core();
  const Separation s = separation(steady(t, "mainline", 0, 1), steady(t, "sync-2017", 0, 1));
  EXPECT_DOUBLE_EQ(s.tv, 1.0);
  EXPECT_GT(s.a_from_b, kMatchDistance);
  EXPECT_GT(s.b_from_a, kMatchDistance);
  EXPECT_TRUE(s.discriminates());
  EXPECT_GT(s.margin(), 0);
}

// The issue's own design (start 0,2, CPU 2 busy): mainline settles on 0,4 (llc), sync-core on the
// siblings 0-1, 1.0 apart; yet sync-core's range holds mainline's state (a wake that finds CPU 1
// busy for a moment sends the pair to the idle core, where it stays), so the rule refuses it and
// names the alternative.
TEST(Discriminate, FarApartButWithinARangeIsRefusedWithTheCause) {
  const SchedTopology t = smt2_3core();
  const Separation s =
      separation(steady(t, "mainline", 0, 2, {2}), steady(t, "sync-core", 0, 2, {2}));
  EXPECT_DOUBLE_EQ(s.tv, 1.0);
  EXPECT_LE(s.a_from_b, kMatchDistance);
  EXPECT_FALSE(s.discriminates());
  EXPECT_LT(s.margin(), 0);
  EXPECT_NE(std::find(s.blocking.begin(), s.blocking.end(), "busy-prev"), s.blocking.end());
}

// Under TCG's slow switch-out the stacking policy's range holds the pair pulled apart by the
// balancer: the case that discriminated natively does not.
TEST(Discriminate, EmulatedAlternativesBlockTheNativeCase) {
  const SchedTopology t = smt2_3core();
  const Separation s =
      separation(steady(t, "mainline", 0, 1, {}, true), steady(t, "sync-2017", 0, 1, {}, true));
  EXPECT_DOUBLE_EQ(s.tv, 1.0);
  EXPECT_FALSE(s.discriminates());
  EXPECT_FALSE(s.blocking.empty());
}

TEST(Discriminate, EqualSteadyStatesNever) {
  const SchedTopology t = smt2_3core();
  const Separation s = separation(steady(t, "mainline", 0, 1), steady(t, "sync-pair", 0, 1));
  EXPECT_DOUBLE_EQ(s.tv, 0.0);
  EXPECT_FALSE(s.discriminates());
}

SearchOptions lab_options(long long work_ns) {
  SearchOptions o;
  o.policies = registry().kernel_policy_ids();
  o.emulated = true;
  o.work_ns = work_ns;
  return o;
}

const PairReport& pair_of(const SearchResult& r, const std::string& a, const std::string& b) {
  for (const PairReport& p : r.pairs)
    if (p.a == a && p.b == b) return p;
  throw std::logic_error("no pair " + a + " " + b);
}

// Every chosen case discriminates what it says, by the rule itself; the pairs nothing separates
// say why; the emulated alternatives leave nothing without the work that keeps wakes clear of them.
TEST(Search, ChosenCasesDiscriminateAndThePairsSayWhyNot) {
  const SchedTopology t = smt2_3core();
  const SearchResult r = search(t, lab_options(kSwitchOutWorkNs));
  ASSERT_FALSE(r.chosen.empty());
  EXPECT_LE(r.chosen.size(), 24u);
  EXPECT_EQ(r.candidates, static_cast<int>(search_candidates(t).size()));
  for (const FoundCase& f : r.chosen) {
    ASSERT_FALSE(f.pairs.empty());
    for (const auto& [i, j] : f.pairs)
      EXPECT_TRUE(separation(f.steady[i], f.steady[j]).discriminates());
    for (int c : f.candidate.busy) EXPECT_NE(c, f.candidate.start_a);
  }
  const PairReport& core = pair_of(r, "mainline", "sync-core");
  EXPECT_EQ(core.candidates, 0);
  EXPECT_EQ(core.chosen, 0);
  EXPECT_GE(core.best_tv, kDiscriminateTv);
  EXPECT_GT(core.blocked_by.count("busy-prev"), 0u);
  EXPECT_DOUBLE_EQ(pair_of(r, "mainline", "sync-pair").best_tv, 0.0);  // SMT: sync-pair is off
  EXPECT_GE(pair_of(r, "mainline", "sync-2017").chosen, 2);
  // One chosen case tells sync-core from sync-core-v2 by their steady states.
  bool apart = false;
  for (const FoundCase& f : r.chosen)
    apart |= classes_json(f.steady[2].classes) != classes_json(f.steady[3].classes);
  EXPECT_TRUE(apart);
  const SearchResult emulated = search(t, lab_options(0));
  EXPECT_TRUE(emulated.chosen.empty());
  for (const PairReport& p : emulated.pairs) EXPECT_EQ(p.candidates, 0) << p.a << " " << p.b;
  const std::string text = render_search_text(r, lab_options(kSwitchOutWorkNs));
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) EXPECT_LE(line.size(), 100u) << line;
}

// Without SMT the stacking policies (sync-pair, sync-2017) part from the splitting ones (mainline,
// sync-core, sync-core-v2): each case tells every policy from two others, and counts once toward
// each one's quota, not once per pair (counted per pair, the quotas run out after 3 cases). On the
// lab's 4 cores: 48 candidates, 12 of which discriminate those 6 pairs, enough for 5 cases (a
// 2-socket 16-CPU box gave the same 5 cases from 4736 candidates, and took 60 s under ASan).
TEST(Search, EachCaseCountsOncePerPolicy) {
  const SchedTopology t(Topology::from_xml(kLab + "4core.xml"));
  SearchOptions o;
  o.policies = registry().kernel_policy_ids();
  o.per_pair = 1;
  o.per_policy = 5;
  const SearchResult r = search(t, o);
  EXPECT_EQ(r.chosen.size(), 5u);
  for (const FoundCase& f : r.chosen) EXPECT_EQ(f.pairs.size(), 6u);
}

TEST(Search, QuotasAndBadPolicies) {
  const SchedTopology t = smt2_3core();
  SearchOptions o = lab_options(kSwitchOutWorkNs);
  o.max_cases = 2;
  EXPECT_EQ(search(t, o).chosen.size(), 2u);
  o.policies = {"sync-2017", "mainline"};  // any order: policy order in the result
  EXPECT_EQ(search(t, o).policies, (std::vector<std::string>{"mainline", "sync-2017"}));
  o.policies = {"mainline"};
  EXPECT_THROW(search(t, o), std::invalid_argument);
  o.policies = {"mainline", "nope"};
  EXPECT_THROW(search(t, o), std::invalid_argument);
}

// The decisions objective tells two policies apart where one decides otherwise on >= 5 % of the
// other's wakes: on 2llc (no SMT) sync-pair's hook after wake_affine takes the waker's CPU where
// mainline does not, while sync-core and v2 (whose hooks need SMT) never split from mainline.
TEST(SearchObjective, DecisionsTellApartWhereTheModelsSplit) {
  const SchedTopology sched(Topology::from_xml(kLab + "2llc.xml"));
  SearchOptions opt;
  opt.policies = {"mainline", "sync-pair", "sync-core"};
  opt.objective = SearchOptions::Objective::kDecisions;
  const SearchResult r = search(sched, opt);
  ASSERT_EQ(r.pairs.size(), 3u);
  EXPECT_GT(r.pairs[0].candidates, 0);  // mainline vs sync-pair
  EXPECT_GE(r.pairs[0].best_split, kSplitShare);
  EXPECT_EQ(r.pairs[1].candidates, 0);  // mainline vs sync-core
  EXPECT_EQ(r.pairs[1].best_split, 0.0);
  for (const FoundCase& f : r.chosen)
    for (const auto& [i, j] : f.pairs)
      EXPECT_GE(std::max(f.differ[i][j], f.differ[j][i]), kSplitShare);
}

// With the busy CPUs intermittent, a candidate held to one core gets the mix, not the steady state,
// and keeps the steady state's alternatives.
TEST(SearchObjective, IntermittentCandidatesGetTheMix) {
  const SchedTopology sched(Topology::from_xml(kLab + "smt2-3core.xml"));
  SearchOptions opt;
  opt.policies = {"mainline", "sync-2017"};
  opt.intermittent = Intermittent{60, 200};
  const SearchCandidate c{{0, 1}, 0, 1, {1}};
  const auto steady = candidate_steady_states(sched, opt, c);
  ASSERT_EQ(steady.size(), 2u);
  EXPECT_NEAR(steady[0].classes.at(PlacementClass::kSameCpu), 0.6, 0.03);
  opt.intermittent.reset();
  EXPECT_DOUBLE_EQ(candidate_steady_states(sched, opt, c)[0].classes.at(PlacementClass::kSameCpu),
                   1.0);
}

struct Cli {
  int status = -1;
  std::string out;
};

Cli run_search(const std::string& args) {
  const std::string cmd = std::string(WB_BINARY) + " search " + args + " 2>&1";
  Cli r;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The config the command writes is a plain run config: it expands on the topology it was searched
// on, into cases named as its record says, each with its start, busy CPUs and work.
TEST(SearchCli, WritesARunConfigWithItsRecord) {
  const std::string dir = test::fresh_test_dir("search_cli").string();
  const std::string out = dir + "/cases.json";
  const Cli r =
      run_search("--topology " + kLab + "smt2-3core.xml --emulated --work-ns 200000 --out " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  const Config c = load_config(out);
  const auto cases =
      expand_cases(c, Topology::from_xml(kLab + "smt2-3core.xml"), registry().mechanism_ids());
  const json& rec = c.json["search"];
  ASSERT_EQ(rec["cases"].size(), cases.size());
  for (size_t k = 0; k < cases.size(); ++k) {
    EXPECT_EQ(rec["cases"][k]["case"], cases[k].name);
    EXPECT_TRUE(cases[k].by_kernel());
    EXPECT_EQ(cases[k].params.work_ns, 200000);
    ASSERT_TRUE(cases[k].params.start);
    EXPECT_FALSE(rec["cases"][k]["discriminates"].empty());
  }
  EXPECT_EQ(rec["emulated"], true);
  EXPECT_EQ(rec["slow_switch_out"], false);
  EXPECT_EQ(rec["model"]["git_sha"].get<std::string>().empty(), false);
  std::filesystem::remove_all(dir);
}

// With --duty the config's busy cases carry the duty and period, and the record says how the
// period became wakes; every chosen case records, per policy, the share of its wakes each other
// policy decides otherwise.
TEST(SearchCli, DutyGoesIntoTheConfigAndTheRecord) {
  const std::string dir = test::fresh_test_dir("search_cli").string();
  const std::string out = dir + "/cases.json";
  const Cli r =
      run_search("--topology " + kLab +
                 "smt2-3core.xml --duty 60 --period-ms 2 --round-trip-us 50 --out " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  const Config c = load_config(out);
  const auto cases =
      expand_cases(c, Topology::from_xml(kLab + "smt2-3core.xml"), registry().mechanism_ids());
  int busy = 0;
  for (const CaseSpec& cs : cases) {
    if (cs.params.background == "none") continue;
    ++busy;
    EXPECT_EQ(cs.params.duty, 60) << cs.name;
    EXPECT_EQ(cs.params.period_ms, 2) << cs.name;
  }
  EXPECT_GT(busy, 0);
  const json& rec = c.json["search"];
  EXPECT_EQ(rec["intermittent"]["period_wakes"], 80);
  EXPECT_EQ(rec["cases"][0]["differ"]["mainline"]["sync-2017"], 1.0);
  std::filesystem::remove_all(dir);
}

// --exhaustive simulates every candidate and prints the same pairs and cases as the default search
// by shape; --max-seconds cuts the search and says so first, in the text and in the record.
// CI: ~0.3 s release, ~3 s ASan.
TEST(SearchCli, ExhaustiveAgreesAndMaxSecondsSaysItCut) {
  const std::string dir = test::fresh_test_dir("search_cli").string();
  const std::string topo = "--topology " + kLab + "smt2-2socket-numa.xml --work-ns 200000";
  const Cli shapes = run_search(topo);
  const Cli all = run_search(topo + " --exhaustive");
  ASSERT_EQ(shapes.status, 0) << shapes.out;
  ASSERT_EQ(all.status, 0) << all.out;
  EXPECT_NE(all.out.find(", each simulated"), std::string::npos) << all.out;
  EXPECT_NE(shapes.out.find(" shapes ("), std::string::npos) << shapes.out;
  // The same text after the first line (candidates and shapes), past any progress lines: a search
  // over 5 s prints them on stderr, and the exhaustive one takes that long under the sanitizers.
  const auto answer = [](const std::string& out) {
    std::string kept, line;
    for (std::istringstream in(out); std::getline(in, line);)
      if (line.rfind("search: ", 0) != 0 || line.find(" simulated, ") == std::string::npos)
        kept += line + '\n';
    return kept.substr(kept.find('\n'));
  };
  EXPECT_EQ(answer(shapes.out), answer(all.out));
  // The limit holds from the command's start: a microsecond is over before the first shape
  // (on a 4096-PU topology, --max-seconds 5 printed nothing for 120 s before).
  const std::string out = dir + "/cut.json";
  const Cli cut = run_search(topo + " --max-seconds 0.000001 --out " + out);
  EXPECT_NE(cut.out.find("--max-seconds 1e-06 reached while finding the shapes, before any was "
                         "simulated: no case"),
            std::string::npos)
      << cut.out;
  EXPECT_EQ(cut.status, 1) << cut.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  std::filesystem::remove_all(dir);
}

TEST(SearchCli, BadInputIsOneLineAndWritesNothing) {
  const std::string dir = test::fresh_test_dir("search_cli").string();
  const std::string out = dir + "/cases.json";
  const std::string topo = "--topology " + kLab + "smt2-3core.xml ";
  for (const std::string& args :
       {topo + "--mechanism spin", topo + "--mechanism nope", topo + "--policies mainline",
        std::string("--topology /nope.xml"), topo + "--work-ns -1", topo + "--max-seconds 0",
        topo + "--max-seconds x", topo + "--period-ms 2", topo + "--duty 100",
        topo + "--duty 50 --round-trip-us 0", topo + "--objective cost"}) {
    const Cli r = run_search(args + " --out " + out);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
  }
  // Nothing discriminates on 2llc: exit 1, no file.
  const Cli none =
      run_search("--topology " + kLab + "2llc.xml --emulated --work-ns 200000 --out " + out);
  EXPECT_EQ(none.status, 1) << none.out;
  EXPECT_NE(none.out.find("no case discriminates any pair"), std::string::npos) << none.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wb
