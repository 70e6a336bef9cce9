// What capture_environment (common/system/environment_capture.h) reads of the running system:
// files under /proc, /sys and debugfs, CPUID, the stamp clock's calibration, the hostname. Each
// probe returns one item as it appears in the environment (docs/result-set.md#environment), or
// {"unavailable": "<reason>"} when it cannot be read. Assembling the environment is
// environment_capture.cpp's, judging it common/schema/environment.cpp's.
#pragma once

#include <sys/utsname.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/schema/environment.h"
#include "common/system/cpuinfo.h"

namespace wb {

// The kernel command line, trimmed; "" when unreadable.
std::string probe_cmdline();
// kernel {release, version, cmdline}.
nlohmann::json probe_kernel(const struct utsname& u);
// cpu {arch, vendor, model, microcode[, platform, machine]} from /proc/cpuinfo as read (`info`, or
// `why` it could not be), and the sysfs microcode revision where cpuinfo has none.
nlohmann::json probe_cpu(const std::string& arch, const std::optional<CpuInfo>& info,
                         const std::string& why);
// smt {control, active, siblings {"<cpu>": [...]}}; `root` as in common/system/kernel_files.h.
nlohmann::json probe_smt(const std::vector<int>& cpus, const std::string& root = "/");
// /proc/stat read twice, `interval_ms` apart, or nullopt and `*why`.
std::optional<std::pair<std::string, std::string>> probe_proc_stat_twice(int interval_ms,
                                                                         std::string* why);
// cpufreq {"<cpu>": policy}.
nlohmann::json probe_cpufreq(const std::vector<int>& cpus, const std::string& root = "/");
// cpuidle {driver, governor, states {"<cpu>": [...]}}.
nlohmann::json probe_cpuidle(const std::vector<int>& cpus, const std::string& root = "/");
// The CPU latency limit in effect (/dev/cpu_dma_latency): us, or null for no limit.
nlohmann::json probe_idle_latency_effective();
// The lists the kernel isolated (/sys/devices/system/cpu/isolated, .../nohz_full).
nlohmann::json probe_isolated_list();
nlohmann::json probe_nohz_full_list();
// sched_features {NAME: bool}, sched_domains [...], the preemption model, sched_ext {state, ops}.
nlohmann::json probe_sched_features();
nlohmann::json probe_sched_domains(const std::vector<int>& cpus);
nlohmann::json probe_preempt();
nlohmann::json probe_sched_ext();
// The sysctls kernel.numa_balancing and kernel.perf_event_paranoid as integers.
nlohmann::json probe_numa_balancing();
nlohmann::json probe_perf_event_paranoid();
// schedstats {version, enabled}.
nlohmann::json probe_schedstats();
// The current clocksource, and the stamp clock's timer {source, ns_per_tick, read_ns, ...}.
nlohmann::json probe_clocksource();
nlohmann::json probe_timer();
// What a guest exposes of its hypervisor, given /proc/cpuinfo as read (detect_hypervisor judges).
HypervisorEvidence probe_hypervisor_evidence(const CpuInfo& info);
nlohmann::json probe_hostname();

}  // namespace wb
