// End-to-end: `wakebench run` on this machine with tiny counts. Asserts structure and invariants
// (statuses, classes, sample counts, files), never times.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "common/schema/result_set.h"
#include "common/schema/run_order.h"
#include "common/util/sys.h"
#include "tests/support.h"

namespace {

namespace fs = std::filesystem;

struct Cmd {
  int status;
  std::string out, err;
};

using wb::test::children_of;
using wb::test::slurp;

const char* kOneCase = R"({"schema_version": 1, "name": "one",
  "defaults": {"round_trips": 200, "warmup": 20, "repetitions": 2, "timeout_s": 30},
  "cases": [{"mechanisms": ["pipe"], "modes": ["threads"], "placements": ["same-cpu"]}]})";

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("wb-cli-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  Cmd run(const std::string& args) {
    const std::string cmd = std::string(WB_BINARY) + " " + args + " >" +
                            (dir_ / "stdout").string() + " 2>" + (dir_ / "stderr").string();
    const int rc = std::system(cmd.c_str());
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc), slurp(dir_ / "stdout"),
            slurp(dir_ / "stderr")};
  }
  // `wakebench run ARGS` in the background, its stderr in dir_/stderr; `in_child` runs first
  // (limits, another user). Returns its pid.
  pid_t start_run(const std::vector<std::string>& args,
                  const std::function<bool()>& in_child = {}) {
    const pid_t pid = fork();
    if (pid != 0) return pid;
    freopen((dir_ / "stderr").c_str(), "w", stderr);
    freopen("/dev/null", "w", stdout);
    if (in_child && !in_child()) _exit(126);
    std::vector<char*> argv = {const_cast<char*>(WB_BINARY), const_cast<char*>("run")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(WB_BINARY, argv.data());
    _exit(127);
  }
  // Waits for start_run's process: its exit status (128 + signal when killed) and stderr.
  Cmd finish(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return {-1, "", "waitpid failed"};
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), "",
            slurp(dir_ / "stderr")};
  }
  void interrupt_in_second_repetition(int sig);
  // A result set of one short case, made by a run: what --until-decided compares with.
  fs::path baseline() {
    const auto cfg = write("one.json", kOneCase);
    const Cmd c = run("run --events none --config " + cfg.string() + " --out " +
                      (dir_ / "base.json").string());
    EXPECT_EQ(c.status, 0) << c.err;
    return dir_ / "base.json";
  }
  fs::path dir_;
};

const char* kTiny = R"({"schema_version": 1, "name": "tiny",
  "defaults": {"round_trips": 200, "warmup": 20, "repetitions": 2, "timeout_s": 30},
  "cases": [{"mechanisms": ["pipe"], "modes": ["threads", "processes"],
             "placements": ["same-cpu", "smt-sibling", "cluster", "llc", "cross-llc",
                            "cross-numa", "kernel"]}]})";

TEST_F(RunCli, WritesAResultSetOfTheContractShape) {
  const auto cfg = write("tiny.json", kTiny);
  const auto out = dir_ / "r.json";
  const Cmd c = run("run --config " + cfg.string() + " --out " + out.string());
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out, out.string() + "\n") << "stdout holds the path of the result set";
  EXPECT_NE(c.err.find("RTT median / p99"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("[14/14] "), std::string::npos) << c.err;
  const auto rs = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(rs["schema"], "wakebench-results");
  EXPECT_EQ(rs["schema_version"], wb::kResultSchemaVersion);
  EXPECT_EQ(rs["complete"], true);
  for (const char* k :
       {"context", "benchmarks", "environment", "topology", "config", "predictions", "cases"})
    EXPECT_TRUE(rs.contains(k)) << k;
  EXPECT_FALSE(rs["topology"]["xml"].get<std::string>().empty());
  ASSERT_EQ(rs["cases"].size(), 14u);
  std::map<std::string, bool> available;
  for (const auto& cls : rs["topology"]["classes"]) available[cls["class"]] = cls["available"];
  // Every machine has same-cpu; this suite runs on >= 2 CPUs in CI and here.
  EXPECT_TRUE(available["same-cpu"]);
  for (const auto& c : rs["cases"]) {
    const std::string placement = c["placement"];
    SCOPED_TRACE(c["name"].get<std::string>());
    EXPECT_EQ(c["wake_flags"], "sync");
    if (placement == "kernel" || available[placement]) {
      ASSERT_EQ(c["status"], "ok") << c["reason"];
      EXPECT_EQ(c["round_trips"], 200);
      EXPECT_EQ(c["repetitions"].size(), 2u);
      // Each repetition keeps its histograms, one count per round trip.
      for (const auto& r : c["repetitions"]) {
        int64_t n = 0;
        for (const auto& k : r["rtt_hist"]["count"]) n += k.get<int64_t>();
        EXPECT_EQ(n, 200);
      }
      EXPECT_LE(c["rtt_ns"]["min"].get<double>(), c["rtt_ns"]["median"].get<double>());
      EXPECT_LE(c["rtt_ns"]["median"].get<double>(), c["rtt_ns"]["p99"].get<double>());
      EXPECT_LT(c["wakeup_ns"]["median"].get<double>(), c["rtt_ns"]["median"].get<double>());
      if (placement == "kernel") {
        int64_t total = 0;
        for (const auto& [cls, n] : c["observed"]["histogram"].items()) total += n.get<int64_t>();
        EXPECT_EQ(total, 2 * 200) << "one observed class per round trip and repetition";
      } else {
        EXPECT_TRUE(c["observed"].is_null());
        EXPECT_NE(c["cpus"]["waker"], nullptr);
      }
    } else {
      EXPECT_EQ(c["status"], "skipped");
      EXPECT_EQ(c["reason"].get<std::string>().rfind("unavailable: ", 0), 0u) << c["reason"];
    }
  }
  // Google Benchmark's shape: one entry per repetition of each case that ran, each as long as the
  // case says, in the order they ran: the repetitions of the cases interleaved, round by round, in
  // the order the recorded seed gives (common/schema/run_order.h).
  std::vector<int> repetitions;
  for (const auto& c : rs["cases"]) {
    EXPECT_NE(c["status"], "failed") << c["name"] << ": " << c["reason"];
    repetitions.push_back(c["status"] == "ok" ? 2 : 0);
  }
  std::vector<std::string> ran;
  for (const auto& b : rs["benchmarks"]) {
    if (b["run_type"] != "iteration" || b.value("error_occurred", false)) continue;
    EXPECT_EQ(b["iterations"], 200) << b["name"];
    ran.push_back(b["name"]);
  }
  std::vector<std::string> want;
  for (size_t i : wb::interleaved_order(repetitions, rs["run"]["order_seed"].get<uint64_t>()))
    want.push_back(rs["cases"][i]["name"]);
  EXPECT_EQ(ran, want);
}

// The counting pass is as long as a timed repetition, and both are the round trips the result set
// records, however the length is chosen. Before wakebench owned the loop, --benchmark_min_time
// let Google Benchmark pick both: the counting pass ran in its one-iteration estimate (page-faults
// 2.0 and task-clock 5964 ns "per round trip" on pipe/processes/same-cpu) and the timed
// repetitions' iterations disagreed with the case's round_trips.
TEST_F(RunCli, CountingAndEveryRepetitionCoverTheRoundTripsRecorded) {
  const auto cfg = write("tiny.json", kTiny);
  const auto out = dir_ / "r.json";
  const Cmd c = run("run --config " + cfg.string() + " --out " + out.string() +
                    " --benchmark_filter=processes/same-cpu --round-trips 3000"
                    " --events page-faults,context-switches");
  ASSERT_EQ(c.status, 0) << c.err;
  const auto rs = nlohmann::json::parse(slurp(out));
  ASSERT_EQ(rs["cases"].size(), 1u);
  const auto& cs = rs["cases"][0];
  ASSERT_EQ(cs["status"], "ok") << cs["reason"];
  EXPECT_EQ(cs["round_trips"], 3000);
  for (const auto& b : rs["benchmarks"]) {
    if (b["run_type"] == "iteration") {
      EXPECT_EQ(b["iterations"], 3000);
    }
  }
  WB_SKIP_WITHOUT_PERF_EVENTS();  // the round trips are checked above; the counters need perf
  // A task faults in a few pages when it starts measuring (its sample arrays), not every round
  // trip; over 3000 round trips that is far below one per round trip, over one it is 2.0. Each
  // side blocks once a round trip on one CPU: about one context switch each.
  for (const char* side : {"waker", "wakee"}) {
    SCOPED_TRACE(side);
    const auto& counters = cs["counters"][side];
    ASSERT_TRUE(counters["page-faults"].is_number()) << cs["counters"];
    EXPECT_LT(counters["page-faults"].get<double>(), 0.1);
    EXPECT_GT(counters["context-switches"].get<double>(), 0.5);
    EXPECT_LT(counters["context-switches"].get<double>(), 1.5);
  }
}

TEST_F(RunCli, MinTimeIsRefusedWithItsReplacement) {
  const auto cfg = write("tiny.json", kTiny);
  const auto out = dir_ / "r.json";
  const Cmd c =
      run("run --config " + cfg.string() + " --out " + out.string() + " --benchmark_min_time=0.5");
  EXPECT_EQ(c.status, 2);
  EXPECT_EQ(c.err,
            "wakebench: --benchmark_min_time=0.5: a repetition is a fixed number of round trips "
            "here; use --round-trips N\n");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(RunCli, GoogleBenchmarkFlagsOverrideTheConfig) {
  const auto cfg = write("tiny.json", kTiny);
  const auto out = dir_ / "r.json";
  const Cmd c = run("run --config " + cfg.string() + " --out " + out.string() +
                    " --benchmark_filter=same-cpu --benchmark_repetitions=3");
  ASSERT_EQ(c.status, 0) << c.err;
  const auto rs = nlohmann::json::parse(slurp(out));
  ASSERT_EQ(rs["cases"].size(), 2u) << "filtered cases are absent";
  for (const auto& cs : rs["cases"]) {
    EXPECT_EQ(cs["placement"], "same-cpu");
    EXPECT_EQ(cs["repetitions"].size(), 3u);
  }
}

// --show puts a counter per round trip in the summary; --idle-latency-us holds the CPUs out of deep
// idle states for the run and is recorded (it needs /dev/cpu_dma_latency: root).
TEST_F(RunCli, ShowsACounterAndRecordsTheIdleLatencyLimit) {
  const auto cfg = write("tiny.json", kTiny);
  const auto out = dir_ / "r.json";
  const Cmd c = run("run --config " + cfg.string() + " --out " + out.string() +
                    " --benchmark_filter=threads/same-cpu --show context-switches"
                    " --idle-latency-us 0");
  if (c.status != 0 && c.err.find("idle latency guard") != std::string::npos) {
    EXPECT_FALSE(fs::exists(out));
    GTEST_SKIP() << "cannot hold CPUs out of idle here: " << c.err;
  }
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.err.find("context-switches per round trip, waker / wakee"), std::string::npos)
      << c.err;
  EXPECT_EQ(c.err.find("RTT median / p99"), std::string::npos) << c.err;
  const auto rs = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(rs["environment"]["idle_latency"]["requested_us"], 0);
  EXPECT_EQ(rs["environment"]["idle_latency"]["effective_us"], 0)
      << "the limit held during capture";
}

// Ctrl-C: the running case stops, every task is killed and reaped, and the result set is written,
// marked incomplete, with the cases done so far.
TEST_F(RunCli, InterruptWritesAnIncompleteResultSetAndLeavesNothing) {
  const auto cfg = write("long.json", R"({"schema_version": 1,
    "defaults": {"round_trips": 100, "warmup": 10, "repetitions": 1, "timeout_s": 120},
    "cases": [{"mechanisms": ["pipe"], "modes": ["processes"], "placements": ["same-cpu"]},
              {"mechanisms": ["pipe"], "modes": ["processes", "threads"], "placements": ["kernel"],
               "round_trips": 50000000}]})");
  const auto out = dir_ / "r.json";
  // A seed whose order runs the short case first.
  uint64_t seed = 0;
  while (wb::interleaved_order({1, 1, 1}, seed)[0] != 0) ++seed;
  const std::string seed_arg = std::to_string(seed);
  const pid_t pid =
      start_run({"--config", cfg.string(), "--out", out.string(), "--seed", seed_arg});
  ASSERT_GT(pid, 0);
  // Wait until the first case reported, then interrupt the long second one.
  for (int i = 0; i < 300 && slurp(dir_ / "stderr").find("[1/") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(pid, SIGINT);
  const Cmd c = finish(pid);
  EXPECT_EQ(c.status, 130) << c.err;
  const auto rs = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(rs["complete"], false);
  ASSERT_GE(rs["cases"].size(), 1u);
  EXPECT_EQ(rs["cases"][0]["status"], "ok");
  for (size_t i = 1; i < rs["cases"].size(); ++i) {
    EXPECT_EQ(rs["cases"][i]["status"], "failed") << rs["cases"][i]["name"];
    EXPECT_EQ(rs["cases"][i]["reason"], "interrupted");
  }
  // No task of ours survives: nothing runs the wakebench binary any more.
  const std::string ps =
      "pgrep -f '^" + std::string(WB_BINARY) + " run --config " + cfg.string() + "'";
  EXPECT_NE(std::system(ps.c_str()), 0) << "a wakebench task outlived the run";
  for (const auto& e : fs::directory_iterator(dir_))  // no temporary file of the write is left
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

// `sig` in a case's second repetition keeps its first (issue 25): the case stays ok with the
// repetitions it finished, the set is marked incomplete, exit 130. A repetition's tasks are fresh
// processes, so new children mean the first repetition is done.
void RunCli::interrupt_in_second_repetition(int sig) {
  const auto cfg = write("reps.json", R"({"schema_version": 1,
    "defaults": {"round_trips": 100000, "warmup": 10, "repetitions": 3, "timeout_s": 120},
    "cases": [{"mechanisms": ["pipe"], "modes": ["processes"], "placements": ["same-cpu"]}]})");
  const auto out = dir_ / "r.json";
  const pid_t pid =
      start_run({"--config", cfg.string(), "--out", out.string(), "--events", "none"});
  ASSERT_GT(pid, 0);
  std::set<pid_t> first, now;
  bool second = false;
  for (int i = 0; i < 6000 && !second; ++i) {
    now = children_of(pid);
    if (first.empty()) first = now;
    second = !now.empty() && !first.empty() && now != first &&
             std::none_of(now.begin(), now.end(), [&](pid_t p) { return first.count(p); });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(second) << "the second repetition never started";
  kill(pid, sig);
  const Cmd run = finish(pid);
  EXPECT_EQ(run.status, 130) << run.err;
  const auto rs = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(rs["complete"], false);
  ASSERT_EQ(rs["cases"].size(), 1u);
  const auto& c = rs["cases"][0];
  EXPECT_EQ(c["status"], "ok") << c["reason"];
  EXPECT_GE(c["repetitions"].size(), 1u);
  EXPECT_LT(c["repetitions"].size(), 3u);
  EXPECT_TRUE(c["rtt_ns"].is_object());
  for (pid_t t : now) EXPECT_TRUE(kill(t, 0) == -1 && errno == ESRCH) << "task " << t << " left";
}

TEST_F(RunCli, InterruptKeepsTheRepetitionsACaseFinished) {
  interrupt_in_second_repetition(SIGINT);
}

// The terminal gone (an ssh session dropped): as Ctrl-C. Before, SIGHUP killed the run: no set.
TEST_F(RunCli, HangupKeepsTheRepetitionsACaseFinished) { interrupt_in_second_repetition(SIGHUP); }

// Out of processes (RLIMIT_NPROC, which binds only an unprivileged user): a fork or a thread that
// cannot start fails its own case with the cause, and the run goes on and writes its result set.
// (Here both cases fail, so the run exits 1.)
TEST_F(RunCli, AForkOrThreadShortageFailsOnlyItsCase) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run wakebench as another user";
  // A clone under a private folder (mktemp -d, a 0700 home) keeps user nobody from the binary.
  const pid_t probe = fork();
  if (probe == 0)
    _exit(setgid(65534) == 0 && setuid(65534) == 0 && access(WB_BINARY, X_OK) == 0 ? 0 : 1);
  int probe_status = 0;
  waitpid(probe, &probe_status, 0);
  if (!WIFEXITED(probe_status) || WEXITSTATUS(probe_status) != 0)
    GTEST_SKIP() << "user nobody (65534) cannot execute " << WB_BINARY
                 << ": a folder above it is private";
  fs::permissions(dir_, fs::perms::all);
  const auto cfg = write("nproc.json", R"({"schema_version": 1,
    "defaults": {"round_trips": 100, "warmup": 10, "repetitions": 1, "timeout_s": 30},
    "cases": [{"mechanisms": ["pipe"], "modes": ["processes", "threads"],
               "placements": ["same-cpu"]}]})");
  const auto out = dir_ / "r.json";
  const pid_t pid =
      start_run({"--config", cfg.string(), "--out", out.string(), "--events", "none"}, [] {
        const rlimit one_more{2, 2};  // wakebench itself and one task
        return setrlimit(RLIMIT_NPROC, &one_more) == 0 && setgid(65534) == 0 && setuid(65534) == 0;
      });
  ASSERT_GT(pid, 0);
  const Cmd run = finish(pid);
  // Every case failed: the set is written with their causes, and the run says it measured
  // nothing and exits 1 (it exited 0 before, as though it had measured).
  ASSERT_EQ(run.status, 1) << run.err;
  EXPECT_NE(run.err.find("wakebench: no case was measured (2 failed, 0 skipped)\n"),
            std::string::npos)
      << run.err;
  const auto rs = nlohmann::json::parse(slurp(out));
  ASSERT_EQ(rs["cases"].size(), 2u);
  for (const auto& c : rs["cases"]) {
    EXPECT_EQ(c["status"], "failed") << c["name"];
    EXPECT_NE(c["reason"].get<std::string>().find("Resource temporarily unavailable"),
              std::string::npos)
        << c["name"] << ": " << c["reason"];
  }
}

// A class the run's CPUs lack names the CPUs it could not use (here: those outside its affinity).
TEST_F(RunCli, AMissingClassNamesTheCpusTheRunCannotUse) {
  if (wb::online_cpus().size() < 2) GTEST_SKIP() << "one online CPU";
  const auto cfg = write("llc.json", R"({"schema_version": 1,
    "defaults": {"round_trips": 100, "warmup": 10, "repetitions": 1, "timeout_s": 30},
    "cases": [{"mechanisms": ["pipe"], "modes": ["threads"], "placements": ["llc"]}]})");
  const std::string cmd =
      "taskset -c 0 " + std::string(WB_BINARY) + " run --events none --config " + cfg.string() +
      " --out " + (dir_ / "r.json").string() + " >/dev/null 2>" + (dir_ / "stderr").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir_ / "stderr");
  const auto rs = nlohmann::json::parse(slurp(dir_ / "r.json"));
  ASSERT_EQ(rs["cases"].size(), 1u);
  EXPECT_EQ(rs["cases"][0]["status"], "skipped");
  const std::string reason = rs["cases"][0]["reason"];
  EXPECT_NE(reason.find("CPU"), std::string::npos) << reason;
  EXPECT_NE(reason.find("not allowed"), std::string::npos) << reason;
}

// Two runs that start in the same second write two result sets (issue 25: both said they wrote
// results/<host>-<UTC second>.json, and one file was left).
TEST_F(RunCli, RunsOfOneSecondNeverShareADefaultName) {
  const auto cfg = write("tiny.json", R"({"schema_version": 1,
    "defaults": {"round_trips": 100, "warmup": 10, "repetitions": 1, "timeout_s": 30},
    "cases": [{"mechanisms": ["pipe"], "modes": ["threads"], "placements": ["same-cpu"]}]})");
  const std::string folder = dir_.string();
  auto in_dir = [&folder] { return chdir(folder.c_str()) == 0; };
  const pid_t a = start_run({"--config", cfg.string(), "--events", "none"}, in_dir);
  const pid_t b = start_run({"--config", cfg.string(), "--events", "none"}, in_dir);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_EQ(finish(a).status, 0);
  EXPECT_EQ(finish(b).status, 0);
  std::vector<std::string> sets;
  for (const auto& e : fs::directory_iterator(dir_ / "results"))
    sets.push_back(e.path().filename().string());
  ASSERT_EQ(sets.size(), 2u);
  for (const std::string& name : sets)
    EXPECT_TRUE(nlohmann::json::parse(slurp(dir_ / "results" / name)).is_object()) << name;
}

// --until-decided X --out X, however --out spells X (another path, a folder through a symlink):
// one line before anything runs, and the baseline as it was. Before, the run measured and then
// replaced its own baseline.
TEST_F(RunCli, UntilDecidedRefusesItsBaselineAsOut) {
  const fs::path base = baseline();
  const std::string before = slurp(base);
  fs::create_directories(dir_ / "sub");
  fs::create_directory_symlink(dir_, dir_ / "link");
  const auto cfg = write("one.json", kOneCase);
  for (const fs::path& out : {base, dir_ / "sub/../base.json", dir_ / "link/base.json"}) {
    SCOPED_TRACE(out);
    const Cmd c = run("run --events none --looks 1 --config " + cfg.string() + " --until-decided " +
                      base.string() + " --out " + out.string());
    EXPECT_EQ(c.status, 2);
    EXPECT_EQ(c.err, "wakebench: --out " + out.string() + ": is the --until-decided baseline " +
                         base.string() + ", which the run reads; write elsewhere\n");
    EXPECT_EQ(c.out, "");
  }
  EXPECT_EQ(slurp(base), before);
}

// A baseline that loads but that compare refuses next to this run (timings of the topology lab;
// a stored noise floor that does not read): one line before the first case, no set. Before, the
// run measured every case and then dropped them all at its first look.
TEST_F(RunCli, UntilDecidedRefusesABaselineItCannotCompareBeforeMeasuring) {
  const fs::path base = baseline();
  auto doc = nlohmann::json::parse(slurp(base));
  doc["environment"]["emulated"] = true;
  write("emulated.json", doc.dump());
  doc["environment"]["emulated"] = false;
  doc["noise"] = {{"bogus", 1}};
  write("noise.json", doc.dump());
  const auto cfg = write("one.json", kOneCase);
  const std::map<std::string, std::string> why = {
      {"emulated.json", "compare: " + (dir_ / "emulated.json").string() +
                            " holds EMULATED timings (topology lab) and this run does not: not "
                            "comparable"},
      {"noise.json", "results " + (dir_ / "noise.json").string() +
                         ": noise: not a noise file (expected \"schema\": \"wakebench-noise\"; "
                         "make one with wakebench noise A.json B.json --out FILE)"}};
  for (const auto& [name, reason] : why) {
    SCOPED_TRACE(name);
    const Cmd c = run("run --events none --looks 1 --config " + cfg.string() + " --until-decided " +
                      (dir_ / name).string() + " --out " + (dir_ / "u.json").string());
    EXPECT_EQ(c.status, 2);
    EXPECT_EQ(c.err, "wakebench: --until-decided " + (dir_ / name).string() +
                         ": cannot be compared with this run: " + reason + "\n");
    EXPECT_FALSE(fs::exists(dir_ / "u.json"));
  }
}

// A baseline that shares no case with the run's plan is refused before the first case: one line,
// no set. Before, the run measured every case, then said so at its first look and wrote nothing.
TEST_F(RunCli, UntilDecidedRefusesADisjointBaselineBeforeMeasuring) {
  const fs::path base = baseline();
  const auto cfg = write("other.json", R"({"schema_version": 1, "name": "other",
    "defaults": {"round_trips": 200, "warmup": 20, "repetitions": 2, "timeout_s": 30},
    "cases": [{"mechanisms": ["eventfd"], "modes": ["threads"], "placements": ["same-cpu"]}]})");
  const Cmd c = run("run --events none --looks 1 --config " + cfg.string() + " --until-decided " +
                    base.string() + " --out " + (dir_ / "u.json").string());
  EXPECT_EQ(c.status, 2);
  EXPECT_EQ(c.err.rfind("wakebench: --until-decided " + base.string() +
                            ": cannot be compared with this run: compare: this run shares no case "
                            "with the baseline ",
                        0),
            0u)
      << c.err;
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
  EXPECT_FALSE(fs::exists(dir_ / "u.json"));
}

// Out of descriptors (ulimit -n 8): a processes case whose second task cannot be watched
// (pidfd_open: EMFILE) fails, and its tasks are gone before the next case starts. Before, the
// task forked last stayed alive, waiting at the case's barrier, while the run went on.
TEST_F(RunCli, AFailedCasesTasksAreGoneBeforeTheNextCase) {
  const auto cfg = write("fd.json", R"({"schema_version": 1,
    "defaults": {"round_trips": 200, "warmup": 20, "repetitions": 1, "timeout_s": 60},
    "cases": [{"mechanisms": ["pipe"], "modes": ["processes"], "placements": ["same-cpu"]},
              {"mechanisms": ["eventfd"], "modes": ["threads"], "placements": ["same-cpu"],
               "round_trips": 30000000}]})");
  uint64_t seed = 0;  // one whose order runs the pipe case first
  while (wb::interleaved_order({1, 1}, seed)[0] != 0) ++seed;
  // --no-mount-debugfs: a run this test may SIGKILL leaves no debugfs mount to the next run.
  const pid_t pid =
      start_run({"--config", cfg.string(), "--out", (dir_ / "r.json").string(), "--events", "none",
                 "--seed", std::to_string(seed), "--no-mount-debugfs"},
                [] {
                  const rlimit eight{8, 8};
                  return setrlimit(RLIMIT_NOFILE, &eight) == 0;
                });
  ASSERT_GT(pid, 0);
  const std::string first = "[1/2] pipe/processes/same-cpu";
  // Until the line shows or the run is gone (not reaped: finish() does that). Under UBSan the run
  // stops before the line: its vptr check needs a pipe of its own, and 8 descriptors leave none.
  const auto gone = [pid] {
    siginfo_t info{};
    return waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
  };
  for (int i = 0; i < 3000 && slurp(dir_ / "stderr").find(first) == std::string::npos && !gone();
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string err = slurp(dir_ / "stderr");
  if (err.find(first) == std::string::npos ||
      err.find("failed: pidfd_open: Too many open files") == std::string::npos) {
    kill(pid, SIGKILL);
    finish(pid);
    GTEST_SKIP() << "8 descriptors fail no pidfd_open here: " << err;
  }
  // The second case runs in one task process: never more than one child from now on (sampled
  // from when a child shows: on a 2-vCPU VM the next case's process came 0.8 s after the line).
  size_t most = 0;
  for (int i = 0; i < 500 && children_of(pid).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  for (int i = 0; i < 50; ++i) {
    most = std::max(most, children_of(pid).size());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGINT);
  EXPECT_EQ(finish(pid).status, 130);
  EXPECT_EQ(most, 1u) << "a task of the failed case is still there";
}

}  // namespace
