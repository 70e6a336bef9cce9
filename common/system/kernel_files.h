// Reading the kernel's text files (/proc, /sys, debugfs) under a root prefix, and the parsing
// helpers the readers of each subject share: common/system/schedstat.h, sched_domains.h,
// sched_features.h, cpu_sysfs.h (cpuidle, cpufreq), cpuinfo.h (/proc/cpuinfo, /proc/stat).
// Every live reader takes `root` (default "/"): tests point it at a fixture tree made from a real
// machine's files (tests/fixtures/sysroot-*), which the reader reads exactly as it reads /.
// Parse errors throw std::runtime_error("<path>:<line>: <what is wrong>").
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

// The machine path `path` ("/proc/schedstat") under `root` ("/" or "tests/fixtures/sysroot-x").
std::string under_root(const std::string& root, const std::string& path);

// Whole file as text. nullopt and `*why_not` = "open <path>: No such file or directory" (strerror)
// when it cannot be read.
std::optional<std::string> read_text_file(const std::string& path, std::string* why_not);

// Whether debugfs is mounted at `dir` (/proc/self/mounts).
bool debugfs_mounted_at(const std::string& dir);
// Why debugfs content is not readable (not mounted / not root), or "" if it is. Under a root other
// than "/", whether <root>/sys/kernel/debug exists.
std::string debugfs_unavailable_reason(const std::string& root = "/");
// read_text_file for the debugfs file `path` under `root`: when mounted but the read fails with
// EPERM, the reason names kernel lockdown, which restricts debugfs even for root
// (security/lockdown, kernel_lockdown(7)).
std::optional<std::string> read_debugfs_file(const std::string& path, std::string* why_not,
                                             const std::string& root = "/");

// Parsing helpers of the kernel file readers.
namespace ktext {

nlohmann::json unavailable(const std::string& reason);  // {"unavailable": reason}
std::vector<std::string_view> split_ws(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);
std::string where(const std::string& path, int line);                    // "path:line"
[[noreturn]] void fail(const std::string& at, const std::string& what);  // runtime_error
std::optional<uint64_t> to_u64(std::string_view s);
// Throw std::invalid_argument naming `at` and `what`.
uint64_t need_u64(std::string_view s, const std::string& at, std::string_view what);
bool need_bool01(std::string_view s, const std::string& at, std::string_view what);
std::vector<int> parse_int_list(std::string_view s, const std::string& at, std::string_view what);
// "cpu12" -> 12 for prefix "cpu"; nullopt if the name is not prefix + digits.
std::optional<int> indexed_name(std::string_view s, std::string_view prefix);
// The entries <prefix><N> of `dir`, by N.
std::vector<std::filesystem::path> indexed_children(const std::filesystem::path& dir,
                                                    std::string_view prefix);
std::optional<uint64_t> read_u64_file(const std::string& path, std::string* why_not);

// Calls fn(line, line_number) for each line (1-based), without the newline.
template <typename Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  int number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    fn(line, ++number);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

}  // namespace ktext
}  // namespace wb
