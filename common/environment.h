// Provenance of a result set: everything about the machine, kernel and build that changes what a
// wakeup costs (docs/result-set.md#environment), and the warnings that tell a human what makes
// this run's figures noisy and how to fix it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
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
// active, siblings, sibling_busy_pct}, cpufreq {"<cpu>": {driver, governor, min_khz, max_khz,
// ...}}, cpuidle {driver, governor, states {"<cpu>": [{index, name, desc, latency_us, residency_us,
// disabled}]}}, idle_latency {requested_us, effective_us (null = no limit)}, isolcpus {list,
// cmdline}, nohz_full {list, cmdline}, sched_features {NAME: bool}, sched_domains [...], sched_ext
// {state, ops}, numa_balancing, perf_event_paranoid, hypervisor {detected, vendor, evidence},
// schedstats {available, enabled}, wakebench {version, git_sha, compiler},
// config_hash ("sha256:<hex>"), hostname, cpus (the measured CPUs). The reading of the system is
// common/environment_probe.h's.
nlohmann::json capture_environment(const EnvironmentOptions& opts);

// One line per thing in `env` that makes wakeup timings noisy, each with its fix. Reads only the
// JSON, so fixtures and fabricated environments test it.
std::vector<std::string> environment_warnings(const nlohmann::json& env);

// Hypervisor detection from the evidence a Linux guest exposes. Every input is optional (empty =
// not readable or not applicable on this architecture).
struct HypervisorEvidence {
  std::string sys_hypervisor_type;       // /sys/hypervisor/type ("xen", ...)
  bool cpuinfo_hypervisor_flag = false;  // x86 CPUID.1:ECX[31], the "hypervisor" flag
  std::string cpuid_vendor;              // x86 CPUID leaf 0x40000000 signature ("KVMKVMKVM", ...)
  std::string dmi_sys_vendor;            // /sys/class/dmi/id/sys_vendor
  std::string dmi_product_name;          // /sys/class/dmi/id/product_name
  std::string ppc_platform;              // powerpc cpuinfo "platform" ("pSeries" = LPAR/guest)
  std::string ppc_machine;               // powerpc cpuinfo "machine"
  std::string device_tree_hypervisor;    // /proc/device-tree/hypervisor/compatible (arm64, ppc)
};
// {"detected": bool, "vendor": "KVM" | ... | null, "evidence": ["...", ...]}
nlohmann::json detect_hypervisor(const HypervisorEvidence& ev);

// {"version", "git_sha", "compiler"} of this wakebench build (environment.wakebench).
nlohmann::json wakebench_build();

// SHA-256 of `data` (FIPS 180-4) as 64 lowercase hex digits, computed by OpenSSL's libcrypto.
std::string sha256_hex(std::string_view data);

}  // namespace wb
