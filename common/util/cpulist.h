// CPU lists in the kernel's format ("0-3,8,10-11"), as in /sys/devices/system/cpu/online and
// taskset -c. CPU ids are OS indexes everywhere in wakebench.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wb {

// CPU ids are below this: the largest NR_CPUS any kernel configuration allows (CONFIG_NR_CPUS is
// at most 8192 on x86_64 with MAXSMP and on ppc64, 4096 on arm64).
inline constexpr int kMaxCpus = 8192;

// Parses "0-3,8,10-11" (also "5", "0-7:2" stride form is not accepted). Returns sorted unique ids.
// Throws std::invalid_argument whose message names the offending token and its position,
// e.g. "invalid CPU list \"0-x\": bad number at position 2", or an id of kMaxCpus or more
// ("CPU id 8192 above the maximum 8191 (the kernel's NR_CPUS limit is 8192) at position 0").
std::vector<int> parse_cpu_list(std::string_view text);

// Formats sorted or unsorted ids as the kernel does, collapsing runs: {0,1,2,3,8} -> "0-3,8".
std::string format_cpu_list(std::vector<int> cpus);

}  // namespace wb
