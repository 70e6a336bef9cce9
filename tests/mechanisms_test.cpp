// Every registered mechanism through the one driver, in both modes, on one CPU and on two CPUs,
// with small iteration counts; the perf-counter invariants (docs/result-set.md#counters) on this
// machine. Structure and invariants only, never absolute times.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>

#include "benchmarks/fd_link.h"
#include "benchmarks/registry.h"
#include "benchmarks/shared_state.h"
#include "common/measure/driver.h"
#include "common/measure/knobs.h"
#include "common/measure/perf.h"
#include "common/schema/registry.h"
#include "common/schema/result_set.h"
#include "common/schema/stats.h"
#include "common/util/sys.h"
#include "tests/support.h"

namespace wb {
namespace {

constexpr int64_t kRoundTrips = 200;

CpuPair cross_pair() {
  const auto cpus = allowed_cpus();
  return {cpus.front(), cpus.size() > 1 ? cpus[1] : cpus.front()};
}

CaseSpec make_case(const std::string& mech, Mode mode, CpuPair pair) {
  CaseSpec s;
  s.mechanism = mech;
  s.mode = mode;
  s.placement = pair.first == pair.second ? "same-cpu" : "llc";
  s.name = mech + "/" + std::string(mode_id(mode)) + "/" + s.placement;
  s.cpu_pairs = {pair};
  s.round_trips = kRoundTrips;
  s.warmup = 20;
  s.timeout_s = 20;
  return s;
}

int64_t median_rtt(const RunOutcome& out) {
  std::vector<int64_t> all;
  for (const auto& p : out.pairs) all.insert(all.end(), p.rtt_ns.begin(), p.rtt_ns.end());
  return static_cast<int64_t>(compute_stats(std::span<const int64_t>(all)).median);
}

// --- per-side state on lines of its own
// -----------------------------------------------------------

// The kHotAlign-sized blocks [p, p + n) touches.
std::set<uintptr_t> blocks(const void* p, size_t n) {
  std::set<uintptr_t> out;
  const auto a = reinterpret_cast<uintptr_t>(p);
  for (uintptr_t b = a / kHotAlign; b <= (a + std::max<size_t>(n, 1) - 1) / kHotAlign; ++b)
    out.insert(b);
  return out;
}

bool disjoint(const std::set<uintptr_t>& a, const std::set<uintptr_t>& b) {
  for (uintptr_t x : a)
    if (b.count(x)) return false;
  return true;
}

// In threads mode both tasks use one Link object: what each side writes in the hot loop must not
// share a line with what the other side writes (one line transfer more per hand-off otherwise).
TEST(SideState, PrivateBuffersSitOnDistinctLines) {
  for (int payload : {1, 8, 64, 200}) {
    SideBuffers b(static_cast<size_t>(payload), 'x');
    EXPECT_TRUE(disjoint(blocks(b[Role::kWaker], b.size()), blocks(b[Role::kWakee], b.size())))
        << payload;
    SharedRegion region(SharedPayload::bytes(payload));
    SharedPayload sp(region.data(), payload);
    const size_t n = static_cast<size_t>(payload);
    EXPECT_TRUE(disjoint(blocks(sp.local(Role::kWaker), n), blocks(sp.local(Role::kWakee), n)))
        << "SharedPayload, payload " << payload;
    CaseSpec spec;
    spec.params.payload = payload;
    std::vector<Fd> fds;
    fds.emplace_back(open("/dev/null", O_RDWR | O_CLOEXEC));
    FdLink link(spec, std::move(fds), {0, 0}, {0, 0}, FdLink::Framing::kPipe);
    EXPECT_TRUE(
        disjoint(blocks(link.buffer(Role::kWaker), n), blocks(link.buffer(Role::kWakee), n)))
        << "FdLink, payload " << payload;
  }
  static_assert(alignof(OwnLine<int>) == kHotAlign && sizeof(OwnLine<uint64_t>) == kHotAlign);
}

// The largest difference between two CPUs' stamp counters the protocol test tolerates.
constexpr int64_t kCrossCpuSkewNs = 100;

using ProtocolParam = std::tuple<std::string, Mode, bool /*same cpu*/>;
class Protocol : public ::testing::TestWithParam<ProtocolParam> {};

TEST_P(Protocol, EveryRoundTripIsSampledOnItsCpus) {
  const auto& [id, mode, same] = GetParam();
  const auto cpus = allowed_cpus();
  if (!same && cpus.size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs";
  const CpuPair pair = same ? CpuPair{cpus[0], cpus[0]} : cross_pair();
  const Mechanism& mech = *find_mechanism(id);
  CaseSpec spec = make_case(id, mode, pair);
  if (mech.client_service()) {
    spec.params.w = 2;
    spec.params.s = 2;
  }
  if (auto why = mech.skip_reason(spec, test::this_machine())) {
    if (id == "spin" && same) {
      EXPECT_NE(why->find("one CPU"), std::string::npos) << *why;
      return;
    }
    if (id == "futex-swap") GTEST_SKIP() << *why;
    FAIL() << "unexpected skip: " << *why;
  }
  ASSERT_FALSE(id == "spin" && same) << "spin must refuse one CPU";
  const size_t fds_before = test::open_fds();
  const RunOutcome out = run_case(spec, mech, test::this_machine(), {});
  ASSERT_TRUE(out.ok) << out.error;
  const size_t streams = mech.client_service() ? 2 : 1;
  ASSERT_EQ(out.pairs.size(), streams);
  // wakeup_ns subtracts the waker's stamp from the wakee's, read on two CPUs: their counters may
  // differ by a few tens of ns (a VM's vCPUs), as much as a spin hand-off takes. Across CPUs the
  // order below holds up to that skew; on one CPU, exactly.
  const int64_t skew = pair.first == pair.second ? 0 : kCrossCpuSkewNs;
  for (const PairSamples& s : out.pairs) {
    ASSERT_EQ(s.rtt_ns.size(), static_cast<size_t>(kRoundTrips));
    ASSERT_EQ(s.wakeup_ns.size(), static_cast<size_t>(kRoundTrips));
    EXPECT_LE(s.begin_ns, s.end_ns);
    for (size_t k = 0; k < s.rtt_ns.size(); ++k) {
      ASSERT_GT(s.rtt_ns[k], 0) << "round trip " << k;
      // Every round trip's wakee wakeup happened, after the hand-off and before the answer.
      ASSERT_GT(s.wakeup_ns[k], -skew) << "round trip " << k;
      ASSERT_LT(s.wakeup_ns[k], s.rtt_ns[k] + skew) << "round trip " << k;
      ASSERT_EQ(s.waker_cpu[k], pair.first);
      ASSERT_EQ(s.wakee_cpu[k], pair.second);
    }
  }
  EXPECT_EQ(test::open_fds(), fds_before) << "a case leaked file descriptors";
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a task process is left";
}

std::vector<ProtocolParam> protocol_params() {
  std::vector<ProtocolParam> out;
  for (const Mechanism* m : all_mechanisms())
    for (Mode mode : {Mode::kThreads, Mode::kProcesses})
      for (bool same : {true, false}) out.emplace_back(std::string(m->id()), mode, same);
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, Protocol, ::testing::ValuesIn(protocol_params()),
                         [](const auto& info) {
                           std::string n = std::get<0>(info.param) + "_" +
                                           std::string(mode_id(std::get<1>(info.param))) +
                                           (std::get<2>(info.param) ? "_samecpu" : "_cross");
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(Mechanisms, EachDeclaresItsWakeFlagsFromThePolicyModelTable) {
  const std::map<std::string, WakeFlags> want = {{"pipe", WakeFlags::kSync},
                                                 {"unix-stream", WakeFlags::kSync},
                                                 {"unix-dgram", WakeFlags::kSync},
                                                 {"tcp-loopback", WakeFlags::kSync},
                                                 {"eventfd", WakeFlags::kNone},
                                                 {"futex", WakeFlags::kNone},
                                                 {"futex-swap", WakeFlags::kCurrentCpu},
                                                 {"binder-like", WakeFlags::kSync},
                                                 {"fanout", WakeFlags::kSync},
                                                 {"spin", WakeFlags::kNone}};
  ASSERT_EQ(all_mechanisms().size(), want.size());
  for (const Mechanism* m : all_mechanisms()) {
    ASSERT_TRUE(want.count(std::string(m->id()))) << m->id();
    EXPECT_EQ(registry().mechanism(m->id()).wake_flags, want.at(std::string(m->id()))) << m->id();
    EXPECT_FALSE(m->round_trip().empty()) << m->id();
  }
}

TEST(Mechanisms, FutexSwapRunsOrSaysWhyNot) {
  const Mechanism& m = *find_mechanism("futex-swap");
  CaseSpec spec = make_case("futex-swap", Mode::kThreads, {allowed_cpus()[0], allowed_cpus()[0]});
  if (auto why = m.skip_reason(spec, test::this_machine())) {
    EXPECT_EQ(why->rfind("unsupported: ", 0), 0u) << *why;
    GTEST_SKIP() << *why;
  }
  const RunOutcome out = run_case(spec, m, test::this_machine(), {});
  EXPECT_TRUE(out.ok) << out.error;
}

// W clients x S services in both modes (processes: a process per client and one service process
// with S threads, binder's shape). Named by mode: ThreadSanitizer runs only threads mode, since
// it cannot see the ordering a reply pipe gives between two service threads and a client process.
class BinderLike : public ::testing::TestWithParam<Mode> {};

TEST_P(BinderLike, NamesItsShapeAndReportsThroughput) {
  CaseSpec spec = make_case("binder-like", GetParam(), cross_pair());
  spec.params.w = 2;
  spec.params.s = 4;
  EXPECT_EQ(name_suffix(spec.params), "/w2s4");
  const Mechanism& m = *find_mechanism("binder-like");
  RunOutcome out = run_case(spec, m, test::this_machine(), {});
  ASSERT_TRUE(out.ok) << out.error;
  CaseRecord rec;
  rec.spec = spec;
  rec.wake_flags = registry().mechanism(m.id()).wake_flags;
  rec.repetitions.push_back(out.pairs);
  const auto j = case_json(rec, test::this_machine());
  EXPECT_GT(j["tps"].get<double>(), 0);
  EXPECT_EQ(j["params"]["w"], 2);
  EXPECT_EQ(j["params"]["s"], 4);
  EXPECT_EQ(j["wake_flags"], "sync");
  // pairs > 1 makes no sense next to W x S; w and s make no sense for a pair mechanism.
  spec.params.pairs = 2;
  EXPECT_TRUE(m.skip_reason(spec, test::this_machine()).has_value());
  CaseSpec pipe = make_case("pipe", Mode::kThreads, cross_pair());
  pipe.params.w = 2;
  EXPECT_TRUE(find_mechanism("pipe")->skip_reason(pipe, test::this_machine()).has_value());
}

INSTANTIATE_TEST_SUITE_P(Modes, BinderLike, ::testing::Values(Mode::kThreads, Mode::kProcesses),
                         [](const auto& info) { return std::string(mode_id(info.param)); });

// --- counters (docs/result-set.md#counters) -----------------------------------------------------

RunOptions counting() {
  RunOptions o;
  o.events = default_events();
  return o;
}

double per_rt(const RunOutcome& out, Role side, const std::string& event) {
  const auto& t = out.counters.totals[static_cast<int>(side)];
  auto it = t.find(event);
  if (it == t.end()) return NAN;
  return it->second / static_cast<double>(out.counters.round_trips);
}

class Counters : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override { WB_SKIP_WITHOUT_PERF_EVENTS(); }
};

TEST_P(Counters, BlockingSameCpuSwitchesAboutTwicePerRoundTrip) {
  const int cpu = allowed_cpus()[0];
  for (const char* id : {"pipe", "futex", "eventfd"}) {
    const RunOutcome out = run_case(make_case(id, GetParam(), {cpu, cpu}), *find_mechanism(id),
                                    test::this_machine(), counting());
    ASSERT_TRUE(out.ok) << id << ": " << out.error;
    ASSERT_EQ(out.counters.round_trips, kRoundTrips);
    const double cs = per_rt(out, Role::kWaker, "context-switches") +
                      per_rt(out, Role::kWakee, "context-switches");
    EXPECT_GE(cs, 1.5) << id;
    EXPECT_LE(cs, 3.0) << id;
    for (Role r : {Role::kWaker, Role::kWakee})
      EXPECT_EQ(per_rt(out, r, "cpu-migrations"), 0) << id << " " << role_id(r);
  }
}

TEST_P(Counters, SpinDoesNotSwitchAndPinnedTasksDoNotMigrate) {
  if (allowed_cpus().size() < 2) GTEST_SKIP() << "needs 2 allowed CPUs";
  const RunOutcome out = run_case(make_case("spin", GetParam(), cross_pair()),
                                  *find_mechanism("spin"), test::this_machine(), counting());
  ASSERT_TRUE(out.ok) << out.error;
  const double cs =
      per_rt(out, Role::kWaker, "context-switches") + per_rt(out, Role::kWakee, "context-switches");
  EXPECT_LT(cs, 0.1);
  for (Role r : {Role::kWaker, Role::kWakee}) EXPECT_EQ(per_rt(out, r, "cpu-migrations"), 0);
}

TEST_P(Counters, HardwareEventsCountOrSayWhyNot) {
  const RunOutcome out = run_case(make_case("pipe", GetParam(), cross_pair()),
                                  *find_mechanism("pipe"), test::this_machine(), counting());
  ASSERT_TRUE(out.ok) << out.error;
  for (const char* e : {"cycles", "instructions"}) {
    const bool counted = out.counters.totals[0].count(e) && out.counters.totals[1].count(e);
    const bool explained =
        out.counters.unavailable.count(e) && !out.counters.unavailable.at(e).empty();
    EXPECT_TRUE(counted != explained)
        << e << ": counted " << counted << ", explained " << explained;
  }
  // Both sides count their own task (task-clock is in ns: some time per round trip, never more
  // than the round trips took).
  for (Role r : {Role::kWaker, Role::kWakee}) {
    const double task_clock = per_rt(out, r, "task-clock");
    EXPECT_GT(task_clock, 0) << role_id(r);
    EXPECT_LE(task_clock, static_cast<double>(median_rtt(out)) * 10) << role_id(r);
  }
}

TEST_P(Counters, RequiredEventsThatCannotBeCountedFailTheCase) {
  RunOptions o;
  o.events = {"context-switches", "wb-no-such-event"};
  const CaseSpec spec = make_case("pipe", GetParam(), cross_pair());
  const RunOutcome noted = run_case(spec, *find_mechanism("pipe"), test::this_machine(), o);
  ASSERT_TRUE(noted.ok) << noted.error;
  EXPECT_TRUE(noted.counters.unavailable.count("wb-no-such-event"));
  EXPECT_TRUE(noted.counters.totals[0].count("context-switches"));
  o.require_events = true;
  const RunOutcome failed = run_case(spec, *find_mechanism("pipe"), test::this_machine(), o);
  EXPECT_FALSE(failed.ok);
  EXPECT_NE(failed.error.find("required perf events unavailable"), std::string::npos)
      << failed.error;
  EXPECT_NE(failed.error.find("wb-no-such-event"), std::string::npos) << failed.error;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a task process is left";
}

TEST_P(Counters, CaseJsonHasCountersPerSideAndRoundTrip) {
  const CaseSpec spec = make_case("pipe", GetParam(), {allowed_cpus()[0], allowed_cpus()[0]});
  const RunOutcome out = run_case(spec, *find_mechanism("pipe"), test::this_machine(), counting());
  ASSERT_TRUE(out.ok) << out.error;
  CaseRecord rec;
  rec.spec = spec;
  rec.repetitions = {out.pairs, out.pairs};  // two repetitions: per round trip stays the same
  const auto j = case_json(rec, test::this_machine());
  ASSERT_TRUE(j["counters"].is_object());
  for (Role r : {Role::kWaker, Role::kWakee}) {
    const std::string side(role_id(r));
    ASSERT_TRUE(j["counters"][side].contains("context-switches")) << side;
    EXPECT_NEAR(j["counters"][side]["context-switches"].get<double>(),
                per_rt(out, r, "context-switches"), 1e-9);
  }
  EXPECT_TRUE(j["counters"]["unavailable"].is_object());
}

INSTANTIATE_TEST_SUITE_P(Modes, Counters, ::testing::Values(Mode::kThreads, Mode::kProcesses),
                         [](const auto& info) { return std::string(mode_id(info.param)); });

}  // namespace
}  // namespace wb
