// Sched domains: debugfs /sys/kernel/debug/sched/domains/cpuN/domainM/<file> (5.13+) or
// /proc/sys/kernel/sched_domain/cpuN/domainM/<file> (up to 5.12); the `flags` file is names from
// 5.10 (sd_flags_show()) and a number before.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

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
  int cpu = -1;
  int domain = -1;
  std::string name;                     // "SMT", "MC", ... (empty without a name file)
  std::vector<std::string> flags;       // names; decoded when the file was numeric
  std::optional<uint64_t> flags_value;  // the number, for numeric flags files
  std::optional<std::vector<std::string>> groups_flags;
  std::optional<int> level;
  std::map<std::string, std::string> other;  // every other file: busy_factor, imbalance_pct, ...
};

// The domains of `cpus` from debugfs or the old sysctl tree under `root`, numeric flags decoded by
// the table of the release in /proc/sys/kernel/osrelease. nullopt + reason when neither tree is
// readable (debugfs not mounted; tree hidden while /sys/kernel/debug/sched/verbose is N).
std::optional<std::vector<SchedDomainEntry>> read_sched_domains(const std::vector<int>& cpus,
                                                                std::string* why_not,
                                                                const std::string& root = "/");
nlohmann::json to_json(const SchedDomainEntry& e);

}  // namespace wb
