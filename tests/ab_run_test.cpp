// End-to-end: `wakebench run --ab` on a tiny config against a fake root tree (--ab-root) with the
// journals in a folder of the test's own (--state-dir), and once against the live debugfs where it
// is writable. Asserts structure, rounds, read-backs, and that every file holds its value from
// before the run afterwards, however the run ends; never times.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "analysis/results/resultset_io.h"
#include "common/system/sched_features.h"
#include "tests/support.h"

namespace {

namespace fs = std::filesystem;
using wb::test::children_of;
using wb::test::slurp;

const char* kPinnedPipe = R"({"schema_version": 1, "name": "ab-tiny",
  "defaults": {"round_trips": 200, "warmup": 20, "repetitions": 3, "timeout_s": 30},
  "cases": [{"mechanisms": ["pipe"], "modes": ["threads"], "placements": ["same-cpu"]}]})";

class AbRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = wb::test::fresh_test_dir("wb-abrun");
    fs::create_directories(dir_ / "root/sys/kernel/debug/sched");
    fs::create_directories(dir_ / "root/proc/sys/kernel");
    put("root/sys/kernel/debug/sched/features", "PLACE_LAG TTWU_QUEUE NO_HRTICK\n");
    put("root/proc/sys/kernel/sched_fake", "7\n");
    put("tiny.json", kPinnedPipe);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void put(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  std::string sysctl() { return slurp(dir_ / "root/proc/sys/kernel/sched_fake"); }
  std::string feature() {
    const auto text = slurp(dir_ / "root/sys/kernel/debug/sched/features");
    for (const auto& f : wb::parse_sched_features(text, "features"))
      if (f.name == "TTWU_QUEUE") return f.enabled ? "on" : "off";
    return "absent";
  }
  // `wakebench run ARGS` in the background, stdout and stderr in dir_. Returns its pid.
  pid_t start(const std::vector<std::string>& args) {
    const pid_t pid = fork();
    if (pid != 0) return pid;
    freopen((dir_ / "stderr").c_str(), "w", stderr);
    freopen((dir_ / "stdout").c_str(), "w", stdout);
    std::vector<char*> argv = {const_cast<char*>(WB_BINARY), const_cast<char*>("run")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(WB_BINARY, argv.data());
    _exit(127);
  }
  int finish(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // The run's arguments: the tiny config, --out, the fake tree last (a test of the live files
  // drops those two), and the journals in a folder of the test's own.
  std::vector<std::string> base(const std::string& out) {
    return {"--config",    (dir_ / "tiny.json").string(),
            "--out",       (dir_ / out).string(),
            "--events",    "none",
            "--state-dir", state(),
            "--ab-root",   (dir_ / "root").string()};
  }
  std::string state() { return (dir_ / "state").string(); }
  // A run that switches both knobs, long enough to be caught while a case runs.
  std::vector<std::string> long_run(const std::string& out) {
    auto args = base(out);
    for (const char* a : {"--ab", "sysctl:kernel.sched_fake=1,2", "--ab",
                          "feature:TTWU_QUEUE=off,off", "--round-trips", "300000"})
      args.push_back(a);
    return args;
  }
  // Waits until `pid` has a case's task running (a setting then in place): its tasks.
  std::set<pid_t> until_a_case_runs(pid_t pid);
  // The files in the state folder (journals, locks).
  std::vector<std::string> state_files() {
    std::vector<std::string> out;
    if (fs::exists(state()))
      for (const auto& e : fs::directory_iterator(state())) out.push_back(e.path().filename());
    return out;
  }
  fs::path dir_;
};

std::set<pid_t> AbRun::until_a_case_runs(pid_t pid) {
  std::set<pid_t> tasks;
  for (int i = 0; i < 6000 && tasks.empty(); ++i) {
    tasks = children_of(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(tasks.empty()) << "no case started: " << slurp(dir_ / "stderr");
  return tasks;
}

TEST_F(AbRun, WritesOneSetPerSettingPairedByRound) {
  auto args = base("r.json");
  for (const char* a :
       {"--ab", "sysctl:kernel.sched_fake=1,2", "--ab", "feature:TTWU_QUEUE=off,off"})
    args.push_back(a);
  const int status = finish(start(args));
  const std::string err = slurp(dir_ / "stderr");
  ASSERT_EQ(status, 0) << err;
  EXPECT_EQ(slurp(dir_ / "stdout"),
            (dir_ / "r-ab0.json").string() + "\n" + (dir_ / "r-ab1.json").string() + "\n");
  EXPECT_FALSE(fs::exists(dir_ / "r.json"));
  EXPECT_NE(err.find("wakebench: restored sysctl:kernel.sched_fake to 7, feature:TTWU_QUEUE to "
                     "TTWU_QUEUE\n"),
            std::string::npos)
      << err;
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_EQ(feature(), "on");
  std::string id;
  for (int k = 0; k < 2; ++k) {
    SCOPED_TRACE(k);
    const wb::ResultSet rs =
        wb::load_result_set((dir_ / ("r-ab" + std::to_string(k) + ".json")).string());
    const auto& ab = rs.set.ab;
    ASSERT_TRUE(ab);
    EXPECT_EQ(ab->setting, k);
    EXPECT_EQ(ab->settings, 2);
    EXPECT_EQ(ab->label, k == 0 ? "sched_fake=1,TTWU_QUEUE=off" : "sched_fake=2,TTWU_QUEUE=off");
    // As read back from the file: the keys in JSON's order.
    EXPECT_EQ(ab->values, (wb::SettingValues{{"feature:TTWU_QUEUE", "off"},
                                             {"sysctl:kernel.sched_fake", k == 0 ? "1" : "2"}}));
    ASSERT_TRUE(rs.set.run);
    EXPECT_EQ(ab->order_seed, rs.set.run->order_seed);
    if (k == 0) id = ab->id;
    EXPECT_EQ(ab->id, id) << "one run id for the K sets";
    ASSERT_EQ(rs.views.size(), 1u);
    const wb::CaseView& c = rs.views[0];
    ASSERT_TRUE(c.ok()) << c.reason;
    EXPECT_EQ(std::multiset<int>(c.ab_round.begin(), c.ab_round.end()),
              (std::multiset<int>{0, 1, 2}));
    for (const auto& rep : rs.set.cases[0]["repetitions"]) {
      EXPECT_EQ(rep["ab"]["read_back"]["sysctl:kernel.sched_fake"], k == 0 ? "1" : "2");
      EXPECT_EQ(rep["ab"]["read_back"]["feature:TTWU_QUEUE"], "NO_TTWU_QUEUE");
    }
  }
}

// A bad SPEC: one line, exit 2, no result set, the files untouched.
TEST_F(AbRun, ABadSpecIsOneLineAndNoOutput) {
  const std::map<std::string, std::vector<std::string>> bad = {
      {"--ab feature:NO_SUCH=on,off: feature NO_SUCH is not listed in " +
           (dir_ / "root/sys/kernel/debug/sched/features").string(),
       {"--ab", "feature:NO_SUCH=on,off"}},
      {"--ab sysctl:kernel.sched_fake=1,2,3: 3 values, but --ab feature:TTWU_QUEUE=on,off has 2 "
       "(zipped SPECs need as many each)",
       {"--ab", "feature:TTWU_QUEUE=on,off", "--ab", "sysctl:kernel.sched_fake=1,2,3"}},
      {"--ab bogus:X=1,2: unknown kind \"bogus\" (feature, sysctl or debugfs)",
       {"--ab", "bogus:X=1,2"}},
  };
  for (const auto& [want, extra] : bad) {
    auto args = base("r.json");
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(finish(start(args)), 2);
    EXPECT_EQ(slurp(dir_ / "stderr"), "wakebench: " + want + "\n");
    EXPECT_EQ(slurp(dir_ / "stdout"), "");
    for (const char* f : {"r.json", "r-ab0.json", "r-ab1.json"}) EXPECT_FALSE(fs::exists(dir_ / f));
  }
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_EQ(feature(), "on");
}

// Ctrl-C while a case runs: the files hold their values from before, no task is left, and each
// set is written, marked incomplete.
TEST_F(AbRun, InterruptRestoresTheFilesAndLeavesNoTask) {
  const pid_t pid = start(long_run("r.json"));
  ASSERT_GT(pid, 0);
  const std::set<pid_t> tasks = until_a_case_runs(pid);
  ASSERT_FALSE(tasks.empty());
  EXPECT_NE(sysctl(), "7\n") << "a setting is in place while the case runs";
  kill(pid, SIGINT);
  const int status = finish(pid);
  const std::string err = slurp(dir_ / "stderr");
  EXPECT_EQ(status, 130) << err;
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_EQ(feature(), "on");
  EXPECT_NE(err.find("wakebench: restored sysctl:kernel.sched_fake to 7"), std::string::npos)
      << err;
  for (pid_t t : tasks) EXPECT_TRUE(kill(t, 0) == -1 && errno == ESRCH) << "task " << t << " left";
  for (const char* f : {"r-ab0.json", "r-ab1.json"}) {
    const auto rs = nlohmann::json::parse(slurp(dir_ / f));
    EXPECT_EQ(rs["complete"], false) << f;
  }
  EXPECT_TRUE(state_files().empty()) << "the journal and the locks go with the restore";
}

// SIGHUP (the terminal gone) and SIGPIPE (stderr's reader gone) stop the run as SIGTERM does:
// the files restored, each set written and marked incomplete, no task left, exit 130. Before,
// either signal killed the run: no set (SIGHUP also left the sysctl changed).
TEST_F(AbRun, HangupAndABrokenStderrStopTheRunAsSigtermDoes) {
  const pid_t pid = start(long_run("r.json"));
  ASSERT_GT(pid, 0);
  const std::set<pid_t> tasks = until_a_case_runs(pid);
  kill(pid, SIGHUP);
  EXPECT_EQ(finish(pid), 130) << slurp(dir_ / "stderr");
  EXPECT_EQ(sysctl(), "7\n");
  for (pid_t t : tasks) EXPECT_TRUE(kill(t, 0) == -1 && errno == ESRCH) << "task " << t << " left";
  for (const char* f : {"r-ab0.json", "r-ab1.json"})
    EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / f))["complete"], false) << f;
  // stderr a pipe nobody reads: the run's first line gets EPIPE, not its death.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  const pid_t piped = fork();
  if (piped == 0) {
    dup2(fds[1], STDERR_FILENO);
    std::vector<std::string> args = long_run("p.json");
    std::vector<char*> argv = {const_cast<char*>(WB_BINARY), const_cast<char*>("run")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(WB_BINARY, argv.data());
    _exit(127);
  }
  close(fds[1]);
  EXPECT_EQ(finish(piped), 130);
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_EQ(feature(), "on");
  for (const char* f : {"p-ab0.json", "p-ab1.json"})
    EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / f))["complete"], false) << f;
  EXPECT_TRUE(state_files().empty());
}

// SIGKILL: no restore runs, the journal stays. `wakebench restore` puts the files back from it,
// says so, and leaves the state folder empty; a second restore finds nothing.
TEST_F(AbRun, AKilledRunsSettingsAreRestoredFromItsJournal) {
  const pid_t pid = start(long_run("r.json"));
  ASSERT_GT(pid, 0);
  until_a_case_runs(pid);
  kill(pid, SIGKILL);
  EXPECT_EQ(finish(pid), 128 + SIGKILL);
  ASSERT_NE(sysctl(), "7\n") << "the kill left the setting changed";
  const pid_t restore = fork();
  if (restore == 0) {
    freopen((dir_ / "stderr").c_str(), "w", stderr);
    execl(WB_BINARY, WB_BINARY, "restore", "--state-dir", state().c_str(), nullptr);
    _exit(127);
  }
  EXPECT_EQ(finish(restore), 0);
  EXPECT_EQ(slurp(dir_ / "stderr"), "wakebench: restored what run " + std::to_string(pid) +
                                        " left changed: sysctl:kernel.sched_fake to 7, "
                                        "feature:TTWU_QUEUE to TTWU_QUEUE\n");
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_EQ(feature(), "on");
  EXPECT_TRUE(state_files().empty());
  const std::string again = std::string(WB_BINARY) + " restore --state-dir " + state() + " 2>" +
                            (dir_ / "stderr").string();
  EXPECT_EQ(std::system(again.c_str()), 0);
  EXPECT_EQ(slurp(dir_ / "stderr"),
            "wakebench: nothing to restore (no journal of an ended run in " + state() + ")\n");
}

// The next run restores a killed run's journal before anything else, so it reads the value from
// before the killed run as its own original and restores that. Before, it read the killed run's
// A/B value and "restored" the sysctl to it: the machine's setting drifted for good.
TEST_F(AbRun, TheNextRunRestoresAKilledRunFirst) {
  const pid_t pid = start(long_run("r.json"));
  ASSERT_GT(pid, 0);
  until_a_case_runs(pid);
  kill(pid, SIGKILL);
  finish(pid);
  ASSERT_NE(sysctl(), "7\n");
  auto args = base("n.json");
  for (const char* a : {"--ab", "sysctl:kernel.sched_fake=1,2"}) args.push_back(a);
  ASSERT_EQ(finish(start(args)), 0) << slurp(dir_ / "stderr");
  const std::string err = slurp(dir_ / "stderr");
  EXPECT_EQ(err.rfind("wakebench: restored what run " + std::to_string(pid) + " left changed: ", 0),
            0u)
      << "said first: " << err;
  EXPECT_NE(err.find("wakebench: restored sysctl:kernel.sched_fake to 7\n"), std::string::npos)
      << err;
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_EQ(feature(), "on");
  EXPECT_TRUE(state_files().empty());
}

// Two runs on one setting: the second is refused in one line (exit 2, nothing measured, no file)
// while the first holds it, and the first restores the value from before both. Before, the second
// took the first's A/B value as its original and left the sysctl at it.
TEST_F(AbRun, ASecondRunOnTheSameSettingIsRefused) {
  const pid_t first = start(long_run("r.json"));
  ASSERT_GT(first, 0);
  until_a_case_runs(first);
  const fs::path first_err = dir_ / "first-stderr";
  fs::rename(dir_ / "stderr", first_err);  // the second writes its own
  auto args = base("s.json");
  for (const char* a : {"--ab", "sysctl:kernel.sched_fake=3,4"}) args.push_back(a);
  EXPECT_EQ(finish(start(args)), 2);
  EXPECT_EQ(slurp(dir_ / "stderr"), "wakebench: --ab sysctl:kernel.sched_fake=3,4: run " +
                                        std::to_string(first) +
                                        " is switching this setting (lock " + state() +
                                        "/sysctl:kernel.sched_fake.lock)\n");
  EXPECT_EQ(slurp(dir_ / "stdout"), "");
  for (const char* f : {"s-ab0.json", "s-ab1.json"}) EXPECT_FALSE(fs::exists(dir_ / f)) << f;
  kill(first, SIGINT);
  EXPECT_EQ(finish(first), 130) << slurp(first_err);
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_TRUE(state_files().empty());
}

// Only the scheduler's own settings (registry/registry.json) unless the run says otherwise; the
// refusal is one line, and the file stays as it was.
TEST_F(AbRun, OnlySchedulerSettingsWithoutAnExplicitFlag) {
  put("root/proc/sys/kernel/core_pattern", "core\n");
  auto args = base("r.json");
  for (const char* a : {"--ab", "sysctl:kernel.core_pattern=a,b"}) args.push_back(a);
  EXPECT_EQ(finish(start(args)), 2);
  EXPECT_EQ(slurp(dir_ / "stderr"),
            "wakebench: --ab sysctl:kernel.core_pattern=a,b: kernel.core_pattern is not one of the "
            "scheduler's settings (debugfs sched/*; feature *; sysctl kernel.sched_*, "
            "kernel.numa_balancing*); --ab-any-setting switches any setting\n");
  EXPECT_EQ(slurp(dir_ / "root/proc/sys/kernel/core_pattern"), "core\n");
  args.push_back("--ab-any-setting");
  EXPECT_EQ(finish(start(args)), 0) << slurp(dir_ / "stderr");
  EXPECT_EQ(slurp(dir_ / "root/proc/sys/kernel/core_pattern"), "core\n");
}

// One refused output (the second setting's set would go into a FIFO) stops the run before it
// measures or changes anything: no set written, exit 2.
TEST_F(AbRun, ARefusedOutputStopsTheRunBeforeItMeasures) {
  ASSERT_EQ(mkfifo((dir_ / "r-ab1.json").c_str(), 0600), 0);
  auto args = base("r.json");
  for (const char* a : {"--ab", "sysctl:kernel.sched_fake=1,2"}) args.push_back(a);
  EXPECT_EQ(finish(start(args)), 2);
  EXPECT_EQ(slurp(dir_ / "stderr"), "wakebench: --out " + (dir_ / "r-ab1.json").string() +
                                        ": is a FIFO, not a regular file (refused)\n");
  EXPECT_FALSE(fs::exists(dir_ / "r-ab0.json"));
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_TRUE(state_files().empty());
}

// The live kernel: a harmless sched feature flipped through --ab, and the features file as
// before afterwards.
TEST_F(AbRun, FlipsARealSchedFeatureAndRestoresIt) {
  std::string why;
  const auto before = wb::read_sched_features(&why);
  if (!before) GTEST_SKIP() << "sched features not readable: " << why;
  const std::string path = fs::exists("/sys/kernel/debug/sched/features")
                               ? "/sys/kernel/debug/sched/features"
                               : "/sys/kernel/debug/sched_features";
  if (access(path.c_str(), W_OK) != 0) GTEST_SKIP() << path << " is not writable here";
  // LATENCY_WARN only warns in the kernel log about long scheduling latencies.
  bool listed = false;
  for (const auto& f : *before) listed = listed || f.name == "LATENCY_WARN";
  if (!listed) GTEST_SKIP() << "LATENCY_WARN is not a sched feature of this kernel";
  const std::string text = slurp(path);
  auto args = base("r.json");
  args.erase(args.end() - 2, args.end());  // the live root
  for (const char* a : {"--ab", "feature:LATENCY_WARN=on,off"}) args.push_back(a);
  const int status = finish(start(args));
  ASSERT_EQ(status, 0) << slurp(dir_ / "stderr");
  EXPECT_EQ(slurp(path), text);
  const auto rs = nlohmann::json::parse(slurp(dir_ / "r-ab1.json"));
  EXPECT_EQ(rs["cases"][0]["repetitions"][0]["ab"]["read_back"]["feature:LATENCY_WARN"],
            "NO_LATENCY_WARN");
}

}  // namespace
