// Parsers for the kernel's scheduler, cpuidle and cpufreq text files, and live readers built on
// them. Every parser takes the file text plus a path (used only in error messages) so tests feed
// them real captures (tests/fixtures/captures); the live readers read the files, then do the same.
// Parse errors throw std::runtime_error("<path>:<line>: <what is wrong>").
// Formats: tests/fixtures/README.md#formats (from Documentation/scheduler/
// sched-stats.rst, kernel/sched/debug.c, drivers/cpuidle/sysfs.c, drivers/cpufreq/cpufreq.c).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wb {

// Whole file as text. nullopt and `*why_not` = "open <path>: No such file or directory" (strerror)
// when it cannot be read.
std::optional<std::string> read_text_file(const std::string& path, std::string* why_not);

// ---------------------------------------------------------------------------------------------
// /proc/schedstat (versions 15, 16, 17; show_schedstat() in kernel/sched/stats.c)

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

// Reads /proc/schedstat and kernel.sched_schedstats. nullopt with the reason (missing file means a
// kernel built without CONFIG_SCHEDSTATS) in `*why_not`.
std::optional<SchedstatSnapshot> read_schedstat(std::string* why_not);

// Per-CPU difference after - before for `cpus`: ttwu_count, ttwu_local, run_delay_ns, run_time_ns,
// pcount, sched_count, sched_goidle, and per domain ttwu_wake_remote / ttwu_move_affine /
// ttwu_move_balance. Counters that the kernel does not maintain (schedstats off) are
// {"unavailable": reason}; so is a CPU absent from either snapshot.
nlohmann::json schedstat_delta(const SchedstatSnapshot& before, const SchedstatSnapshot& after,
                               const std::vector<int>& cpus);

// ---------------------------------------------------------------------------------------------
// Sched domains: debugfs /sys/kernel/debug/sched/domains/cpuN/domainM/<file> (5.13+) or
// /proc/sys/kernel/sched_domain/cpuN/domainM/<file> (up to 5.12).

// Numeric `flags` files (before 5.10) use one of two bit tables (include/linux/sched/topology.h):
// up to 5.7 with SD_LOAD_BALANCE at bit 0, and 5.8-5.9 after "sched/topology: Kill
// SD_LOAD_BALANCE" shifted every flag down one bit.
enum class SdFlagsTable { kUpTo5_7, k5_8To5_9 };
// The table a kernel release ("5.4.0-42-generic") uses for numeric flags; nullopt for 5.10+ (text
// flags) or an unparsable release.
std::optional<SdFlagsTable> sd_flags_table_for_release(std::string_view release);
// Flag names of the set bits, lowest bit first. Throws std::invalid_argument on a bit the table
// does not define.
std::vector<std::string> decode_sd_flags(uint64_t value, SdFlagsTable table);
// "SD_A SD_B \n" (sd_flags_show(): names in bit order, each followed by a space) -> names.
// Throws std::invalid_argument on a token that is not an SD_ name.
std::vector<std::string> parse_sd_flags_text(std::string_view text);

struct SchedDomainEntry {
  int cpu = -1;  // -1 when the listing did not name the CPU
  int domain = -1;
  std::string name;                     // "SMT", "MC", ... (empty if not listed)
  std::vector<std::string> flags;       // names; decoded when the file was numeric
  std::optional<uint64_t> flags_value;  // the number, for numeric flags files
  std::optional<std::vector<std::string>> groups_flags;
  std::optional<int> level;
  std::map<std::string, std::string> other;  // every other file: busy_factor, imbalance_pct, ...
};

// Parses "<path>:<value>" lines as printed by `grep . .../cpuN/domainM/<file>` (path absolute,
// relative, or starting at domainM; "path: value" also accepted) or by `sysctl -a`
// ("kernel.sched_domain.cpuN.domainM.<file> = value"). Numeric flags are decoded with
// `numeric_table` when given (else only flags_value is set). Entries sorted by (cpu, domain).
std::vector<SchedDomainEntry> parse_sched_domains_listing(
    std::string_view text, const std::string& path, std::optional<SdFlagsTable> numeric_table);

// Live: the domains of `cpus` from debugfs or the old sysctl tree. nullopt + reason when neither is
// readable (debugfs not mounted; tree hidden while /sys/kernel/debug/sched/verbose is N).
std::optional<std::vector<SchedDomainEntry>> read_sched_domains(const std::vector<int>& cpus,
                                                                std::string* why_not);
nlohmann::json to_json(const SchedDomainEntry& e);

// ---------------------------------------------------------------------------------------------
// /sys/kernel/debug/sched/features (sched_feat_show(): names in definition order, disabled ones
// prefixed NO_).
struct SchedFeature {
  std::string name;
  bool enabled = false;
};
std::vector<SchedFeature> parse_sched_features(std::string_view text, const std::string& path);
std::optional<std::vector<SchedFeature>> read_sched_features(std::string* why_not);

// Why debugfs content is not readable here (not mounted / not root), or "" if it is mounted.
std::string debugfs_unavailable_reason();
// read_text_file for a debugfs file: when mounted but the read fails with EPERM, the reason names
// kernel lockdown, which restricts debugfs even for root (security/lockdown, kernel_lockdown(7)).
std::optional<std::string> read_debugfs_file(const std::string& path, std::string* why_not);

// ---------------------------------------------------------------------------------------------
// cpuidle: /sys/devices/system/cpu/cpuN/cpuidle/stateK/<file> (drivers/cpuidle/sysfs.c)

struct CpuidleState {
  int index = -1;
  std::string name, desc;
  std::optional<uint64_t> latency_us;    // exit latency
  std::optional<uint64_t> residency_us;  // target residency
  std::optional<bool> disabled;          // `disable` file
  std::optional<std::string> default_status;
  std::optional<uint64_t> usage, time_us;
  std::map<std::string, std::string> unreadable;  // file -> reason (live reads only)
};
// Sets one field from a state file's content; unknown files are ignored. Throws
// std::invalid_argument (naming `where`) on a non-numeric value for a numeric file.
void set_cpuidle_field(CpuidleState& s, std::string_view file, std::string_view value,
                       const std::string& where);

struct CpuidleListing {
  std::optional<std::string> driver;              // cpuN/cpuidle/driver/name, if listed
  std::map<int, std::vector<CpuidleState>> cpus;  // states sorted by index
};
// `grep . .../cpuN/cpuidle/stateK/*` (or `path: value`) lines. s2idle/ files are skipped.
CpuidleListing parse_cpuidle_listing(std::string_view text, const std::string& path);
// Live states of one CPU; nullopt + reason if it has no cpuidle directory.
std::optional<std::vector<CpuidleState>> read_cpuidle_states(int cpu, std::string* why_not);
nlohmann::json to_json(const CpuidleState& s);

// ---------------------------------------------------------------------------------------------
// cpufreq: /sys/devices/system/cpu/cpuN/cpufreq/<file> (a link to ../cpufreq/policyM)

struct CpufreqPolicy {
  std::optional<std::string> driver, governor, energy_performance_preference;
  std::optional<uint64_t> scaling_min_khz, scaling_max_khz, cpuinfo_min_khz, cpuinfo_max_khz,
      scaling_cur_khz;
  std::optional<bool> boost;
  std::vector<int> related_cpus, affected_cpus;
  std::vector<std::string> available_governors;
  std::map<std::string, std::string> unreadable;  // file -> reason (live reads only)
};
void set_cpufreq_field(CpufreqPolicy& p, std::string_view file, std::string_view value,
                       const std::string& where);
// `grep . .../policyM/*` lines (one policy).
CpufreqPolicy parse_cpufreq_listing(std::string_view text, const std::string& path);
std::optional<CpufreqPolicy> read_cpufreq_policy(int cpu, std::string* why_not);
nlohmann::json to_json(const CpufreqPolicy& p);

// ---------------------------------------------------------------------------------------------
// /proc/cpuinfo in its three layouts: x86 ("vendor_id", "model name", "microcode", "flags"),
// arm64 ("CPU implementer", "CPU part", "CPU variant", "CPU revision"; arch/arm64/kernel/cpuinfo.c)
// and powerpc ("cpu", "revision", "platform", "model", "machine";
// arch/powerpc/kernel/setup-common.c). Values of the first processor.
struct CpuInfo {
  std::string vendor;                    // "GenuineIntel", "ARM", "IBM", ...
  std::string model;                     // human-readable model
  std::optional<std::string> microcode;  // x86 only
  bool hypervisor_flag = false;          // x86 "hypervisor" CPUID bit, in "flags"
  std::string platform, machine;         // powerpc ("pSeries", "PowerNV", ...)
  int processors = 0;                    // "processor" lines
};
// Throws std::runtime_error if no known model line is present.
CpuInfo parse_cpuinfo(std::string_view text, const std::string& path);

// /proc/stat "cpuN" lines: cpu -> {busy jiffies, total jiffies} (busy = total - idle - iowait).
std::map<int, std::pair<uint64_t, uint64_t>> parse_proc_stat_cpu_times(std::string_view text,
                                                                       const std::string& path);

}  // namespace wb
