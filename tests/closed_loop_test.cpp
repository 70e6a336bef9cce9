// The mix predicted under load (analysis/predict/closed_loop.h) on a constructed trace of
// smt2-3core (cores {0,1}, {2,3}, {4,5}, one LLC): a sync pipe pair from CPUs 0,2 whose wakee's CPU
// 2 is busy at one wake, after which mainline's kernel keeps the pair on 0,4 and a background on 2
// comes and goes. sync-core's model, given each record as it was (first order), moves the wakee
// once; in the closed loop the pair stays where it put it. A trace with prev never busy gives
// every policy mainline's mix; mainline's loop on its own kernel's trace gives the kernel's.
#include "analysis/predict/closed_loop.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support.h"

namespace wb {
namespace {

const SchedTopology& smt2_3core() {
  static const SchedTopology sched(
      Topology::from_xml(std::string(WB_SOURCE_DIR) + "/configs/lab/topologies/smt2-3core.xml"));
  return sched;
}

// A sync wake of `pid` by the task on `waker`, its prev `prev`, the kernel's choice `cpu`; every
// CPU idle but the waker's and those in `busy`.
DecisionRecord wake(int pid, int waker, int prev, int cpu, const std::vector<int>& busy = {}) {
  std::string idle;
  for (int c = 0; c < 6; ++c)
    if (c != waker && std::find(busy.begin(), busy.end(), c) == busy.end())
      idle += (idle.empty() ? "" : ",") + std::to_string(c);
  const bool prev_busy = std::find(busy.begin(), busy.end(), prev) != busy.end();
  return parse_decision_fields(
      "pid=" + std::to_string(pid) + " waker_cpu=" + std::to_string(waker) +
      " prev=" + std::to_string(prev) +
      " wake_flags=0x18 waker_flips=0 wakee_flips=0 last_wakee=1 on_rq=0 on_cpu=0 kthread=0"
      " in_task=1 allowed=0-5 nr_idle_scan=6 prev_nr_idle_scan=6 recent_used_cpu=" +
      std::to_string(prev) +
      " has_idle_cores=1 prev_has_idle_cores=1 waker_nr_running=1 waker_delayed=0"
      " prev_nr_running=" +
      std::string(prev_busy ? "1" : "0") + " idle=" + idle +
      " wake_wide=0 want_affine=1 affine=WA_IDLE affine_cpu=" + std::to_string(waker) +
      " rule=sis_prev cpu=" + std::to_string(cpu));
}

constexpr int kA = 100, kB = 101;  // the pair: A starts on CPU 0 and wakes B first (on 2)

// Mainline's kernel: 10 round trips on 0,2; B woken while CPU 2 is busy goes to the idle core's
// CPU 4; then 40 round trips on 0,4 with the background on CPU 2 every other one.
std::vector<DecisionRecord> loaded_trace() {
  std::vector<DecisionRecord> t;
  for (int i = 0; i < 10; ++i) {
    t.push_back(wake(kB, 0, 2, 2));
    t.push_back(wake(kA, 2, 0, 0));
  }
  t.push_back(wake(kB, 0, 2, 4, {2}));
  t.push_back(wake(kA, 4, 0, 0, {2}));
  for (int i = 0; i < 40; ++i) {
    const std::vector<int> bg = i % 2 ? std::vector<int>{2} : std::vector<int>{};
    t.push_back(wake(kB, 0, 4, 4, bg));
    t.push_back(wake(kA, 4, 0, 0, bg));
  }
  return t;
}

std::vector<const WakeupPolicy*> policies() {
  return {&policy_by_id("mainline"), &policy_by_id("sync-core")};
}

double share(const PolicyMix& m, const std::string& cls) {
  const auto s = m.shares();
  const auto it = s.find(cls);
  return it == s.end() ? 0 : it->second;
}

TEST(ClosedLoop, PartnersAreTheTasksLastPlacedOnTheWakersCpu) {
  const auto p = infer_partners(loaded_trace());
  EXPECT_EQ(p.at(kA), kB);
  EXPECT_EQ(p.at(kB), kA);
  // Two pairs interleaved, on CPUs 0,2 and 1,3: each told apart by the CPUs.
  std::vector<DecisionRecord> two;
  for (int i = 0; i < 5; ++i) {
    two.push_back(wake(11, 0, 2, 2));
    two.push_back(wake(13, 1, 3, 3));
    two.push_back(wake(10, 2, 0, 0));
    two.push_back(wake(12, 3, 1, 1));
  }
  const auto q = infer_partners(two);
  EXPECT_EQ(q.at(10), 11);
  EXPECT_EQ(q.at(11), 10);
  EXPECT_EQ(q.at(12), 13);
  EXPECT_EQ(q.at(13), 12);
}

// The kernel is mainline: mainline's loop follows it record by record (the kernel's own mix).
TEST(ClosedLoop, MainlinesLoopOnMainlinesTraceIsTheKernelsMix) {
  const std::vector<DecisionRecord> t = loaded_trace();
  const Splits s = split_decisions(t, smt2_3core(), policies());
  ASSERT_EQ(s.closed.size(), 2u);
  EXPECT_EQ(s.closed[0].classes, s.mixes[0].classes);  // mixes[0]: the kernel's own
  EXPECT_EQ(s.closed_no_waker, 0);
}

// sync-core puts B beside the waker once prev is busy; the loop keeps it there (the pair never
// sees CPU 2 again), where the first-order mix moves it at that one record only.
TEST(ClosedLoop, AMovedPairStaysWhereThePolicyPutIt) {
  const Splits s = split_decisions(loaded_trace(), smt2_3core(), policies());
  const PolicyMix& first_order = s.mixes[2];
  const PolicyMix& closed = s.closed[1];
  EXPECT_LT(share(first_order, "smt-sibling"), 0.05);
  EXPECT_GT(share(closed, "smt-sibling"), 0.75);
  EXPECT_EQ(share(s.closed[0], "smt-sibling"), 0);
}

// Must fail the other way: with prev never busy, sync-core's loop is mainline's.
TEST(ClosedLoop, WithoutLoadEveryPolicyIsMainline) {
  std::vector<DecisionRecord> t;
  for (int i = 0; i < 20; ++i) {
    t.push_back(wake(kB, 0, 2, 2));
    t.push_back(wake(kA, 2, 0, 0));
  }
  const Splits s = split_decisions(t, smt2_3core(), policies());
  EXPECT_EQ(s.closed[0].classes, s.closed[1].classes);
  EXPECT_EQ(share(s.closed[1], "llc"), 1);
}

// A waker on CPU 0 wakes X (the kernel puts it on 2) and then Y while X still runs (CPU 2 busy in
// Y's record). sync-2017's loop stacked X on the waker's CPU, so X is running there at Y's wake:
// the waker's CPU runs two tasks and sync-2017 does not stack Y. With X asleep by then (CPU 2 idle
// in the record) it stacks Y too.
TEST(ClosedLoop, AnotherTaskRunsWhereTheLoopPutIt) {
  const auto stacked = [](const std::vector<int>& busy_at_y) {
    const std::vector<DecisionRecord> t = {wake(20, 2, 0, 0), wake(21, 0, 2, 2),
                                           wake(22, 0, 4, 4, busy_at_y)};
    const Splits s = split_decisions(t, smt2_3core(), {&policy_by_id("sync-2017")});
    EXPECT_EQ(s.closed_no_waker, 1);  // the waker's own first wake: nobody placed before it
    const auto it = s.closed[0].classes.find("same-cpu");
    return it == s.closed[0].classes.end() ? 0 : it->second;
  };
  EXPECT_EQ(stacked({2}), 1);  // X only
  EXPECT_EQ(stacked({}), 2);   // X and Y
}

}  // namespace
}  // namespace wb
