#include "common/system/kernel_files.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/util/text.h"

namespace wb {
namespace ktext {

nlohmann::json unavailable(const std::string& reason) { return {{"unavailable", reason}}; }

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string where(const std::string& path, int line) { return path + ":" + std::to_string(line); }

[[noreturn]] void fail(const std::string& at, const std::string& what) {
  throw std::runtime_error(at + ": " + what);
}

std::optional<uint64_t> to_u64(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

uint64_t need_u64(std::string_view s, const std::string& at, std::string_view what) {
  auto v = to_u64(trim(s));
  if (!v) {
    throw std::invalid_argument(at + ": " + std::string(what) + " is not a number: \"" +
                                std::string(s) + "\"");
  }
  return *v;
}

bool need_bool01(std::string_view s, const std::string& at, std::string_view what) {
  s = trim(s);
  if (s == "0") return false;
  if (s == "1") return true;
  throw std::invalid_argument(at + ": " + std::string(what) + " is not 0 or 1: \"" +
                              std::string(s) + "\"");
}

// "cpu12" -> 12 for prefix "cpu"; nullopt if the name is not prefix + digits.
std::optional<int> indexed_name(std::string_view s, std::string_view prefix) {
  if (s.size() <= prefix.size() || s.substr(0, prefix.size()) != prefix) return std::nullopt;
  auto v = to_u64(s.substr(prefix.size()));
  if (!v || *v > 1u << 30) return std::nullopt;
  return static_cast<int>(*v);
}

std::vector<int> parse_int_list(std::string_view s, const std::string& at, std::string_view what) {
  std::vector<int> out;
  for (auto tok : split_ws(s)) out.push_back(static_cast<int>(need_u64(tok, at, what)));
  return out;
}

std::optional<uint64_t> read_u64_file(const std::string& path, std::string* why_not) {
  auto text = read_text_file(path, why_not);
  if (!text) return std::nullopt;
  auto v = to_u64(trim(*text));
  if (!v) {
    *why_not = path + ": not a number: \"" + std::string(trim(*text)) + "\"";
    return std::nullopt;
  }
  return v;
}

std::vector<std::filesystem::path> indexed_children(const std::filesystem::path& dir,
                                                    std::string_view prefix) {
  std::vector<std::pair<int, std::filesystem::path>> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (auto n = indexed_name(entry.path().filename().string(), prefix)) {
      found.emplace_back(*n, entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::filesystem::path> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

}  // namespace ktext

using namespace ktext;

std::string under_root(const std::string& root, const std::string& path) {
  if (root.empty() || root == "/") return path;
  return (root.back() == '/' ? root.substr(0, root.size() - 1) : root) + path;
}

std::optional<std::string> read_text_file(const std::string& path, std::string* why_not) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *why_not = "open " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    *why_not = "read " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  return ss.str();
}

bool debugfs_mounted_at(const std::string& dir) {
  std::string why;
  const std::optional<std::string> mounts = read_text_file("/proc/self/mounts", &why);
  bool found = false;
  if (mounts)
    for_each_line(*mounts, [&](std::string_view line, int) {
      const auto tok = split_ws(line);
      if (tok.size() >= 3 && tok[1] == dir && tok[2] == "debugfs") found = true;
    });
  return found;
}

std::string debugfs_unavailable_reason(const std::string& root) {
  const std::string debug = under_root(root, "/sys/kernel/debug");
  if (debug != "/sys/kernel/debug") {  // a fixture tree: nothing is mounted there
    std::error_code ec;
    return std::filesystem::is_directory(debug, ec) ? "" : debug + " absent";
  }
  if (!debugfs_mounted_at("/sys/kernel/debug"))
    return "/sys/kernel/debug not mounted (mount -t debugfs none /sys/kernel/debug)";
  if (access("/sys/kernel/debug", R_OK | X_OK) != 0) {
    return "/sys/kernel/debug not readable: " + std::string(std::strerror(errno)) +
           " (debugfs is root-only)";
  }
  return "";
}

std::optional<std::string> read_debugfs_file(const std::string& path, std::string* why_not,
                                             const std::string& root) {
  std::string reason = debugfs_unavailable_reason(root);
  if (!reason.empty()) {
    *why_not = reason;
    return std::nullopt;
  }
  auto text = read_text_file(under_root(root, path), why_not);
  if (!text && why_not->find(std::strerror(EPERM)) != std::string::npos) {
    *why_not += " (kernel lockdown restricts debugfs; see kernel_lockdown(7))";
  }
  return text;
}

}  // namespace wb
