// LinkMechanism's workload: the driver's own ping-pong, one waker and one wakee per concurrent pair
// over the pair's Link (common/measure/mechanism.h), written on the mechanism contract alone as any
// mechanism's own tasks are (benchmarks/binder_like.cpp).
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/measure/mechanism.h"
#include "common/measure/shm.h"
#include "common/system/clock.h"
#include "common/util/sys.h"

namespace wb {

namespace {

std::string hot_loop_error(int64_t round_trip, int err) {
  return "round trip " + std::to_string(round_trip) + ": " + errno_name(err) + " (" +
         std::strerror(err) + ")";
}

// Kernel placement's defined start: the wakee of each pair publishes its thread id, and the
// waker's first hand-off waits (yielding, bounded) until /proc says the wakee sleeps in its wait.
// Otherwise the wakee may still be on its way to the wait when the waker writes, the waker blocks
// first, and the first real wakeup goes wakee -> waker: a start that differs run by run.
struct alignas(kHotAlign) StartGate {
  std::atomic<int32_t> wakee_tid;
};

void wait_until_sleeping(const StartGate& gate) noexcept {
  const int64_t deadline = now_ns() + 200'000'000;  // then start anyway: the start is a hint
  for (;;) {
    const int32_t tid = gate.wakee_tid.load(std::memory_order_acquire);
    const char state = tid > 0 ? task_state(tid) : '\0';
    if (state == 'S' || state == 'D' || now_ns() > deadline) return;
    sched_yield();  // the wakee may share this CPU
  }
}

// The driver's own workload: one waker and one wakee per concurrent pair over the pair's Link.
// Tasks 2p (waker) and 2p+1 (wakee) serve pair p and its stream p; each task is its own group.
class PingPong final : public Workload {
 public:
  PingPong(const LinkMechanism& mech, const CaseSpec& spec, const std::vector<CpuPair>& pairs)
      : pairs_(pairs),
        warmup_(spec.warmup),
        total_(spec.warmup + spec.round_trips),
        gated_(spec.by_kernel() && mech.blocks()) {
    Layout layout;
    std::vector<size_t> offsets;
    for (size_t p = 0; p < pairs.size(); ++p)
      offsets.push_back(layout.add(mech.shared_bytes(spec)));
    const size_t gates = layout.add(pairs.size() * sizeof(StartGate));
    region_ = std::make_unique<SharedRegion>(layout.size());
    gates_ = region_->at<StartGate>(gates);
    for (size_t off : offsets) links_.push_back(mech.make_link(spec, region_->at<void>(off)));
  }

  std::vector<TaskSpec> tasks() const override {
    std::vector<TaskSpec> out;
    for (size_t p = 0; p < pairs_.size(); ++p)
      for (Role r : {Role::kWaker, Role::kWakee}) {
        std::string name(role_id(r));
        if (pairs_.size() > 1) name += std::to_string(p);
        out.push_back({.name = name, .side = r, .pair = p, .stream = p, .group = out.size()});
      }
    return out;
  }
  size_t streams() const override { return pairs_.size(); }
  int64_t task_round_trips(size_t) const override { return total_; }
  CpuPair stream_cpus(size_t s) const override { return pairs_[s]; }
  // The tasks hold their own copies; ours would keep pipes from reporting EOF.
  void release() override { links_.clear(); }
  void attach(size_t t) override {
    links_[t / 2]->attach(role(t));
    if (role(t) == Role::kWakee)
      gates_[t / 2].wakee_tid.store(static_cast<int32_t>(gettid()), std::memory_order_release);
  }

  int run(size_t t, TaskContext& ctx) noexcept override {
    return role(t) == Role::kWaker ? run_waker(t / 2, ctx) : run_wakee(t / 2, ctx);
  }

 private:
  static Role role(size_t t) { return t % 2 == 0 ? Role::kWaker : Role::kWakee; }

  // Each round trip: [work], send, wait. The round trip starts before the work (so the RTT holds
  // both sides' work); the hand-off time for wakeup_ns is taken after it. A round trip starts
  // where the previous one ended, so one stamp per round trip, and the samples add up to the span.
  int run_waker(size_t p, TaskContext& ctx) noexcept {
    Link& link = *links_[p];
    StreamArea& a = ctx.stream(p);
    const bool work = ctx.has_work();
    if (gated_) wait_until_sleeping(gates_[p]);
    int64_t t1 = stamp();
    for (int64_t i = 0; i < total_; ++i) {
      const int64_t k = i - warmup_;
      if (k == 0) {
        ctx.start_counting();
        t1 = stamp();  // after the counters' syscall
      }
      const int cpu = sched_getcpu();
      const int64_t t0 = t1;
      int64_t sent = t0;
      if (work) {
        ctx.work(p);
        sent = stamp();
      }
      int rc = link.send(Role::kWaker);
      if (rc == 0) rc = link.wait(Role::kWaker);
      t1 = stamp();
      if (rc != 0) {
        ctx.fail(hot_loop_error(i, rc));
        return 1;
      }
      if (k >= 0) a.record_round_trip(k, t0, sent, t1, cpu);
      ctx.progress(i + 1);
    }
    ctx.stop_counting();
    a.span[1] = t1;
    return 0;
  }

  // Each round trip: wait, [work], send. Only the wake stamp sits between the wait and the answer:
  // the CPU and the stores come after it, out of the waker's round trip.
  int run_wakee(size_t p, TaskContext& ctx) noexcept {
    Link& link = *links_[p];
    StreamArea& a = ctx.stream(p);
    const bool work = ctx.has_work();
    for (int64_t i = 0; i < total_; ++i) {
      const int64_t k = i - warmup_;
      if (k == 0) ctx.start_counting();
      int rc = link.wait(Role::kWakee);
      const int64_t woke = stamp();
      if (rc == 0) {
        if (work) ctx.work(p);
        rc = link.send(Role::kWakee);
      }
      if (rc != 0) {
        ctx.fail(hot_loop_error(i, rc));
        return 1;
      }
      if (k >= 0) {
        a.wake_ts[k] = woke;
        a.wakee_cpu[k] = sched_getcpu();
      }
      ctx.progress(i + 1);
    }
    ctx.stop_counting();
    return 0;
  }

  std::vector<CpuPair> pairs_;
  int64_t warmup_, total_;
  bool gated_;                            // kernel placement of a sleeping mechanism: see StartGate
  std::unique_ptr<SharedRegion> region_;  // the links' shared memory; outlives them
  StartGate* gates_ = nullptr;            // one per pair, in region_
  std::vector<std::unique_ptr<Link>> links_;
};

}  // namespace

std::unique_ptr<Workload> LinkMechanism::make_workload(const CaseSpec& spec,
                                                       const std::vector<CpuPair>& pairs) const {
  return std::make_unique<PingPong>(*this, spec, pairs);
}

}  // namespace wb
