// The one ping-pong driver every mechanism shares (docs/cli.md#run): it places the tasks (threads
// of one case process, or one process per task group), pins them and verifies the pinning with
// sched_getcpu, applies the per-side scheduling knobs, opens each task's perf counters, parks them
// at a barrier, runs warm-up round trips, then times every round trip into preallocated shared
// memory. A supervisor (the calling process) starts the background busy tasks before the case
// tasks and stops them after, and otherwise only waits: it polls pidfds, so it wakes no measured
// CPU while a case runs, and it kills and reaps every task when a case fails, times out or is
// interrupted.
//
// Mechanisms plug in at one of two levels:
//  - LinkMechanism: a Link per pair (send / wait); the driver runs one waker and one wakee per
//    concurrent pair: waker [work, send, wait], wakee [wait, work, send] each round trip.
//  - Mechanism::make_workload: the mechanism declares its own tasks and their bodies (binder-like's
//    W clients and S services), still pinned, counted, timed and supervised by this driver.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/measure/perf.h"
#include "common/schema/case.h"
#include "common/schema/outcome.h"
#include "common/system/topology.h"

namespace wb {

// One stream of samples in the case's shared memory: one pair's round trips, or one binder-like
// client's transactions. Index k is the k-th measured round trip (warm-up excluded). Times are
// stamp() ticks (common/system/clock.h), turned into ns when the case is collected.
struct StreamArea {
  int64_t* send_ts;    // the waker's hand-off (after its work)
  int64_t* wake_ts;    // the wakee back from its wait
  int64_t* rtt;        // the waker's round trip: start (before its work) -> answer back
  int32_t* waker_cpu;  // sched_getcpu() of the waker when it started the round trip
  int32_t* wakee_cpu;  // sched_getcpu() of the wakee once it answered (the CPU it woke on, pinned)
  int64_t* span;       // [0]: start of the first measured round trip, [1]: end of the last
  char* lines;         // the work_lines cache lines both sides write (the work knob)

  // The waker's record of measured round trip k: started at t0 on `cpu`, handed off at `sent`,
  // answered at t1. The first one also opens the stream's span.
  void record_round_trip(int64_t k, int64_t t0, int64_t sent, int64_t t1, int32_t cpu) noexcept {
    if (k == 0) span[0] = t0;
    send_ts[k] = sent;
    rtt[k] = t1 - t0;
    waker_cpu[k] = cpu;
  }
};

// One task of a case, as its Workload declares it.
struct TaskSpec {
  std::string name;  // "waker", "wakee1", "client0", "service2": errors and the watchdog
  Role side;         // its CPU in its pair, its sched/nice knob and its counter side
  size_t pair;       // index into concurrent_pairs(spec)
  size_t stream;     // the stream its counters are added to
  size_t group;      // processes mode: tasks of one group share a process, as threads
};

class CaseRun;

// A thread's context switches so far (getrusage RUSAGE_THREAD: per thread in either mode).
struct Switches {
  int64_t voluntary = 0;    // ru_nvcsw: it blocked (a wait that slept)
  int64_t involuntary = 0;  // ru_nivcsw: it was switched out while runnable (preempted)
};

// What the driver gives a task body. Hot-loop members never throw and never allocate.
class TaskContext {
 public:
  const CaseSpec& spec() const { return spec_; }
  StreamArea& stream(size_t s) const { return streams_[s]; }
  // The work knob, inside the timed window, before the task answers: the calibrated busy loop
  // (work_ns), then a write to each of the stream's work_lines cache lines.
  void work(size_t stream) const noexcept;
  bool has_work() const noexcept {
    return busy_loop_iterations_ > 0 || spec_.params.work_lines > 0;
  }
  // Counting covers exactly the measured round trips: enable right before the first, disable
  // right after the last. Besides the perf counters (when the run counts), the task's context
  // switches are read at both edges: its waits that blocked, and the times it was preempted
  // (docs/result-set.md#blocked).
  void start_counting() noexcept;
  void stop_counting() noexcept;
  // Round trips (or transactions) done so far, warm-up included: the watchdog reports it.
  void progress(int64_t done) noexcept;
  // Records why the task fails (one line; the driver prefixes the task's name) and makes every
  // task leave. The body returns non-zero right after.
  void fail(const std::string& what) noexcept;

 private:
  friend class CaseRun;
  TaskContext(const CaseSpec& spec, StreamArea* streams, uint64_t iterations)
      : spec_(spec), streams_(streams), busy_loop_iterations_(iterations) {}
  const CaseSpec& spec_;
  StreamArea* streams_;
  uint64_t busy_loop_iterations_;  // the calibrated busy loop of work_ns
  CaseRun* run_ = nullptr;
  size_t task_ = 0;
  PerfCounters* counters_ = nullptr;
  std::optional<Switches> switches_at_start_;  // at start_counting(); nullopt: not read
};

// The tasks of one case and their bodies. Built by the supervisor before any task exists; in
// processes mode each task process gets a copy through fork().
class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::vector<TaskSpec> tasks() const = 0;
  virtual size_t streams() const = 0;
  // Round trips each task does, warm-up included (what the watchdog reports progress against).
  virtual int64_t task_round_trips(size_t task) const = 0;
  // The [waker, wakee] CPUs the samples of `stream` must show when pinned.
  virtual CpuPair stream_cpus(size_t stream) const = 0;
  // Processes mode, once in each task process, before its threads start: e.g. close the fds its
  // tasks do not use, so a dead partner shows up as EOF. May throw (the case fails).
  virtual void enter_process(size_t /*group*/) {}
  // Processes mode, in the supervisor once the tasks are forked: drop what only they should hold.
  virtual void release() {}
  // In task `task`'s thread, after pinning and before the barrier. May throw (the case fails).
  virtual void attach(size_t /*task*/) {}
  // The task's warm-up and measured round trips. 0 on success; on failure ctx.fail() first.
  virtual int run(size_t task, TaskContext& ctx) noexcept = 0;
};

// One pair's channel for LinkMechanism. Hot-loop calls return 0 or an errno and never throw.
class Link {
 public:
  virtual ~Link() = default;
  // Runs in the task, after pinning and before the barrier: e.g. close the ends it does not use.
  // May throw (the case then fails with the message).
  virtual void attach(Role /*role*/) {}
  // `from` hands off to its partner (a write, a wake, ...).
  virtual int send(Role from) noexcept = 0;
  // `me` blocks until its partner's hand-off arrives. EPIPE when the partner is gone.
  virtual int wait(Role me) noexcept = 0;
};

class Mechanism {
 public:
  virtual ~Mechanism() = default;
  // Its entry in registry/registry.json (common/schema/registry.h) holds its wake flags and traits.
  virtual std::string_view id() const = 0;
  // One line for --help and docs/configs.md#mechanisms: what a round trip is.
  virtual std::string_view round_trip() const = 0;
  // Whether the knobs w and s apply (W clients x S services, or N senders x M receivers, instead
  // of pairs).
  virtual bool client_service() const { return false; }
  // Whether a waiting task sleeps in the kernel (false: it busy-polls, as spin does; its entry in
  // registry/registry.json then names why in `no_kernel_wakeup`). Under kernel placement the
  // waker's first hand-off waits until a sleeping wakee is blocked, so that every repetition's
  // first wakeup goes waker -> wakee from the start CPUs; a mechanism that does not block has no
  // blocked waits to count (PairSamples::blocked and ::preempted stay nullopt).
  virtual bool blocks() const { return true; }
  // Why this case cannot run here ("unsupported: ...", "unavailable: ...", "refused: ..."), or
  // nullopt: first the knobs (knob_skip_reason), then mechanism_skip_reason().
  std::optional<std::string> skip_reason(const CaseSpec& spec, const Topology& topo) const;
  // The case's tasks over its concurrent pairs. Throws on setup failure.
  virtual std::unique_ptr<Workload> make_workload(const CaseSpec& spec,
                                                  const std::vector<CpuPair>& pairs) const = 0;

 protected:
  virtual std::optional<std::string> mechanism_skip_reason(const CaseSpec& /*spec*/) const {
    return std::nullopt;
  }
};

// A mechanism made of one Link per pair, run by the driver's ping-pong tasks.
class LinkMechanism : public Mechanism {
 public:
  // Bytes of zeroed shared memory (visible to both tasks in either mode) one pair's link needs.
  virtual size_t shared_bytes(const CaseSpec& /*spec*/) const { return 0; }
  // Builds one pair's link over `shared` (shared_bytes() bytes, kHotAlign-aligned, zeroed).
  // Throws on setup failure.
  virtual std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const = 0;
  std::unique_ptr<Workload> make_workload(const CaseSpec& spec,
                                          const std::vector<CpuPair>& pairs) const override;
};

struct RunOptions {
  double timeout_s = 60;            // whole case (one repetition), setup included
  std::vector<std::string> events;  // perf events counted on each side (libpfm4 names)
  bool require_events = false;      // an unavailable event fails the case instead of being noted
};

// Runs one repetition of `spec` on the machine `topo` describes (the background knob's CPUs are
// chosen on it). Never throws: every failure, the case's own or a shortage of the supervisor's
// (fork, pidfd, memory: "fork: Resource temporarily unavailable"), fails this repetition in
// RunOutcome with its cause, and the run goes on.
RunOutcome run_case(const CaseSpec& spec, const Mechanism& mech, const Topology& topo,
                    const RunOptions& opts);

// The supervisor's deadlines for one repetition, in now_ns() time: the case's timeout; once a task
// failed, a grace for the others to finish; once the supervisor killed the tasks, a grace for them
// to be reaped. Each grace starts once and is never extended, so the supervisor returns within
// timeout + kKillGraceNs whatever its tasks do (a task in uninterruptible sleep, 'D', does not die
// of SIGKILL until it wakes): then it leaves such a task behind and fails the case. The kill grace
// is 5 s: a killed task still has to be scheduled to exit, which on a loaded machine (RT tasks
// throttled to 95 % of each second) can take more than 1 s.
class Deadlines {
 public:
  static constexpr int64_t kFailGraceNs = 500'000'000, kKillGraceNs = 5'000'000'000;
  Deadlines(int64_t start_ns, int64_t timeout_ns) : timeout_(start_ns + timeout_ns) {}
  void task_failed(int64_t now) {
    if (fail_grace_ < 0) fail_grace_ = now + kFailGraceNs;
  }
  void killed(int64_t now) {
    if (kill_grace_ < 0) kill_grace_ = now + kKillGraceNs;
  }
  bool timed_out(int64_t now) const { return now >= timeout_; }
  // The tasks are to be killed now: the timeout or the failure grace is over (and they were not
  // killed yet).
  bool kill_due(int64_t now) const {
    return kill_grace_ < 0 && (timed_out(now) || (fail_grace_ >= 0 && now >= fail_grace_));
  }
  // Killed tasks still not reaped once the kill grace is over: stop waiting for them.
  bool give_up(int64_t now) const { return kill_grace_ >= 0 && now >= kill_grace_; }
  // When the supervisor must look again at the latest.
  int64_t next() const {
    if (kill_grace_ >= 0) return kill_grace_;
    return fail_grace_ >= 0 ? std::min(timeout_, fail_grace_) : timeout_;
  }

 private:
  int64_t timeout_;
  int64_t fail_grace_ = -1, kill_grace_ = -1;
};

// Set from a SIGINT/SIGTERM handler: the running case stops, its tasks are killed and reaped.
extern std::atomic<bool> g_interrupted;

}  // namespace wb
