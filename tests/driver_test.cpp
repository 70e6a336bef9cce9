// The shared driver through the pipe mechanism, in both modes, on this machine: structure and
// invariants only (sample counts, pinning, failure reporting), never absolute times.
#include "common/measure/driver.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>

#include "benchmarks/registry.h"
#include "common/system/clock.h"
#include "common/util/sys.h"
#include "tests/support.h"

namespace wb {
namespace {

CaseSpec pipe_case(Mode mode, int waker, int wakee) {
  CaseSpec s;
  s.name = "pipe/test";
  s.mechanism = "pipe";
  s.mode = mode;
  s.placement = waker == wakee ? "same-cpu" : "llc";
  s.cpu_pairs = {{waker, wakee}};
  s.round_trips = 200;
  s.warmup = 20;
  s.timeout_s = 20;
  return s;
}

class DriverModes : public ::testing::TestWithParam<Mode> {};

TEST_P(DriverModes, PinnedPipeRoundTripsAreAllSampledOnTheirCpus) {
  const auto cpus = allowed_cpus();
  const int a = cpus.front(), b = cpus.size() > 1 ? cpus[1] : cpus.front();
  const size_t fds_before = test::open_fds();
  for (auto [w, e] : {std::pair{a, a}, std::pair{a, b}}) {
    const RunOutcome out =
        run_case(pipe_case(GetParam(), w, e), *find_mechanism("pipe"), test::this_machine(), {});
    ASSERT_TRUE(out.ok) << out.error;
    ASSERT_EQ(out.pairs.size(), 1u);
    const PairSamples& s = out.pairs[0];
    ASSERT_EQ(s.rtt_ns.size(), 200u);
    ASSERT_EQ(s.wakeup_ns.size(), 200u);
    for (size_t k = 0; k < s.rtt_ns.size(); ++k) {
      EXPECT_GT(s.rtt_ns[k], 0);
      EXPECT_GT(s.wakeup_ns[k], 0);
      // The one-way time is a part of the round trip it belongs to.
      EXPECT_LT(s.wakeup_ns[k], s.rtt_ns[k]);
      EXPECT_EQ(s.waker_cpu[k], w);
      EXPECT_EQ(s.wakee_cpu[k], e);
    }
  }
  EXPECT_EQ(test::open_fds(), fds_before) << "a case leaked file descriptors";
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a task process is left";
}

TEST_P(DriverModes, KernelPlacementRecordsWhereTasksRan) {
  const auto cpus = allowed_cpus();
  CaseSpec s = pipe_case(GetParam(), cpus.front(), cpus.size() > 1 ? cpus[1] : cpus.front());
  s.kind = PlacementKind::kKernel;
  s.placement = "kernel";
  s.cpuset = cpus;
  const RunOutcome out = run_case(s, *find_mechanism("pipe"), test::this_machine(), {});
  ASSERT_TRUE(out.ok) << out.error;
  for (int c : out.pairs[0].waker_cpu)
    EXPECT_NE(std::find(cpus.begin(), cpus.end(), c), cpus.end());
  for (int c : out.pairs[0].wakee_cpu)
    EXPECT_NE(std::find(cpus.begin(), cpus.end(), c), cpus.end());
}

TEST_P(DriverModes, ConcurrentPairsEachKeepTheirSamples) {
  const auto cpus = allowed_cpus();
  CaseSpec s = pipe_case(GetParam(), cpus.front(), cpus.back());
  s.cpu_pairs = {{cpus.front(), cpus.back()}, {cpus.back(), cpus.front()}};
  const RunOutcome out = run_case(s, *find_mechanism("pipe"), test::this_machine(), {});
  ASSERT_TRUE(out.ok) << out.error;
  ASSERT_EQ(out.pairs.size(), 2u);
  EXPECT_EQ(out.pairs[1].rtt_ns.size(), 200u);
  EXPECT_EQ(out.pairs[1].waker_cpu.front(), cpus.back());
}

TEST_P(DriverModes, ACpuThatIsNotAllowedFailsTheCaseWithTheReason) {
  const RunOutcome out =
      run_case(pipe_case(GetParam(), 0, 4000), *find_mechanism("pipe"), test::this_machine(), {});
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.error.find("wakee: "), std::string::npos) << out.error;
  EXPECT_NE(out.error.find("4000"), std::string::npos) << out.error;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a task process is left";
}

// A round trip starts where the previous one ended: the samples tile the span, so their mean is
// the span over the round trips (what perf bench sched pipe reports).
TEST_P(DriverModes, RoundTripsAddUpToTheSpan) {
  const auto cpus = allowed_cpus();
  const RunOutcome out = run_case(pipe_case(GetParam(), cpus.front(), cpus.front()),
                                  *find_mechanism("pipe"), test::this_machine(), {});
  ASSERT_TRUE(out.ok) << out.error;
  const PairSamples& s = out.pairs[0];
  int64_t sum = 0;
  for (int64_t r : s.rtt_ns) sum += r;
  // Each sample is rounded to a ns on its own; the span once.
  EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(s.end_ns - s.begin_ns),
              static_cast<double>(s.rtt_ns.size()) + 1);
}

INSTANTIATE_TEST_SUITE_P(Modes, DriverModes, ::testing::Values(Mode::kThreads, Mode::kProcesses),
                         [](const auto& info) { return std::string(mode_id(info.param)); });

// A mechanism whose wakee never answers: the watchdog must fail the case and reap everything.
class SilentLink final : public Link {
 public:
  int send(Role) noexcept override { return 0; }
  int wait(Role me) noexcept override {
    if (me == Role::kWaker) pause();  // the answer never comes
    return 0;
  }
};
class SilentMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "silent"; }
  std::string_view round_trip() const override { return "never answers"; }
  std::unique_ptr<Link> make_link(const CaseSpec&, void*) const override {
    return std::make_unique<SilentLink>();
  }
};

TEST_P(DriverModes, AStuckPartnerTimesOut) {
  const auto cpus = allowed_cpus();
  CaseSpec s = pipe_case(GetParam(), cpus.front(), cpus.back());
  const RunOutcome out = run_case(s, SilentMechanism{}, test::this_machine(), {.timeout_s = 0.5});
  EXPECT_FALSE(out.ok);
  // The timeout as given: 0.5 s once read "0 s".
  EXPECT_EQ(out.error.rfind("timeout after 0.5 s:", 0), 0u) << out.error;
  EXPECT_NE(out.error.find("waker at round trip 0/220"), std::string::npos) << out.error;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a task process is left";
}

// The supervisor's deadlines: every grace starts once, so a task that SIGKILL does not end (one in
// uninterruptible sleep) cannot keep the run waiting. The supervisor's loop calls killed() on each
// pass after it killed; the kill grace must run from the first call.
TEST(Deadlines, TheKillGraceIsBoundedWhateverThePassesDo) {
  constexpr int64_t s = 1'000'000'000, grace = Deadlines::kKillGraceNs;
  Deadlines d(0, 10 * s);
  EXPECT_FALSE(d.kill_due(10 * s - 1));
  EXPECT_TRUE(d.kill_due(10 * s));
  EXPECT_TRUE(d.timed_out(10 * s));
  d.killed(10 * s);
  EXPECT_FALSE(d.kill_due(10 * s)) << "killed once";
  for (int64_t now = 10 * s; now < 10 * s + grace; now += grace / 10) {
    EXPECT_FALSE(d.give_up(now)) << now;
    d.killed(now);  // a later pass
    EXPECT_LE(d.next(), 10 * s + grace) << "the grace moved at " << now;
  }
  EXPECT_TRUE(d.give_up(10 * s + grace)) << "the kill grace was extended by later passes";
}

TEST(Deadlines, AFailedTaskGivesTheOthersHalfASecond) {
  constexpr int64_t ms = 1'000'000;
  Deadlines d(0, 60'000 * ms);
  d.task_failed(100 * ms);
  d.task_failed(400 * ms);  // a second failure does not extend the grace
  EXPECT_EQ(d.next(), 600 * ms);
  EXPECT_FALSE(d.kill_due(599 * ms));
  EXPECT_TRUE(d.kill_due(600 * ms));
  EXPECT_FALSE(d.timed_out(600 * ms));
  d.killed(600 * ms);
  EXPECT_EQ(d.next(), 600 * ms + Deadlines::kKillGraceNs);
  EXPECT_TRUE(d.give_up(600 * ms + Deadlines::kKillGraceNs));
}

// Stamps are the counter behind CLOCK_MONOTONIC where the kernel trusts it, converted to the same
// nanoseconds as now_ns().
TEST(StampClock, ConvertsToMonotonicTime) {
  const StampClock& c = stamp_clock();
  EXPECT_FALSE(c.source.empty());
  EXPECT_EQ(c.counter, c.source.rfind("clock_gettime", 0) != 0) << c.source;
  EXPECT_GT(c.ns_per_tick, 0);
  const int64_t before = now_ns();
  const int64_t t = c.to_ns(stamp());
  const int64_t after = now_ns();
  // Calibrated over 5 ms: within a microsecond here, bounded generously for loaded machines.
  EXPECT_GE(t, before - 1'000'000);
  EXPECT_LE(t, after + 1'000'000);
  EXPECT_GT(c.overhead_ns(), 0);
}

// The kernel-placement start gate reads the wakee's state: a thread blocked in read() sleeps
// ('S'), a spinning one runs ('R'), an exited one is gone ('\0') or dead.
TEST(TaskState, SleepingRunningAndGone) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::atomic<pid_t> tid{0};
  std::atomic<bool> stop{false};
  std::thread sleeper([&] {
    tid = gettid();
    char c;
    [[maybe_unused]] ssize_t n = read(fds[0], &c, 1);
  });
  while (tid == 0) std::this_thread::yield();
  char state = '\0';
  for (int i = 0; i < 2000 && state != 'S'; ++i) {
    state = task_state(tid);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(state, 'S');
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  sleeper.join();
  std::atomic<pid_t> spinner_tid{0};
  std::thread spinner([&] {
    spinner_tid = gettid();
    while (!stop) {
    }
  });
  while (spinner_tid == 0) std::this_thread::yield();
  EXPECT_EQ(task_state(spinner_tid), 'R');
  stop = true;
  spinner.join();
  // A joined thread has exited: gone, or for a moment still listed (dead, or under qemu-user still
  // on its way out): poll up to 1 s.
  char gone = task_state(spinner_tid);
  for (int i = 0; i < 1000 && !(gone == '\0' || gone == 'X' || gone == 'Z'); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    gone = task_state(spinner_tid);
  }
  EXPECT_TRUE(gone == '\0' || gone == 'X' || gone == 'Z') << "state " << gone;
  close(fds[0]);
  close(fds[1]);
}

// A mechanism whose setup fails (as tcp-loopback's connect() does where loopback is down): that
// case fails with the reason, the caller goes on, and nothing is left open.
class RefusedMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "refused"; }
  std::string_view round_trip() const override { return "never connects"; }
  std::unique_ptr<Link> make_link(const CaseSpec&, void*) const override {
    throw std::system_error(ECONNREFUSED, std::generic_category(), "connect 127.0.0.1");
  }
};

TEST_P(DriverModes, ASetupErrorFailsOnlyItsCase) {
  const auto cpus = allowed_cpus();
  const size_t fds = test::open_fds();
  const RunOutcome out = run_case(pipe_case(GetParam(), cpus.front(), cpus.back()),
                                  RefusedMechanism{}, test::this_machine(), {.timeout_s = 5});
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error.rfind("setup: connect 127.0.0.1", 0), 0u) << out.error;
  EXPECT_EQ(test::open_fds(), fds);
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a task process is left";
}

}  // namespace
}  // namespace wb

namespace wb {
namespace {

// A thread created while its creator stands on CPU c starts on c (the kernel gives a new task its
// creator's CPU, and that CPU as its first recent_used_cpu): how the driver defines every task's
// first state (docs/policy-model.md#first-wake). Without stand_on it starts where the creator is.
TEST(CreatorCpu, AThreadCreatedThereStartsThereAndTheCreatorIsRestored) {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  set_affinity({cpus[0]});
  const auto first_cpu = [] {
    int got = -1;
    std::thread([&got] { got = sched_getcpu(); }).join();
    return got;
  };
  EXPECT_EQ(first_cpu(), cpus[0]);  // the control: a new thread starts on its creator's CPU
  {
    CreatorCpu creator;
    creator.stand_on(cpus[1]);
    EXPECT_EQ(first_cpu(), cpus[1]);
  }
  EXPECT_EQ(sched_getcpu(), cpus[0]);  // restored: pinned to cpus[0] as before
  set_affinity(cpus);
}

}  // namespace
}  // namespace wb
