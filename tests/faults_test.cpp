// Faults, end to end (docs/cli.md#run): `wakebench run` on a tiny suite while the test hurts one of
// its task processes from outside, as a crash, an OOM kill or a debugger would. A partner killed by
// SIGKILL fails its case with "partner exited: killed by signal 9"; a partner that stops answering
// (SIGSTOP) fails its case on the watchdog; either way the next case runs, and the hurt case's
// later repetitions do not run. Each run ends with a SIGINT (Ctrl-C) or a SIGTERM (kill, a batch
// system's stop) during a long case: the result set is written and marked incomplete. After each
// run no process of ours is left, nothing of ours is in /dev/shm, the supervisor holds no more
// descriptors than before the fault, and every task held a bounded number of descriptors.
//
// The tasks are the wakebench process's children (driver.cpp CaseRun::spawn): in processes mode one
// per task, in threads mode one case process whose threads are the tasks. They are found through
// /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN, in every distribution kernel).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/schema/run_order.h"
#include "tests/support.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A task opens its mechanism's fds, its pidfd-free copy of the supervisor's and one perf event per
// counted event (about ten): far below this unless something leaks per round trip.
constexpr size_t kMaxTaskFds = 64;

using wb::test::slurp;

// Direct children of every thread of `pid`.
std::vector<pid_t> child_pids(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::istringstream in(slurp(t.path() / "children"));
    for (pid_t c; in >> c;) out.push_back(c);
  }
  return out;
}

std::vector<pid_t> descendants_of(pid_t pid) {
  std::vector<pid_t> out;
  for (pid_t c : child_pids(pid)) {
    out.push_back(c);
    for (pid_t g : descendants_of(c)) out.push_back(g);
  }
  return out;
}

// Field 22 of /proc/<pid>/stat (start time in clock ticks) tells a live process from a later one
// that reuses its pid; 0 when the process is gone or a zombie.
unsigned long long start_time(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream in(stat.substr(paren + 2));
  std::string state;
  in >> state;
  if (state == "Z" || state == "X") return 0;
  std::string field;
  for (int i = 4; i < 22 && in >> field; ++i) {
  }
  unsigned long long t = 0;
  in >> t;
  return t;
}

size_t fd_count(pid_t pid) {
  size_t n = 0;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end; !ec && it != end;
       it.increment(ec))
    ++n;
  return n;
}

// Entries of /dev/shm that could be ours: POSIX shared memory or semaphores named after wakebench,
// or Boost.Interprocess's default names.
std::set<std::string> our_shm_entries() {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev/shm", ec)) {
    std::string name = e.path().filename().string();
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (lower.find("wakebench") != std::string::npos || lower.rfind("wb", 0) == 0 ||
        lower.find("boost") != std::string::npos || lower.find("interprocess") != std::string::npos)
      out.insert(name);
  }
  return out;
}

const char* mode_name(bool processes) { return processes ? "processes" : "threads"; }

class Faults : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("wb-faults-" + std::to_string(getpid()) + "-" + std::to_string(GetParam()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    shm_before_ = our_shm_entries();
    // Orphans of wakebench would be re-parented to this process: it can then see them.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
  void TearDown() override {
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  // Three cases of one mode: A (the one the test hurts, long, three repetitions: the fault hits the
  // first, the counting pass), B (short: must still run), C (long: interrupted). A's watchdog is
  // `timeout_a` seconds.
  void start(double timeout_a) {
    write_config(R"({"schema_version": 1, "name": "faults",
      "defaults": {"round_trips": 200, "warmup": 20, "repetitions": 1, "timeout_s": 120},
      "cases": [
        {"mechanisms": ["pipe"], "modes": ["MODE"], "placements": ["same-cpu"],
         "round_trips": 50000000, "repetitions": 3, "timeout_s": TIMEOUT_A},
        {"mechanisms": ["pipe"], "modes": ["MODE"], "placements": ["kernel"]},
        {"mechanisms": ["pipe"], "modes": ["MODE"], "placements": ["same-cpu"],
         "round_trips": 50000000, "params": {"payload": [64]}}]})",
                 {{"TIMEOUT_A", std::to_string(timeout_a)}});
    // `run` interleaves the repetitions in a shuffled order (common/schema/run_order.h): a seed
    // that runs A, B and C in that order.
    uint64_t seed = 0;
    while (wb::interleaved_order({3, 1, 1}, seed) != std::vector<size_t>{0, 1, 2, 0, 0}) ++seed;
    seed_arg_ = "--seed=" + std::to_string(seed);
    launch(seed_arg_.c_str());
  }

  // Writes dir_/faults.json: `text` with MODE replaced by this test's mode and each other
  // placeholder by its value.
  void write_config(std::string text, std::map<std::string, std::string> values = {}) {
    values["MODE"] = mode_name(GetParam());
    for (const auto& [key, value] : values)
      for (size_t at; (at = text.find(key)) != std::string::npos;)
        text.replace(at, key.size(), value);
    std::ofstream(dir_ / "faults.json") << text;
  }

  // Starts `wakebench run` on dir_/faults.json, with one `extra` argument if given, stderr to
  // dir_/stderr.
  void launch(const char* extra = nullptr) {
    out_ = dir_ / "r.json";
    pid_ = fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      const std::string cfg = (dir_ / "faults.json").string(), out = out_.string(),
                        err = (dir_ / "stderr").string();
      if (!freopen(err.c_str(), "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(126);
      execl(WB_BINARY, WB_BINARY, "run", "--config", cfg.c_str(), "--out", out.c_str(), extra,
            nullptr);
      _exit(127);
    }
  }

  // Polls `done` every 10 ms for up to `limit`, recording every descendant of wakebench seen.
  bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit) {
    const auto until = Clock::now() + limit;
    while (Clock::now() < until) {
      observe();
      if (done()) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }
  void observe() {
    for (pid_t d : descendants_of(pid_)) {
      if (seen_.count(d)) continue;
      if (const auto t = start_time(d)) seen_[d] = t;
    }
  }
  std::string err() const { return slurp(dir_ / "stderr"); }

  // The running case's tasks (wakebench's children) once they have been there for a while, so the
  // case is past its setup; their number is 2 in processes mode (waker, wakee), 1 in threads mode.
  std::vector<pid_t> running_tasks(const std::set<pid_t>& not_these) {
    const size_t want = GetParam() ? 2 : 1;
    std::vector<pid_t> tasks;
    const bool up = wait_until(
        [&] {
          tasks.clear();
          for (pid_t c : child_pids(pid_))
            if (!not_these.count(c)) tasks.push_back(c);
          return tasks.size() == want;
        },
        std::chrono::seconds(120));
    EXPECT_TRUE(up) << "the case's tasks never appeared: " << err();
    std::this_thread::sleep_for(milliseconds(500));
    for (pid_t t : tasks) {
      const size_t n = fd_count(t);
      EXPECT_GT(n, 0u) << "task " << t << " gone before the fault";
      EXPECT_LE(n, kMaxTaskFds) << "task " << t << " holds too many descriptors";
    }
    return tasks;
  }

  // The supervisor's descriptors while a case runs, once they stay put.
  size_t steady_fds() {
    size_t n = fd_count(pid_);
    for (int i = 0; i < 5; ++i) {
      std::this_thread::sleep_for(milliseconds(50));
      n = std::min(n, fd_count(pid_));
    }
    return n;
  }

  // Hurts task A with `sig`, checks A's failure and B, stops C with `stop`, checks what is left.
  void run_fault(int sig, const std::string& expect_a, int stop) {
    ASSERT_NO_FATAL_FAILURE(start(sig == SIGSTOP ? 3 : 120));
    const std::vector<pid_t> a = running_tasks({});
    ASSERT_FALSE(a.empty());
    const size_t fds_a = steady_fds();
    // In processes mode the wakee; in threads mode the case process.
    ASSERT_EQ(kill(a.back(), sig), 0);
    ASSERT_TRUE(wait_until([&] { return err().find("[2/3]") != std::string::npos; },
                           std::chrono::seconds(120)))
        << err();
    const std::vector<pid_t> c = running_tasks({a.begin(), a.end()});
    EXPECT_EQ(steady_fds(), fds_a) << "the supervisor's descriptors changed after the fault";
    ASSERT_EQ(kill(pid_, stop), 0);
    int status = 0;
    ASSERT_TRUE(wait_until([&] { return waitpid(pid_, &status, WNOHANG) == pid_; },
                           std::chrono::seconds(60)))
        << "wakebench did not stop on signal " << stop << ": " << err();
    const pid_t wakebench = pid_;
    pid_ = -1;
    const std::string e = err();
    ASSERT_TRUE(WIFEXITED(status)) << e;
    EXPECT_NE(WEXITSTATUS(status), 0) << e;

    const auto rs = nlohmann::json::parse(slurp(out_));
    EXPECT_EQ(rs["complete"], false);
    ASSERT_EQ(rs["cases"].size(), 3u) << rs["cases"].dump();
    const auto& ca = rs["cases"][0];
    EXPECT_EQ(ca["status"], "failed");
    EXPECT_NE(ca["reason"].get<std::string>().find(expect_a), std::string::npos) << ca["reason"];
    EXPECT_EQ(rs["cases"][1]["status"], "ok") << rs["cases"][1]["reason"];
    EXPECT_EQ(rs["cases"][1]["round_trips"], 200);
    EXPECT_EQ(rs["cases"][2]["status"], "failed");
    EXPECT_EQ(rs["cases"][2]["reason"], "interrupted");
    expect_nothing_left(wakebench);
  }

  // Nothing of ours is left after `wakebench` exited: every process seen under it is gone (not
  // even a zombie), no orphan was handed to this process, /dev/shm has nothing new, and no
  // temporary result set is left beside the real one.
  void expect_nothing_left(pid_t wakebench) {
    for (const auto& [p, t] : seen_)
      EXPECT_NE(start_time(p), t) << "process " << p << " outlived the run";
    EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "an orphaned task was re-parented to the test";
    std::set<std::string> new_shm;
    for (const auto& n : our_shm_entries())
      if (!shm_before_.count(n)) new_shm.insert(n);
    EXPECT_TRUE(new_shm.empty()) << "left in /dev/shm: " << *new_shm.begin();
    EXPECT_FALSE(fs::exists(out_.string() + ".tmp." + std::to_string(wakebench)));
  }

  fs::path dir_, out_;
  std::string seed_arg_;
  pid_t pid_ = -1;
  std::map<pid_t, unsigned long long> seen_;  // pid -> start time
  std::set<std::string> shm_before_;
};

TEST_P(Faults, KilledPartnerFailsItsCaseAndTheRunGoesOn) {
  run_fault(SIGKILL, "partner exited: killed by signal 9", SIGINT);
}

TEST_P(Faults, StoppedPartnerTimesOutAndTheRunGoesOn) {
  run_fault(SIGSTOP, "timeout after 3 s", SIGTERM);
}

// A partner killed in the third repetition, after two good ones, fails its case like one killed
// in the first; the run ends normally. (Google Benchmark used to abort the whole run there: it
// checks that the repetitions of a case ran the same iterations, and a repetition that fails
// before its loop books none.) Every repetition starts fresh tasks, so the third is the third set
// of tasks seen. 50,000 round trips keep a repetition up for 0.25 s or more (5 us a same-CPU round
// trip), 25 of the 10 ms polls that must see its tasks; 200,000 took 15 s a mode under ASan.
TEST_P(Faults, PartnerKilledInALaterRepetitionFailsItsCase) {
  write_config(R"({"schema_version": 1, "name": "faults",
    "defaults": {"round_trips": 50000, "warmup": 20, "repetitions": 3, "timeout_s": 120},
    "cases": [{"mechanisms": ["pipe"], "modes": ["MODE"], "placements": ["same-cpu"]}]})");
  ASSERT_NO_FATAL_FAILURE(launch("--events=none"));
  const size_t per_repetition = GetParam() ? 2 : 1;
  std::vector<pid_t> third;
  ASSERT_TRUE(wait_until(
      [&] {
        if (seen_.size() < 3 * per_repetition) return false;
        third.clear();
        for (pid_t c : child_pids(pid_))
          if (seen_.count(c)) third.push_back(c);
        return seen_.size() == 3 * per_repetition && third.size() == per_repetition;
      },
      std::chrono::seconds(120)))
      << "never saw a third repetition's tasks: " << err();
  ASSERT_EQ(kill(third.back(), SIGKILL), 0);
  int status = 0;
  ASSERT_TRUE(wait_until([&] { return waitpid(pid_, &status, WNOHANG) == pid_; },
                         std::chrono::seconds(120)))
      << err();
  const pid_t wakebench = pid_;
  pid_ = -1;
  expect_nothing_left(wakebench);
  ASSERT_TRUE(WIFEXITED(status)) << "wakebench died: " << err();
  // Its one case failed: the run says it measured nothing, exit 1 (the set still written).
  EXPECT_EQ(WEXITSTATUS(status), 1) << err();
  EXPECT_NE(err().find("wakebench: no case was measured (1 failed, 0 skipped)"), std::string::npos)
      << err();
  const auto rs = nlohmann::json::parse(slurp(out_));
  EXPECT_EQ(rs["complete"], true);
  ASSERT_EQ(rs["cases"].size(), 1u);
  EXPECT_EQ(rs["cases"][0]["status"], "failed");
  EXPECT_NE(rs["cases"][0]["reason"].get<std::string>().find("partner exited: killed by signal 9"),
            std::string::npos)
      << rs["cases"][0]["reason"];
}

// Names end in the mode: runners/sanitize.sh tsan excludes /processes$ (ThreadSanitizer follows
// threads mode only).
INSTANTIATE_TEST_SUITE_P(Modes, Faults, ::testing::Values(false, true),
                         [](const auto& info) { return std::string(mode_name(info.param)); });

}  // namespace
