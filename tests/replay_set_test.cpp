// `wakebench replay RESULTS` on a result set of `run --trace-decisions` whose side file holds real
// records of the lab's mainline kernel (tests/fixtures/decisions/smt2-3core-mainline: the
// smt2-3core guest, two searched cases, up to four records per rule with their sched_waking lines,
// cut from one run; the set keeps its environment, topology and decisions block). Every record
// agrees under mainline's model; an altered record, a wakeup without a record, another policy's
// model, a changed side file and a set without records each come out against it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/predict/predict_results.h"
#include "analysis/predict/replay_io.h"
#include "common/schema/environment.h"
#include "tests/support.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

class ReplaySet : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("replay-set");
    load(fixture());
  }
  // The set and side file under tests/fixtures/ this suite reads.
  virtual std::string fixture() const { return "decisions/smt2-3core-mainline"; }
  void load(const std::string& fixture) {
    const fs::path from = test::fixture_path(fixture);
    set_ = nlohmann::json::parse(test::read_fixture(from / "results.json"));
    side_ = test::read_fixture(from / "results.decisions.txt");
  }
  void TearDown() override { fs::remove_all(dir_); }
  // The set and its side file written to the test folder, the set naming the side file's sha256.
  std::string write(const std::string& side, bool rehash = true) {
    if (rehash) set_["decisions"]["sha256"] = sha256_hex(side);
    std::ofstream(dir_ / "results.decisions.txt") << side;
    std::ofstream(dir_ / "results.json") << set_.dump(1);
    return (dir_ / "results.json").string();
  }
  // The side file with the first sis_prev record's CPU changed (5 <-> 4).
  std::string first_sis_prev_altered() const {
    std::string side = side_;
    const auto at = side.find("rule=sis_prev cpu=");
    EXPECT_NE(at, std::string::npos);
    if (at == std::string::npos) return side;
    const auto cpu = at + std::string("rule=sis_prev cpu=").size();
    side[cpu] = side[cpu] == '5' ? '4' : '5';
    return side;
  }
  test::Ran replay(const std::string& set, const std::string& policy = "") {
    std::vector<std::string> args = {"replay", set};
    if (!policy.empty()) args.insert(args.end(), {"--policy", policy});
    return test::run_wakebench(args, dir_);
  }
  fs::path dir_;
  nlohmann::json set_;
  std::string side_;
};

TEST_F(ReplaySet, EveryRecordOfTheMainlineKernelAgreesUnderItsModel) {
  const test::Ran r = replay(write(side_));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("replay under mainline: 24 of 24 wakeups agree in CPU and rule (100.00%)\n"
                        "  0 records disagree; 0 wakeups have no record\n",
                        0),
            0u)
      << r.out;
  for (const char* rule : {"ttwu_runnable", "ttwu_queue_wakelist", "nr_cpus_allowed_1",
                           "sis_target", "sis_prev", "sis_recent_used_cpu", "sis_select_idle_cpu"})
    EXPECT_NE(r.out.find(std::string(rule) + " "), std::string::npos) << rule;
  EXPECT_NE(r.out.find("pipe/threads/kernel/work=200000ns/bg=2/start=0,2"), std::string::npos);
  EXPECT_EQ(r.out.find("LLC shared state"),
            std::string::npos);  // its topology's LLC is the kernel's
}

TEST_F(ReplaySet, AnAlteredRecordIsReportedWithItsCase) {
  const std::string side = first_sis_prev_altered();
  const test::Ran r = replay(write(side));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("23 of 24 wakeups agree"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first 1 of 1 disagreements:\n  pipe/threads/kernel/"), std::string::npos)
      << r.out;
}

TEST_F(ReplaySet, AWakeupWithoutARecordCountsAgainstAgreement) {
  std::string side = side_;
  const auto at = side.find("\n", side.find("# run 0"));
  side.insert(at + 1,
              "        pipe-998     [000] d..2.   100.000000: sched_waking: comm=wakebench "
              "pid=999 prio=120 target_cpu=001\n");
  const test::Ran r = replay(write(side));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("24 of 25 wakeups agree in CPU and rule (96.00%)\n  0 records disagree; 1 "
                       "wakeups have no record"),
            std::string::npos)
      << r.out;
}

TEST_F(ReplaySet, AnotherPolicysModelDisagrees) {
  const test::Ran r = replay(write(side_), "sync-2017");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("24 of 24"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model hook_before_domain_walk"), std::string::npos) << r.out;
}

TEST_F(ReplaySet, AChangedSideFileOrNoRecordsIsRefusedInOneLine) {
  std::string side = side_;
  side.insert(side.size() - 1, " ");
  test::Ran r = replay(write(side, false));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("its sha256 is not the one"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty());
  set_.erase("decisions");
  r = replay(write(side_, false));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no decision records (a run with --trace-decisions"), std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// The predictions block of run and predict --results: per case, what its replay reproduced and
// its most common disagreement; an altered record shows there, a changed side file is named once.
TEST_F(ReplaySet, ThePredictionsBlockSaysWhatEachCaseReproduced) {
  const std::string side = first_sis_prev_altered();
  const std::string path = write(side);
  const CaseReplays replays = replay_recorded(load_result_set(path), path);
  ResultsPrediction p;
  for (const auto& [name, r] : replays.cases) p.cases.push_back({.label = name});
  p.cases.push_back({.label = "no/such/case"});
  attach_replays(p, replays);
  int64_t wakeups = 0, reproduced = 0;
  std::string common;
  for (const CasePrediction& e : p.cases) {
    if (e.label == "no/such/case") {
      EXPECT_FALSE(e.replay);
      continue;
    }
    ASSERT_TRUE(e.replay) << e.label;
    wakeups += e.replay->wakeups;
    reproduced += e.replay->reproduced;
    common += e.replay->common;
  }
  EXPECT_EQ(wakeups, 24);
  EXPECT_EQ(reproduced, 23);
  EXPECT_EQ(common.rfind("model sis_prev -> prev, kernel -> cpu ", 0), 0u) << common;
  const std::string text = render_results_text(p);
  EXPECT_NE(text.find("    replay: 6 of 6 wakeups reproduced (100.00%)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("    replay: 17 of 18 wakeups reproduced (94.44%); most common disagreement "
                      "(1): model sis_prev ->\n        prev, kernel -> cpu 5\n"),
            std::string::npos)
      << text;
  set_["decisions"]["sha256"] = std::string(64, '0');
  std::ofstream(dir_ / "results.json") << set_.dump(1);
  EXPECT_NE(predict_for_results_file(path).replay_unavailable.find("its sha256 is not the one"),
            std::string::npos);
}

// The BPF recorder's records of Debian's own 6.12.118 kernel (tests/fixtures/decisions/
// smt2-debian-bpf: the lab's smt2 guest, two searched cases, the first 20 or so wakeups of each).
// They hold no rule: agreement is on the CPU, each rule is the model's, and the trivial baselines
// are printed beside it. An altered CPU is reported.
class ReplayBpfSet : public ReplaySet {
  std::string fixture() const override { return "decisions/smt2-debian-bpf"; }
};

TEST_F(ReplayBpfSet, EveryRecordAgreesOnTheCpuAndTheRulesAreTheModels) {
  const test::Ran r = replay(write(side_));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("replay under mainline: 38 of 42 wakeups agree in CPU (90.48%)\n"
                        "  0 records disagree; 4 wakeups have no record\n"
                        "the recorder holds the inputs and the CPU: each rule below is the model's",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("prev 97.37%, the waker's CPU 0.00%, the last choice 97.37%"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("model's rule "), std::string::npos) << r.out;
}

TEST_F(ReplayBpfSet, AnAlteredCpuIsReported) {
  std::string side = side_;
  const auto at = side.find(" cpu=", side.find("source=bpf"));
  ASSERT_NE(at, std::string::npos);
  side[at + 5] = side[at + 5] == '3' ? '2' : '3';
  const test::Ran r = replay(write(side));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("37 of 42 wakeups agree in CPU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first 1 of 1 disagreements:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    kernel -> "), std::string::npos) << r.out;
}

// The tp_btf recorder's records of this VM's vendor 6.18 (tests/fixtures/decisions/
// vm2-vendor-tp_btf: two cases of a `run --trace-decisions` here, the first 12 wakeups of each,
// read at sched_waking). A record per wakeup (the wakes of a still queued task too); agreement on
// the CPU alone, said so, with the baselines and where the wake flags came from beside it.
class ReplayTpBtfSet : public ReplaySet {
  std::string fixture() const override { return "decisions/vm2-vendor-tp_btf"; }
};

TEST_F(ReplayTpBtfSet, TheCpuAloneIsComparedAndSaidSo) {
  const test::Ran r = replay(write(side_));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string head =
      "replay under mainline: 21 of 24 wakeups agree in CPU (87.50%)\n"
      "  3 records disagree; 0 wakeups have no record\n"
      "the recorder holds the inputs and the CPU: each rule below is the "
      "model's";
  EXPECT_EQ(r.out.substr(0, head.size()), head);
  EXPECT_NE(r.out.find("24 records read at sched_waking (tp_btf), before the selection; wake flags "
                       "from the mechanism's\n  documented wake in 21, none assumed in 3"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("model's rule "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ttwu_runnable                        8         8"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    kernel -> 0; model sis_no_sd_llc -> 1\n"), std::string::npos) << r.out;
  // This VM's hwloc shows no cache, so the set's topology gives each vCPU an LLC of its own,
  // while every record read an LLC's shared state (nr_idle_scan 0): the kernel's sd_llc spans
  // both. Replay says so, once, with the count.
  EXPECT_NE(r.out.find("\n24 records read the LLC shared state of a waker's CPU the model gives no "
                       "LLC domain:"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace wb
