// What the CPUs are and how busy: /proc/cpuinfo and /proc/stat.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace wb {

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
// /proc/cpuinfo under `root`; nullopt + reason when unreadable or unparsable.
std::optional<CpuInfo> read_cpuinfo(std::string* why_not, const std::string& root = "/");

// /proc/stat "cpuN" lines: cpu -> {busy jiffies, total jiffies} (busy = total - idle - iowait).
std::map<int, std::pair<uint64_t, uint64_t>> parse_proc_stat_cpu_times(std::string_view text,
                                                                       const std::string& path);

}  // namespace wb
