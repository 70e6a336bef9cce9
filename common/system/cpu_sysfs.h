// CPU sysfs: each CPU's cpuidle states and cpufreq policy (/sys/devices/system/cpu).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

// cpuidle: /sys/devices/system/cpu/cpuN/cpuidle/stateK/<file> (drivers/cpuidle/sysfs.c)

struct CpuidleState {
  int index = -1;
  std::string name, desc;
  std::optional<uint64_t> latency_us;    // exit latency
  std::optional<uint64_t> residency_us;  // target residency
  std::optional<bool> disabled;          // `disable` file
  std::optional<std::string> default_status;
  std::optional<uint64_t> usage, time_us;
  std::map<std::string, std::string> unreadable;  // file -> why it is missing or unparsable
};
// The states of one CPU under `root`, by index; nullopt + reason if it has no cpuidle directory.
std::optional<std::vector<CpuidleState>> read_cpuidle_states(int cpu, std::string* why_not,
                                                             const std::string& root = "/");
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
  std::map<std::string, std::string> unreadable;  // file -> why it is missing or unparsable
};
// The policy of one CPU under `root`; nullopt + reason if it has no cpufreq directory.
std::optional<CpufreqPolicy> read_cpufreq_policy(int cpu, std::string* why_not,
                                                 const std::string& root = "/");
nlohmann::json to_json(const CpufreqPolicy& p);

// ---------------------------------------------------------------------------------------------
// CPUs a run cannot use: /sys/devices/system/cpu/present and online

// The CPUs of `present` that are not in `usable` (a run's CPUs: online and allowed), each said
// why: "CPU 1 is offline", "CPUs 2-3 are offline; CPU 5 is not allowed". "" when there are none.
std::string describe_unused_cpus(const std::vector<int>& present, const std::vector<int>& online,
                                 const std::vector<int>& usable);
// describe_unused_cpus with present and online read under `root`; "" when they cannot be read.
std::string unused_cpus_note(const std::vector<int>& usable, const std::string& root = "/");

}  // namespace wb
