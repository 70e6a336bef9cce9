// fanout (benchmarks/fanout.cpp): the flip structure its schedule gives record_wakee() and
// wake_wide(), its knob refusals, and whole cases under kernel placement and under a killed or a
// stopped task, in both modes. The pinned classes run through mechanisms_test.cpp's Protocol.
// Structure only, never absolute times.
#include "benchmarks/fanout.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "benchmarks/registry.h"
#include "common/measure/driver.h"
#include "common/schema/registry.h"
#include "common/schema/result_set.h"
#include "tests/support.h"

namespace wb {
namespace {

// --- the schedule --------------------------------------------------------------------------------

// record_wakee() (kernel/sched/fair.c) over `rounds` rounds in lock step: every sender asks its
// receiver, which answers it. Tasks [0, N) are the senders, [N, N+M) the receivers. The decay
// (flips halved once a second) is left out: it halves both tiers alike.
struct Flips {
  std::vector<std::set<int>> woke;  // per task: the distinct tasks it woke
  std::vector<int64_t> flips;       // per task: wakee_flips
  std::vector<int> last;            // per task: last_wakee

  Flips(int senders, int receivers, int64_t rounds)
      : woke(static_cast<size_t>(senders + receivers)),
        flips(woke.size(), 0),
        last(woke.size(), -1) {
    for (int64_t r = 0; r < rounds; ++r)
      for (int i = 0; i < senders; ++i) {
        const int j = senders + fanout_receiver(i, r, receivers);
        wake(i, j);
        wake(j, i);
      }
  }
  void wake(int waker, int wakee) {
    if (last[static_cast<size_t>(waker)] != wakee) ++flips[static_cast<size_t>(waker)];
    last[static_cast<size_t>(waker)] = wakee;
    woke[static_cast<size_t>(waker)].insert(wakee);
  }
};

// wake_wide() (fair.c): factor = sd_llc_size; wide when the smaller count reaches the factor and
// the larger is at least factor times the smaller.
bool wake_wide(int64_t waker_flips, int64_t wakee_flips, int64_t llc_size) {
  const int64_t master = std::max(waker_flips, wakee_flips);
  const int64_t slave = std::min(waker_flips, wakee_flips);
  return slave >= llc_size && master >= slave * llc_size;
}

// Whether every wake between a sender and a receiver is wide on an LLC of `llc_size` CPUs.
bool all_wide(const Flips& f, int senders, int receivers, int64_t llc_size) {
  for (int i = 0; i < senders; ++i)
    for (int j = senders; j < senders + receivers; ++j)
      if (!wake_wide(f.flips[static_cast<size_t>(i)], f.flips[static_cast<size_t>(j)], llc_size))
        return false;
  return true;
}

TEST(FanoutSchedule, TwoSendersOverEightReceiversFlipBothTiers) {
  const int n = 2, m = 8;
  const int64_t rounds = 8000;
  const Flips f(n, m, rounds);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(f.woke[static_cast<size_t>(i)].size(), static_cast<size_t>(m)) << "sender " << i;
    EXPECT_EQ(f.flips[static_cast<size_t>(i)], rounds) << "a sender flips on every wake";
  }
  for (int j = n; j < n + m; ++j) {
    EXPECT_GE(f.woke[static_cast<size_t>(j)].size(), 2u) << "receiver " << j - n;
    // Asked by both senders in 2 rounds of every 8, a different one each time.
    EXPECT_EQ(f.flips[static_cast<size_t>(j)], rounds * n / m) << "receiver " << j - n;
  }
  // The tiers' flips are M/N = 4 apart: wide on an LLC of up to 4 CPUs, not on one of 8.
  EXPECT_TRUE(all_wide(f, n, m, 2));
  EXPECT_TRUE(all_wide(f, n, m, 4));
  EXPECT_FALSE(all_wide(f, n, m, 8));
  const Flips wider(2, 16, rounds);
  EXPECT_TRUE(all_wide(wider, 2, 16, 8)) << "w2s16 is wide on an 8-CPU LLC";
}

// In step, no two senders ask one receiver in the same round (N <= M): no request queues behind
// another, each receiver sleeps between requests.
TEST(FanoutSchedule, SendersInStepAskDistinctReceivers) {
  for (auto [n, m] : {std::pair{2, 8}, std::pair{2, 16}, std::pair{8, 8}, std::pair{3, 5}})
    for (int64_t r = 0; r < 3 * m; ++r) {
      std::set<int> asked;
      for (int i = 0; i < n; ++i) asked.insert(fanout_receiver(i, r, m));
      EXPECT_EQ(asked.size(), static_cast<size_t>(n)) << "w" << n << "s" << m << " round " << r;
    }
}

// One sender: its receivers always answer it and never flip, so no wake is wide (the 1:N
// dispatcher the fan-out exists to go beyond).
TEST(FanoutSchedule, OneSenderLeavesTheReceiversUnflipped) {
  const Flips f(1, 8, 8000);
  EXPECT_EQ(f.flips[0], 8000);
  for (size_t j = 1; j < 9; ++j) EXPECT_LE(f.flips[j], 1) << "receiver " << j - 1;
  EXPECT_FALSE(all_wide(f, 1, 8, 2));
}

// Each receiver's quota is what the schedule sends it, so the requests add up to the round trips.
TEST(FanoutSchedule, ReceiverQuotasCountTheScheduledRequests) {
  for (auto [n, m, rounds] : {std::tuple{2, 8, int64_t{1000}}, std::tuple{3, 2, int64_t{7}},
                              std::tuple{5, 16, int64_t{3}}, std::tuple{64, 64, int64_t{130}}}) {
    std::vector<int64_t> count(static_cast<size_t>(m), 0);
    for (int i = 0; i < n; ++i)
      for (int64_t r = 0; r < rounds; ++r) ++count[static_cast<size_t>(fanout_receiver(i, r, m))];
    int64_t total = 0;
    for (int j = 0; j < m; ++j) {
      EXPECT_EQ(fanout_requests(j, n, m, rounds), count[static_cast<size_t>(j)])
          << "w" << n << "s" << m << " rounds " << rounds << " receiver " << j;
      total += fanout_requests(j, n, m, rounds);
    }
    EXPECT_EQ(total, n * rounds);
  }
}

// --- knobs ---------------------------------------------------------------------------------------

CaseSpec fanout_case(Mode mode, int w, int s) {
  const auto cpus = allowed_cpus();
  CaseSpec spec;
  spec.mechanism = "fanout";
  spec.mode = mode;
  spec.kind = PlacementKind::kKernel;
  spec.placement = "kernel";
  spec.cpuset = cpus;
  spec.cpu_pairs = {{cpus.front(), cpus.size() > 1 ? cpus[1] : cpus.front()}};
  spec.params.w = w;
  spec.params.s = s;
  spec.name = "fanout/" + std::string(mode_id(mode)) + "/kernel" + name_suffix(spec.params);
  spec.round_trips = 300;
  spec.warmup = 30;
  spec.timeout_s = 20;
  return spec;
}

std::string refusal(const CaseSpec& spec) {
  return find_mechanism("fanout")->skip_reason(spec, test::this_machine()).value_or("runs");
}

TEST(FanoutKnobs, RefusesWhatCannotFanOutInOneLine) {
  CaseSpec spec = fanout_case(Mode::kThreads, 2, 8);
  EXPECT_EQ(refusal(spec), "runs");
  spec.params.s = 1;
  const std::string one = refusal(spec);
  EXPECT_EQ(one.rfind("unsupported: fanout needs s >= 2 receivers", 0), 0u) << one;
  spec.params.s.reset();  // not set: one receiver
  EXPECT_EQ(refusal(spec), one);
  spec.params.s = 8;
  spec.params.payload = 4080;
  EXPECT_EQ(refusal(spec), "runs");
  spec.params.payload = 4081;
  const std::string big = refusal(spec);
  EXPECT_EQ(big.rfind("unsupported: fanout's senders share each receiver's pipe", 0), 0u) << big;
  EXPECT_NE(big.find("payload at most 4080"), std::string::npos) << big;
  spec.params.payload = 1;
  spec.params.pairs = 2;
  EXPECT_EQ(refusal(spec).rfind("unsupported: pairs > 1", 0), 0u) << refusal(spec);
  for (const std::string& why : {one, big}) EXPECT_EQ(why.find('\n'), std::string::npos);
  // Out of range for any mechanism: refused where the config is read.
  Params p;
  EXPECT_THROW(set_param(p, "s", 65), std::invalid_argument);
  EXPECT_THROW(set_param(p, "w", 0), std::invalid_argument);
}

// --- whole cases ---------------------------------------------------------------------------------

// Named by mode: runners/sanitize.sh tsan runs the threads mode only.
class Fanout : public ::testing::TestWithParam<Mode> {};

TEST_P(Fanout, KernelPlacedRunsEveryRoundTripOfEverySender) {
  const CaseSpec spec = fanout_case(GetParam(), 2, 8);
  EXPECT_EQ(spec.name, "fanout/" + std::string(mode_id(GetParam())) + "/kernel/w2s8");
  const auto cpus = allowed_cpus();
  const size_t fds_before = test::open_fds();
  const RunOutcome out = run_case(spec, *find_mechanism("fanout"), test::this_machine(), {});
  ASSERT_TRUE(out.ok) << out.error;
  ASSERT_EQ(out.pairs.size(), 2u) << "one stream per sender";
  for (const PairSamples& s : out.pairs) {
    ASSERT_EQ(s.rtt_ns.size(), 300u);
    for (size_t k = 0; k < s.rtt_ns.size(); ++k) {
      ASSERT_GT(s.rtt_ns[k], 0) << k;
      for (int cpu : {s.waker_cpu[k], s.wakee_cpu[k]})
        ASSERT_NE(std::find(cpus.begin(), cpus.end(), cpu), cpus.end()) << "round trip " << k;
    }
  }
  CaseRecord rec;
  rec.spec = spec;
  rec.wake_flags = registry().mechanism("fanout").wake_flags;
  rec.repetitions.push_back(out.pairs);
  const auto j = case_json(rec, test::this_machine());
  EXPECT_EQ(j["wake_flags"], "sync");
  EXPECT_EQ(j["params"]["w"], 2);
  EXPECT_EQ(j["params"]["s"], 8);
  EXPECT_EQ(test::open_fds(), fds_before) << "a case leaked file descriptors";
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a task process is left";
}

// In a forked helper: waits until `want` task processes of the parent's case are up (children of
// the parent not in `not_these`), hurts the last to appear with `sig` and exits with how many it
// saw. A process, not a thread: the case process forks from this one and, in threads mode, starts
// threads, which ThreadSanitizer refuses after a fork from a multi-threaded process.
pid_t start_hurting(const std::set<pid_t>& not_these, size_t want, int sig) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  std::set<pid_t> tasks;
  for (int i = 0; i < 2000 && tasks.size() < want; ++i) {
    usleep(10'000);
    tasks.clear();
    for (pid_t c : test::children_of(parent))
      if (!not_these.count(c) && c != getpid()) tasks.insert(c);
  }
  usleep(300'000);
  if (!tasks.empty()) kill(*tasks.rbegin(), sig);
  _exit(static_cast<int>(tasks.size()));
}

// Runs a long w2s8 case while a helper process hurts one of its task processes with `sig`;
// returns the outcome. Nothing of the case may be left behind.
RunOutcome hurt_a_task(Mode mode, int sig, double timeout_s) {
  CaseSpec spec = fanout_case(mode, 2, 8);
  spec.round_trips = 300'000;  // far longer than the test waits
  RunOptions opts;
  opts.timeout_s = timeout_s;  // the driver's watchdog (run_case takes it from here)
  const size_t fds_before = test::open_fds();
  const size_t want = mode == Mode::kProcesses ? 10 : 1;
  const pid_t helper = start_hurting(test::children_of(getpid()), want, sig);
  const RunOutcome out = run_case(spec, *find_mechanism("fanout"), test::this_machine(), opts);
  int status = 0;
  EXPECT_EQ(waitpid(helper, &status, 0), helper);
  EXPECT_TRUE(WIFEXITED(status) && static_cast<size_t>(WEXITSTATUS(status)) == want)
      << "the case's task processes never all appeared";
  EXPECT_EQ(test::open_fds(), fds_before) << "a case leaked file descriptors";
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a task process is left";
  return out;
}

TEST_P(Fanout, AKilledTaskFailsTheCaseAndLeavesNothing) {
  const RunOutcome out = hurt_a_task(GetParam(), SIGKILL, 60);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error.rfind("partner exited: killed by signal 9", 0), 0u) << out.error;
}

TEST_P(Fanout, AStoppedTaskTimesOutNamingEveryTask) {
  const RunOutcome out = hurt_a_task(GetParam(), SIGSTOP, 2);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error.rfind("timeout after 2 s:", 0), 0u) << out.error;
  for (const char* task : {" sender1 at round trip ", " receiver7 at round trip "})
    EXPECT_NE(out.error.find(task), std::string::npos) << out.error;
}

INSTANTIATE_TEST_SUITE_P(Modes, Fanout, ::testing::Values(Mode::kThreads, Mode::kProcesses),
                         [](const auto& info) { return std::string(mode_id(info.param)); });

}  // namespace
}  // namespace wb
