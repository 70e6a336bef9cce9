// The capture of a run's environment (docs/result-set.md#environment) from the running system:
// every item that common/system/environment_probe.h reads, assembled under its key. Judging it
// (the warnings) is common/schema/environment.h's.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace wb {

struct EnvironmentOptions {
  std::vector<int> cpus;    // measured CPUs (OS indexes); per-CPU items are captured for these
  std::string config_text;  // the run's config, hashed into config_hash
  // --idle-latency-us when given: recorded, and deep-idle warnings then skip the states that the
  // IdleLatencyGuard holds the CPUs out of.
  std::optional<int> idle_latency_us;
};

// Every item as JSON; an item that cannot be read is {"unavailable": "<reason>"}, never dropped.
// Keys: kernel {release, version, cmdline}, cpu {arch, vendor, model, microcode}, smt {control,
// active, siblings}, cpu_load {sample_ms, busy_pct}, cpufreq {"<cpu>": {driver, governor, min_khz,
// max_khz, ...}} and cpuidle {driver, governor, states {"<cpu>": [{index, name, desc, latency_us,
// residency_us, disabled}]}} of the measured CPUs and their SMT siblings, idle_latency
// {requested_us, effective_us (null = no limit)}, isolcpus {list, cmdline}, nohz_full {list,
// cmdline}, sched_features {NAME: bool}, sched_domains [...], sched_ext {state, ops},
// fair_placement {applies, why?} (common/system/fair_placement.h),
// numa_balancing, perf_event_paranoid, hypervisor {detected, vendor, evidence}, schedstats
// {available, enabled}, wakebench {version, git_sha, compiler}, config_hash ("sha256:<hex>"),
// hostname, cpus (the measured CPUs). The reading of the system is
// common/system/environment_probe.h's.
nlohmann::json capture_environment(const EnvironmentOptions& opts);

// The items a CPU's setting makes: smt of `cpus`, and cpufreq and cpuidle of `cpus` and their SMT
// siblings (a sibling's governor, frequency limit and idle states act on the core the measured CPU
// shares), read under `root` (common/system/kernel_files.h).
nlohmann::json capture_cpu_settings(const std::vector<int>& cpus, const std::string& root = "/");

}  // namespace wb
