// The knobs the driver applies around and inside the timed window (docs/configs.md#mechanisms,
// "Knobs"): per-handoff work (a calibrated busy loop and cache-line touching), background busy
// tasks placed relative to the measured pairs, and per-side scheduling class and nice.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/schema/case.h"
#include "common/system/topology.h"

namespace wb {

// --- work -------------------------------------------------------------------------------------

// Iterations of busy_loop() per nanosecond here, measured once per process: the fastest of several
// timed runs, so a loop sized for N ns never finishes in less than N ns on an unloaded CPU. Like
// producer_consumer's `-l` loop in seed 001, the work is a fixed amount of computation, not a
// deadline on the clock: when the task is preempted, its work takes longer.
double busy_loop_iterations_per_ns();
// Iterations for `work_ns` (0 for 0).
uint64_t busy_loop_iterations(int64_t work_ns);
// A chain of dependent multiply-adds (no memory traffic); returns the result so that it is kept.
uint64_t busy_loop(uint64_t iterations) noexcept;
// The cache line size of this machine in bytes, read once per process: the largest
// coherency_line_size of the caches of the CPU it runs on (sysfs cpu<N>/cache/index*/), else
// sysconf(_SC_LEVEL1_DCACHE_LINESIZE), else the compile-time kCacheLine (common/measure/shm.h).
// Always a power of two in [16, 1024] (an implausible value read falls through to the next source).
size_t cache_line_size();
// Where cache_line_size() came from, e.g. "sysfs cpu0/cache/index2/coherency_line_size",
// "sysconf(_SC_LEVEL1_DCACHE_LINESIZE)" or "compile-time default (no sysfs cache info, ...)".
const std::string& cache_line_source();
// The bytes of `lines` cache lines: the size of the buffer touch_lines(buf, lines) writes.
size_t work_lines_bytes(int lines);
// Writes one byte in each of `lines` cache lines of `buf` (work_lines_bytes(lines) bytes, one write
// every cache_line_size() bytes): the lines move to the writer's cache, so a partner on another
// CPU finds them there.
void touch_lines(char* buf, int lines) noexcept;

// --- background -------------------------------------------------------------------------------

// The CPUs `spec`'s background busy tasks run on, relative to its concurrent pairs
// (concurrent_pairs()), on `topo`:
//   waker-sibling  the SMT siblings of every waker CPU, outside the pairs' CPUs
//   llc-others     every CPU sharing an LLC with a waker CPU, outside the pairs' CPUs
//   all-others     every CPU of `topo` outside the pairs' CPUs
//   prev-cpu       every wakee CPU (what makes the sync-core patches act: the wakee's previous
//                  CPU is busy)
//   a CPU list     exactly those CPUs
// Sets `*why` and returns {} when a value other than "none" selects no CPU here (or names a CPU
// that is not online and allowed), e.g. "unavailable: background waker-sibling selects no CPU
// (no SMT: 1 PU per core)".
std::vector<int> background_cpus(const CaseSpec& spec, const Topology& topo, std::string* why);

// Busy tasks: one forked process per CPU, pinned there, spinning until stopped: throughout, or
// `busy_ns` of every `period_ns` (the duty cycle, all tasks in phase), sleeping the rest. The
// constructor returns once every task runs on its CPU (so they are busy before any timing
// starts); stop() and the destructor kill and reap them. Tasks die with wakebench
// (PR_SET_PDEATHSIG).
class BusyTasks {
 public:
  // Throws std::runtime_error naming the CPU if a task cannot be pinned or does not start.
  explicit BusyTasks(const std::vector<int>& cpus, int64_t busy_ns = 0, int64_t period_ns = 0);
  ~BusyTasks();
  BusyTasks(const BusyTasks&) = delete;
  BusyTasks& operator=(const BusyTasks&) = delete;
  void stop() noexcept;
  // pids of the tasks still running (empty after stop()).
  std::vector<pid_t> running() const;

 private:
  std::vector<pid_t> pids_;
};

// --- sched ------------------------------------------------------------------------------------

// Applies a side's policy and nice to the calling thread (sched_setscheduler and setpriority act
// on one thread on Linux). Returns "" or why the kernel refused, e.g. "refused: sched fifo:10:
// sched_setscheduler: EPERM (needs CAP_SYS_NICE or RLIMIT_RTPRIO >= 10)".
std::string apply_sched(const std::optional<SchedPolicy>& policy, const std::optional<int>& nice);

// --- all knobs --------------------------------------------------------------------------------

// Why `spec`'s knobs cannot run here, or nullopt: a background value that selects no CPU on
// `topo` (the machine it runs on), a sched or nice setting the kernel refuses (probed on a
// throwaway thread), w or s given to a mechanism without W x S tasks (`client_service` false),
// pairs > 1 given to one with.
std::optional<std::string> knob_skip_reason(const CaseSpec& spec, const Topology& topo,
                                            bool client_service);

}  // namespace wb
