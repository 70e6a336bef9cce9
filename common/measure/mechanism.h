// The mechanism author's contract: what a mechanism file (benchmarks/<id>.cpp) implements and
// what its tasks are given. Named for the one thing an author writes, a Mechanism; the driver that
// runs it (common/measure/driver.h: run_case, its options and its supervisor) is apart, so a
// mechanism's file includes this header and nothing of the driver's internals.
//
// Mechanisms plug in at one of two levels:
//  - LinkMechanism: a Link per pair (send / wait); the driver runs one waker and one wakee per
//    concurrent pair (common/measure/ping_pong.cpp): waker [work, send, wait], wakee [wait, work,
//    send] each round trip.
//  - Mechanism::make_workload: the mechanism declares its own tasks and their bodies (binder-like's
//    W clients and S services), still pinned, counted, timed and supervised by the driver.
// Either way the samples go into the case's streams (StreamArea, common/measure/stream.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/measure/stream.h"
#include "common/schema/case.h"
#include "common/schema/outcome.h"
#include "common/system/topology.h"

namespace wb {

class PerfCounters;  // common/measure/perf.h

// One task of a case, as its Workload declares it.
struct TaskSpec {
  std::string name;  // "waker", "wakee1", "client0", "service2": errors and the watchdog
  Role side;         // its CPU in its pair, its sched/nice knob and its counter side
  size_t pair;       // index into concurrent_pairs(spec)
  size_t stream;     // the stream its counters are added to
  size_t group;      // processes mode: tasks of one group share a process, as threads
};

class CaseRun;  // the driver's run of one case (driver.cpp), which fills a TaskContext

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

}  // namespace wb
