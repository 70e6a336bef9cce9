// /proc/schedstat (versions 15, 16, 17; show_schedstat() in kernel/sched/stats.c,
// Documentation/scheduler/sched-stats.rst): the parser, the live reader and the per-CPU delta of
// two snapshots that `run` records for each case.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

// A domain's span printed with "%*pb": hex, most significant group first, 32-bit groups separated
// by commas ("00000000,00000003" = CPUs 0 and 1). Returns the CPUs, sorted. Throws
// std::invalid_argument on anything but hex digits and commas.
std::vector<int> parse_cpumask(std::string_view mask);

struct SchedstatDomain {
  int index = -1;         // domain<N>: 0 is the smallest
  std::string name;       // topology level ("SMT", "MC", ...), printed from version 17 only
  std::vector<int> span;  // CPUs of the domain
  // try_to_wake_up() counters of this domain (the last three fields in every version).
  uint64_t ttwu_wake_remote = 0;   // woke a task that last ran on another CPU of this domain
  uint64_t ttwu_move_affine = 0;   // wake_affine() moved the task to the waking CPU
  uint64_t ttwu_move_balance = 0;  // passive balancing started
};

struct SchedstatCpu {
  int cpu = -1;
  uint64_t yld_count = 0;     // sched_yield() calls
  uint64_t sched_count = 0;   // schedule() calls
  uint64_t sched_goidle = 0;  // schedule() left the CPU idle
  uint64_t ttwu_count = 0;    // try_to_wake_up() calls on this CPU
  uint64_t ttwu_local = 0;    // ... that woke a task on this CPU
  uint64_t run_time_ns = 0;   // time tasks ran here (sched_info, counts even with schedstats off)
  uint64_t run_delay_ns = 0;  // time tasks waited on this runqueue
  uint64_t pcount = 0;        // timeslices run here
  std::vector<SchedstatDomain> domains;
};

struct SchedstatSnapshot {
  int version = 0;  // 0: the text had no "version" line (a fragment)
  std::optional<uint64_t> timestamp_jiffies;
  // kernel.sched_schedstats. When false, every field but run_time/run_delay/pcount stays 0.
  // nullopt: unknown (not read, or the sysctl is absent).
  std::optional<bool> schedstats_enabled;
  std::vector<SchedstatCpu> cpus;           // file order
  const SchedstatCpu* find(int cpu) const;  // nullptr if absent
};

// Unknown line types (Android's "eas" lines) are skipped. A "version" other than 15-17, a cpu line
// without 9 numbers or a domain line whose field count fits no version is an error.
SchedstatSnapshot parse_schedstat(std::string_view text, const std::string& path);

// Reads /proc/schedstat and kernel.sched_schedstats under `root`. nullopt with the reason (a
// missing file means a kernel built without CONFIG_SCHEDSTATS) in `*why_not`.
std::optional<SchedstatSnapshot> read_schedstat(std::string* why_not,
                                                const std::string& root = "/");

// Per-CPU difference after - before for `cpus`: ttwu_count, ttwu_local, run_delay_ns, run_time_ns,
// pcount, sched_count, sched_goidle, and per domain ttwu_wake_remote / ttwu_move_affine /
// ttwu_move_balance. Counters that the kernel does not maintain (schedstats off) are
// {"unavailable": reason}; so is a CPU absent from either snapshot.
nlohmann::json schedstat_delta(const SchedstatSnapshot& before, const SchedstatSnapshot& after,
                               const std::vector<int>& cpus);

// The deltas of contiguous windows (a case's repetitions) added up: the delta over their span. The
// counters add; the version and each domain's index, span and name are kept; what was unavailable
// in any window is unavailable in the sum. A window {"unavailable": why} (a repetition that could
// not read /proc/schedstat) makes the whole sum unavailable, naming the repetition. `windows` must
// not be empty.
nlohmann::json sum_schedstat(const std::vector<nlohmann::json>& windows);

}  // namespace wb
