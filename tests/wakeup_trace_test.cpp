// --trace-wakeups: the attribution of wakeup paths on fixture traces (tests/fixtures/trace), and
// end to end on this machine when tracefs is usable (root).
#include "common/schema/wakeup_trace.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "analysis/predict/predict_results.h"
#include "analysis/results/resultset_io.h"
#include "common/schema/wake_decision.h"
#include "common/system/decision_recorder.h"
#include "common/system/tracefs.h"
#include "tests/support.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

std::string trace_fixture(const std::string& name) {
  std::ifstream in(std::string(WB_FIXTURES_DIR) + "/trace/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// CPUs 0 and 1 share an LLC in the fixtures.
WakeupTraceOptions options() {
  WakeupTraceOptions o;
  o.supervisor_pid = 1000;
  o.class_of = [](int w, int t) { return std::string(w == t ? "same-cpu" : "llc"); };
  return o;
}

void expect_consistent(const WakeupTraceSummary& s) {
  int64_t total = 0;
  for (const auto& [path, n] : s.paths) {
    EXPECT_GE(n, 0) << path;
    total += n;
    int64_t by_class = 0;
    if (auto it = s.classes_by_path.find(path); it != s.classes_by_path.end())
      for (const auto& [c, k] : it->second) by_class += k;
    EXPECT_EQ(by_class, n) << path;
  }
  EXPECT_EQ(total, s.wakeups);
  EXPECT_EQ(s.paths.size(), 3u);
}

TEST(WakeupTrace, SelectionPaths) {
  const auto s = attribute_wakeups(trace_fixture("selection.txt"), options(), true);
  expect_consistent(s);
  // Three wakeups of 1003 by 1002; the kworker's and the supervisor's wakes are not counted.
  EXPECT_EQ(s.wakeups, 3);
  EXPECT_EQ(s.paths.at(kPathSelection), 3);
  EXPECT_EQ(s.paths.at(kPathTtwuRunnable), 0);
  EXPECT_EQ(s.paths.at(kPathQueuedRemote), 0);
  EXPECT_EQ(s.classes_by_path.at(kPathSelection).at("llc"), 2);
  EXPECT_EQ(s.classes_by_path.at(kPathSelection).at("same-cpu"), 1);
  EXPECT_EQ(s.moved, 1);
  EXPECT_EQ(s.moved_by_class, (std::map<std::string, int64_t>{{"same-cpu", 1}}));
  // The kworker's wake (not moved) is foreign; the supervisor's is the harness's own.
  EXPECT_EQ(s.foreign_wakeups, 1);
  EXPECT_EQ(s.foreign_moved, 0);
  // Blocked 500 us and 1.2 ms before the wakes that left it on CPU 1, 1 ms before the one that
  // moved it.
  EXPECT_EQ(s.since_switch_out_kept, (std::vector<int64_t>{500'000, 1'200'000}));
  EXPECT_EQ(s.since_switch_out_moved, (std::vector<int64_t>{1'000'000}));
  EXPECT_EQ(s.remote_delivery, 1);
  EXPECT_EQ(s.migrations_at_wakeup, 1);
  EXPECT_EQ(s.migrations_other, 1);
  EXPECT_EQ(s.lost, 7);
  EXPECT_EQ(s.unmatched, 0);
  EXPECT_EQ(s.events, 24);
  ASSERT_EQ(s.list.size(), 3u);
  const TracedWakeup& m = s.list[1];  // the migration to the waker's CPU
  EXPECT_EQ(m.waker_pid, 1002);
  EXPECT_EQ(m.wakee_pid, 1003);
  EXPECT_EQ(m.waker_cpu, 0);
  EXPECT_EQ(m.prev_cpu, 1);
  EXPECT_EQ(m.target_cpu, 0);
  EXPECT_EQ(m.cls, "same-cpu");
  EXPECT_EQ(s.list[2].wakeup_cpu, 1);  // delivered by IPI on the idle prev CPU
  EXPECT_EQ(s.list[2].path, kPathSelection);
  // The one move, the run's second wakeup: where the placement left the wakee's CPU.
  EXPECT_EQ(s.first_moves, (std::vector<TracedMove>{{0, 1, 0, 1, 0, kPathSelection}}));
}

// Each run keeps its first kFirstMovesPerRun moves; summed runs are renumbered in order and the
// whole list stops at kFirstMovesMax.
TEST(WakeupTrace, FirstMovesPerRunAndInOrder) {
  WakeupTraceSummary sum, run;
  run.traced_runs = 1;
  for (int i = 0; i < 6; ++i) run.first_moves.push_back({0, i, 0, 1, 2, kPathSelection});
  run.first_moves.resize(kFirstMovesPerRun);
  for (int r = 0; r < 8; ++r) sum.add(run);
  ASSERT_EQ(sum.first_moves.size(), kFirstMovesMax);
  EXPECT_EQ(sum.first_moves[kFirstMovesPerRun].run, 1);
  EXPECT_EQ(sum.first_moves[kFirstMovesPerRun].wake, 0);
  EXPECT_EQ(sum.first_moves.back().run,
            static_cast<int64_t>(kFirstMovesMax / kFirstMovesPerRun - 1));
  const auto j = trace_json(sum, {"llc"});
  EXPECT_EQ(j["first_moves"][0], nlohmann::ordered_json({{"run", 0},
                                                         {"wake", 0},
                                                         {"waker_cpu", 0},
                                                         {"from", 1},
                                                         {"to", 2},
                                                         {"path", "selection"}}));
}

TEST(WakeupTrace, StillQueuedIsTtwuRunnable) {
  const auto s = attribute_wakeups(trace_fixture("ttwu_runnable.txt"), options(), true);
  expect_consistent(s);
  EXPECT_EQ(s.wakeups, 2);
  EXPECT_EQ(s.paths.at(kPathTtwuRunnable), 2);  // running, then preempted (R+)
  EXPECT_EQ(s.classes_by_path.at(kPathTtwuRunnable).at("llc"), 2);
  EXPECT_EQ(s.moved, 0);
  EXPECT_EQ(s.remote_delivery, 0);
}

// A pair on one CPU: the first wake preempts the waker (it switches out runnable, R), the second
// lets it block (S).
TEST(WakeupTrace, StackedWakesCountTheWakersPreemptedByTheirWakee) {
  const auto s = attribute_wakeups(trace_fixture("stacked.txt"), options(), true);
  expect_consistent(s);
  EXPECT_EQ(s.wakeups, 2);
  EXPECT_EQ(s.stacked_wakes, 2);
  EXPECT_EQ(s.stacked_waker_preempted, 1);
  const auto j = trace_json(s, {"same-cpu", "llc"});
  EXPECT_EQ(j["stacked"], nlohmann::ordered_json({{"wakes", 2}, {"waker_preempted", 1}}));
  // The selection fixture's one stacked wake is followed by a blocking switch.
  const auto sel = attribute_wakeups(trace_fixture("selection.txt"), options());
  EXPECT_EQ(sel.stacked_wakes, 1);
  EXPECT_EQ(sel.stacked_waker_preempted, 0);
}

TEST(WakeupTrace, SwitchingOutIsQueuedRemote) {
  auto s = attribute_wakeups(trace_fixture("queued_remote.txt"), options(), true);
  expect_consistent(s);
  EXPECT_EQ(s.wakeups, 3);
  EXPECT_EQ(s.paths.at(kPathQueuedRemote), 2);  // blocked 2 us before, and right after
  EXPECT_EQ(s.paths.at(kPathSelection), 1);     // blocked 1 ms before: on_cpu long cleared
  EXPECT_EQ(s.remote_delivery, 3);
  EXPECT_EQ(s.unmatched, 1);  // the last waking has no wakeup
  // A narrower on_cpu window leaves only the wakee that blocked after the waking.
  WakeupTraceOptions narrow = options();
  narrow.on_cpu_window_ns = 1000;
  s = attribute_wakeups(trace_fixture("queued_remote.txt"), narrow);
  EXPECT_EQ(s.paths.at(kPathQueuedRemote), 1);
  EXPECT_EQ(s.paths.at(kPathSelection), 2);
}

TEST(WakeupTrace, MalformedLineNamesIt) {
  try {
    attribute_wakeups(trace_fixture("malformed.txt"), options());
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("trace line 5: sched_waking: no integer target_cpu=", 0),
              0u)
        << e.what();
  }
  for (const char* bad :
       {"wakebench-1002 000 d..3. 1.000001: sched_waking: comm=a pid=1 prio=120 target_cpu=000",
        "wakebench [000] d..3. 1.000001: sched_waking: comm=a pid=1 prio=120 target_cpu=000",
        "wakebench-1002 [000] d..3. 1.0x0001: sched_waking: comm=a pid=1 prio=120 target_cpu=0",
        "wakebench-1002 [000] d..3. 1.000001: sched_switch: prev_comm=a prev_pid=1 prev_prio=1"}) {
    EXPECT_THROW(attribute_wakeups(std::string("# x\n") + bad + "\n", options()),
                 std::invalid_argument)
        << bad;
  }
}

TEST(WakeupTrace, CommsWithSpacesDashesAndTgid) {
  const std::string text =
      "  Web Content-1000 (   1000) [000] ..... 1.000001: sched_process_fork: comm=Web Content "
      "pid=1000 child_comm=a-b c child_pid=1002\n"
      "  Web Content-1000 (   1000) [000] ..... 1.000002: sched_process_fork: comm=Web Content "
      "pid=1000 child_comm=x pid=9 child_pid=1003\n"
      "        a-b c-1002  (   1002) [001] d..3. 1.000010: sched_waking: comm=x pid=9 pid=1003 "
      "prio=120 target_cpu=000\n"
      "        a-b c-1002  (   1002) [001] d..4. 1.000011: sched_wakeup: comm=x pid=9 pid=1003 "
      "prio=120 target_cpu=000\n"
      "        a-b c-1002  (   1002) [001] d..4. 1.000012: some_other_event: whatever\n";
  WakeupTraceOptions o = options();
  const auto s = attribute_wakeups(text, o, true);
  ASSERT_EQ(s.wakeups, 1);
  EXPECT_EQ(s.list[0].waker_pid, 1002);
  EXPECT_EQ(s.list[0].wakee_pid, 1003);
  EXPECT_EQ(s.list[0].waker_cpu, 1);
  EXPECT_EQ(s.list[0].target_cpu, 0);
  EXPECT_EQ(s.list[0].cls, "llc");
  EXPECT_EQ(s.events, 5);
}

// A task name is any bytes, and the trace holds those of other tasks (a waker, a switch's other
// side): a line the attribution cannot read is escaped in its error (which a set keeps), and the
// lines kept for the side file hold '?' for each control character, so replay reads them back.
TEST(WakeupTrace, ATaskNamesControlCharactersReachNoOutput) {
  try {
    attribute_wakeups("evil\x1b[2J-7 [000] d..3. 1.000001: sched_waking: comm=a pid=1\n",
                      options());
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\x1b'), std::string::npos);
    EXPECT_NE(what.find(": \"evil\\u001b[2J-7 [000]"), std::string::npos);
  }
  WakeupTraceOptions o = options();
  o.keep_decisions = true;
  const auto s = attribute_wakeups(
      "wakebench-1000 [000] ..... 1.000001: sched_process_fork: comm=wakebench pid=1000 "
      "child_comm=wakebench child_pid=1002\n"
      "ev\x1b]0;x\x07il\r-7 [001] d..3. 1.000010: sched_waking: comm=wakebench pid=1002 prio=120 "
      "target_cpu=000\n"
      "ev\xc2\x9b"
      "1il-7 [001] d..3. 1.000011: sched_waking: comm=wakebench pid=1002 prio=120 "
      "target_cpu=000\n",
      o);
  EXPECT_EQ(s.decisions,
            "ev?]0;x?il?-7 [001] d..3. 1.000010: sched_waking: comm=wakebench pid=1002 prio=120 "
            "target_cpu=000\n"
            "ev?1il-7 [001] d..3. 1.000011: sched_waking: comm=wakebench pid=1002 prio=120 "
            "target_cpu=000\n");
  EXPECT_EQ(parse_decision_trace(s.decisions).wakings, 2);
}

TEST(WakeupTrace, JsonShapeAndSums) {
  WakeupTraceSummary a = attribute_wakeups(trace_fixture("selection.txt"), options());
  a.add(attribute_wakeups(trace_fixture("ttwu_runnable.txt"), options()));
  a.add(attribute_wakeups(trace_fixture("queued_remote.txt"), options()));
  expect_consistent(a);
  EXPECT_EQ(a.wakeups, 8);
  const auto j = trace_json(a, {"same-cpu", "llc", "cross-llc"});
  EXPECT_EQ(j["wakeups"], 8);
  EXPECT_EQ(j["paths"]["selection"], 4);
  EXPECT_EQ(j["paths"]["ttwu_runnable"], 2);
  EXPECT_EQ(j["paths"]["queued_remote"], 2);
  EXPECT_EQ(j["classes_by_path"]["ttwu_runnable"]["cross-llc"], 0);
  EXPECT_EQ(j["classes_by_path"]["selection"].begin().key(), "same-cpu");
  EXPECT_EQ(j["dropped"], 7);
  EXPECT_EQ(j["unmatched"], 1);
  for (const char* k : {"moved", "remote_delivery", "migrations", "events", "runs"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["moved_by_class"], nlohmann::ordered_json({{"same-cpu", 1}}));
  EXPECT_EQ(j["foreign"]["wakeups"], 1);
  EXPECT_EQ(j["foreign"]["moved"], 0);
  EXPECT_EQ(j["since_switch_out_us"]["moved"]["n"], 1);
  EXPECT_EQ(j["since_switch_out_us"]["moved"]["p50"], 1000.0);
  EXPECT_TRUE(j["since_switch_out_us"]["kept"].contains("p95"));
}

// The recording filters on the events' own fields, never on the running task, so a load-balancer
// migration made from another CPU's softirq (current = the idle task) is kept.
TEST(WakeupTrace, FiltersAreOnTheTaskTheEventIsAbout) {
  const auto f = event_filters("wakebench");
  const std::map<std::string, std::string> m(f.begin(), f.end());
  EXPECT_EQ(m.size(), 5u);
  EXPECT_EQ(m.at("sched/sched_migrate_task"), "comm == \"wakebench\"");
  EXPECT_EQ(m.at("sched/sched_waking"), "comm == \"wakebench\"");
  EXPECT_EQ(m.at("sched/sched_switch"), "prev_comm == \"wakebench\" || next_comm == \"wakebench\"");
  EXPECT_EQ(m.at("sched/sched_process_fork"),
            "parent_comm == \"wakebench\" || child_comm == \"wakebench\"");
  // --trace-decisions: the lab kernels' event, on the wakee's comm.
  const auto d = event_filters("wakebench", true);
  ASSERT_EQ(d.size(), 6u);
  EXPECT_EQ(d.back(), std::make_pair(std::string(kDecisionEvent), m.at("sched/sched_waking")));
  EXPECT_THROW(event_filters("a\"b"), std::runtime_error);
  EXPECT_THROW(event_filters(""), std::runtime_error);
}

TEST(WakeupTrace, BufferSizeIsBounded) {
  EXPECT_GE(WakeupTraceSession::buffer_kb_for(3300, 2), 3300);
  EXPECT_LE(WakeupTraceSession::buffer_kb_for(100'000'000, 1), 256 * 1024);
  EXPECT_LE(WakeupTraceSession::buffer_kb_for(100'000'000, 512) * 512, 1024 * 1024 * 2);
  EXPECT_GE(WakeupTraceSession::buffer_kb_for(100'000'000, 4096), 4096);
}

// ---- end to end ------------------------------------------------------------------------------

struct Cmd {
  int status;
  std::string err;
};

Cmd run(const std::string& args, const fs::path& dir) {
  const std::string cmd =
      args + " >" + (dir / "stdout").string() + " 2>" + (dir / "stderr").string();
  const int rc = std::system(cmd.c_str());
  std::ifstream in(dir / "stderr");
  std::stringstream ss;
  ss << in.rdbuf();
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc), ss.str()};
}

class TraceRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("wb-trace-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "tiny.json") << R"({"schema_version": 1, "name": "tiny",
      "defaults": {"round_trips": 300, "warmup": 30, "repetitions": 2, "timeout_s": 30},
      "cases": [{"mechanisms": ["pipe"], "modes": ["processes", "threads"],
                 "placements": ["same-cpu", "kernel"]}]})";
  }
  void TearDown() override { fs::remove_all(dir_); }
  // The tracefs instances folder, after a probe session made and removed its own; "" with
  // *why_not set when this machine has no usable tracefs.
  static std::string instances_dir(std::string* why_not) {
    try {
      WakeupTraceSession probe;  // removed at the end of this scope
      return fs::path(probe.instance_dir()).parent_path().string();
    } catch (const std::exception& e) {
      *why_not = std::string("no usable tracefs here: ") + e.what();
      return "";
    }
  }
  // `wakebench run` of tiny.json into r.json with `flag`, from a shell that writes its pid and
  // becomes wakebench, so the instance's name (wakebench-<pid>) is known: the result, the pid.
  // Why a --trace-decisions run on a stock kernel cannot be tried here ("" when it can): not root,
  // no usable tracefs, or a lab kernel (its own decision event); `instances` the instances folder.
  static std::string stock_decisions_untried(std::string* instances) {
    if (geteuid() != 0) return "--trace-decisions needs root";
    std::string why_not;
    *instances = instances_dir(&why_not);
    if (instances->empty()) return why_not;
    if (fs::exists(fs::path(*instances).parent_path() / "events" / kDecisionEvent))
      return "this kernel has the decision event (a lab kernel)";
    return "";
  }
  std::pair<Cmd, int> run_tiny(const std::string& flag) {
    const fs::path pid_file = dir_ / "pid";
    const Cmd c =
        run("sh -c 'echo $$ >" + pid_file.string() + "; exec " + WB_BINARY + " run --config " +
                (dir_ / "tiny.json").string() + " --out " + (dir_ / "r.json").string() + " " +
                flag + " --state-dir " + (dir_ / "state").string() + "'",
            dir_);
    std::ifstream pid_in(pid_file);
    int pid = 0;
    pid_in >> pid;
    return {c, pid};
  }
  fs::path dir_;
};

TEST_F(TraceRun, KernelPipeCaseIsAttributed) {
  if (geteuid() != 0) GTEST_SKIP() << "--trace-wakeups needs root";
  // The host kernel traces the emulator's own helper threads as tasks of the case.
  if (const std::string emu = wb::test::user_mode_emulation(); !emu.empty())
    GTEST_SKIP() << "under " << emu << ": the trace holds qemu's own threads, not only the case's";
  std::string why_not;
  const std::string instances = instances_dir(&why_not);
  if (instances.empty()) GTEST_SKIP() << why_not;
  const fs::path out = dir_ / "r.json";
  const auto [c, pid] = run_tiny("--trace-wakeups");
  ASSERT_EQ(c.status, 0) << c.err;
  ASSERT_GT(pid, 0);
  // The run removed its instance, and said nothing about it.
  EXPECT_FALSE(fs::exists(fs::path(instances) / ("wakebench-" + std::to_string(pid))));
  EXPECT_EQ(c.err.find("could not remove"), std::string::npos) << c.err;
  std::ifstream in(out);
  const auto rs = nlohmann::json::parse(in);
  int kernel_cases = 0;
  for (const auto& cs : rs["cases"]) {
    if (cs["placement"] != "kernel") {
      EXPECT_TRUE(cs["trace"].is_null()) << cs["name"];  // pinned cases are not traced
      continue;
    }
    ++kernel_cases;
    ASSERT_EQ(cs["status"], "ok") << cs["name"] << ": " << cs["reason"];
    const auto& t = cs["trace"];
    ASSERT_TRUE(t.is_object() && t.contains("wakeups")) << cs["name"] << ": " << t.dump();
    const int64_t n = t["wakeups"];
    const int64_t per_run = 300 + 30;  // measured + warm-up round trips of one repetition
    EXPECT_EQ(t["runs"], 2);
    // At most two wakeups a round trip (one each way; a wakee that has not blocked yet needs
    // none), plus the barrier and thread exits; at least one every other round trip.
    EXPECT_GE(n, per_run * 2 / 2) << cs["name"];
    EXPECT_LE(n, 2 * per_run * 2 + 64) << cs["name"];
    int64_t total = 0;
    for (const auto& [path, k] : t["paths"].items()) {
      EXPECT_GE(k.get<int64_t>(), 0) << path;
      total += k.get<int64_t>();
      int64_t by_class = 0;
      for (const auto& [cls, m] : t["classes_by_path"][path].items()) by_class += m.get<int64_t>();
      EXPECT_EQ(by_class, k.get<int64_t>()) << path;
    }
    EXPECT_EQ(total, n);
    // The session sizes its buffer for the repetition (buffer_kb_for): nothing may be lost.
    EXPECT_EQ(t["dropped"].get<int64_t>(), 0) << cs["name"];
    EXPECT_LE(t["moved"].get<int64_t>(), n);
  }
  EXPECT_EQ(kernel_cases, 2);
}

TEST_F(TraceRun, CtrlCRemovesTheInstance) {
  if (geteuid() != 0) GTEST_SKIP() << "--trace-wakeups needs root";
  std::string why_not;
  const std::string instances = instances_dir(&why_not);
  if (instances.empty()) GTEST_SKIP() << why_not;
  std::ofstream(dir_ / "long.json") << R"({"schema_version": 1, "name": "long",
      "defaults": {"round_trips": 2000000, "warmup": 10, "repetitions": 1, "timeout_s": 60},
      "cases": [{"mechanisms": ["pipe"], "modes": ["threads"], "placements": ["kernel"]}]})";
  const std::string cfg = (dir_ / "long.json").string(), out = (dir_ / "r.json").string();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = open((dir_ / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(WB_BINARY, WB_BINARY, "run", "--config", cfg.c_str(), "--out", out.c_str(),
          "--trace-wakeups", "--state-dir", (dir_ / "state").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const fs::path inst = fs::path(instances) / ("wakebench-" + std::to_string(pid));
  // Wait until the run has its instance and the case is running, then interrupt it.
  for (int i = 0; i < 200 && !fs::exists(inst); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_TRUE(fs::exists(inst));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
  EXPECT_FALSE(fs::exists(inst));
}

TEST_F(TraceRun, WithoutTracefsItSaysWhyUpFront) {
  if (geteuid() != 0 || std::system("command -v setpriv >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "needs root and setpriv to run the option as an unprivileged user";
  fs::permissions(dir_, fs::perms::all);
  const std::string nobody =
      "setpriv --reuid=65534 --regid=65534 --clear-groups " + std::string(WB_BINARY);
  // A cross build's libraries can lie in a folder the user may not enter (runners/cross-build.sh
  // extracts ppc64le's under the build directory): then nothing of this option can be seen.
  if (const Cmd help = run(nobody + " --help", dir_); help.status != 0)
    GTEST_SKIP() << "user 65534 cannot start wakebench here: " << help.err;
  const fs::path out = dir_ / "r.json";
  const Cmd c = run(nobody + " run --config " + (dir_ / "tiny.json").string() + " --out " +
                        out.string() + " --trace-wakeups --state-dir " + (dir_ / "state").string(),
                    dir_);
  EXPECT_EQ(c.status, 2) << c.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_NE(c.err.find("--trace-wakeups"), std::string::npos) << c.err;
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
}

// --trace-decisions on a kernel without the lab's decision event (this one, unless it is a lab
// kernel): one line naming the event, exit 2, no result set, no tracefs instance left.
// A kernel with neither the lab's decision event nor a BPF recorder that attaches (this VM's
// vendor kernel refuses fentry programs; a build without libbpf): one warning line that says
// why, and the run goes on tracing the wakeups alone, its set without a `decisions` block.
TEST_F(TraceRun, WithoutAnyDecisionRecorderItSaysWhyAndGoesOn) {
  std::string instances;
  if (const std::string why = stock_decisions_untried(&instances); !why.empty())
    GTEST_SKIP() << why;
  try {
    DecisionRecorder attaches("wb-probe");
    GTEST_SKIP() << "the BPF decision recorder attaches on this kernel";
  } catch (const std::runtime_error&) {
  }
  const auto [c, pid] = run_tiny("--trace-decisions");
  ASSERT_EQ(c.status, 0) << c.err;
  const std::string warning = "wakebench: warning: --trace-decisions records nothing: ";
  ASSERT_NE(c.err.find(warning), std::string::npos) << c.err;
  const std::string line = c.err.substr(c.err.find(warning));
  EXPECT_NE(line.substr(0, line.find('\n')).find("BPF"), std::string::npos) << line;
  const ResultSet rs = load_result_set((dir_ / "r.json").string());
  EXPECT_FALSE(rs.set.decisions);
  EXPECT_FALSE(fs::exists(dir_ / "r.decisions.txt"));
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(fs::exists(fs::path(instances) / ("wakebench-" + std::to_string(pid))));
}

// --trace-decisions --decision-recorder tp_btf where it loads (this VM's vendor kernel, which
// refuses fentry): the run says which recorder records, and its side file holds a source=tp_btf
// record for each traced wakeup of the kernel cases, with the pipe's documented wake flags; the
// replay of each case in its predictions is the side file's.
TEST_F(TraceRun, TheTpBtfRecorderRecordsEveryWakeupAndSaysSo) {
  std::string instances;
  if (const std::string why = stock_decisions_untried(&instances); !why.empty())
    GTEST_SKIP() << why;
  try {
    DecisionRecorder attaches("wb-probe", RecorderChoice::kTpBtf);
  } catch (const std::runtime_error& e) {
    GTEST_SKIP() << e.what();
  }
  const auto [c, pid] = run_tiny("--trace-decisions --decision-recorder tp_btf");
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.err.find("wakebench: note: --trace-decisions: recording at tp_btf/sched_waking"),
            std::string::npos)
      << c.err;
  const ResultSet rs = load_result_set((dir_ / "r.json").string());
  ASSERT_TRUE(rs.set.decisions);
  const DecisionTrace t = parse_decision_trace(test::read_fixture(dir_ / "r.decisions.txt"));
  EXPECT_GT(t.records.size(), 100u);
  EXPECT_EQ(static_cast<int64_t>(t.records.size()), t.wakings);  // none lost on a tiny run
  int64_t piped = 0;
  for (const DecisionRecord& d : t.records) {
    EXPECT_EQ(d.source, DecisionSource::kTpBtf);
    piped += d.wake_flags_from == "registry:pipe" && (d.wake_flags & kWfSync);
  }
  EXPECT_GT(piped, 100);
  // The run replayed each repetition's records as it ended: each kernel case's line of its
  // predictions is what replaying the published side file gives.
  ASSERT_TRUE(rs.set.predictions);
  const nlohmann::json run = nlohmann::json::parse(rs.set.predictions->dump());
  const nlohmann::json file = to_json(predict_for_results_file((dir_ / "r.json").string()));
  ASSERT_EQ(run["cases"].size(), file["cases"].size()) << run.dump();
  int replayed = 0;
  for (std::size_t i = 0; i < run["cases"].size(); ++i) {
    EXPECT_EQ(run["cases"][i].value("replay", nlohmann::json()),
              file["cases"][i].value("replay", nlohmann::json()))
        << i;
    replayed += run["cases"][i].contains("replay") && run["cases"][i]["replay"]["wakeups"] > 100;
  }
  EXPECT_EQ(replayed, 2) << run.dump();
}

}  // namespace
}  // namespace wb
