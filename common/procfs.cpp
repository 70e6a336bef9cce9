#include "common/procfs.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace wb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json unavailable(const std::string& reason) { return json{{"unavailable", reason}}; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

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

std::vector<std::string> to_strings(const std::vector<std::string_view>& v) {
  return {v.begin(), v.end()};
}

// "<path>:<value>" as printed by grep; ":" never occurs in these sysfs paths. Also "path: value".
bool split_path_value(std::string_view line, std::string_view* path, std::string_view* value) {
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  *path = trim(line.substr(0, colon));
  *value = trim(line.substr(colon + 1));
  return true;
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

std::vector<fs::path> indexed_children(const fs::path& dir, std::string_view prefix) {
  std::vector<std::pair<int, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (auto n = indexed_name(entry.path().filename().string(), prefix)) {
      found.emplace_back(*n, entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

}  // namespace

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

// ---------------------------------------------------------------------------------------------
// /proc/schedstat

std::vector<int> parse_cpumask(std::string_view mask) {
  auto groups = split(trim(mask), ',');
  std::vector<int> cpus;
  // Groups are printed most significant first; group i from the right holds CPUs 32i..32i+31.
  for (size_t g = 0; g < groups.size(); ++g) {
    std::string_view hex = groups[groups.size() - 1 - g];
    if (hex.empty() || hex.size() > 8) {
      throw std::invalid_argument("bad cpumask \"" + std::string(mask) +
                                  "\": groups are 1-8 hex digits");
    }
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), v, 16);
    if (ec != std::errc() || p != hex.data() + hex.size()) {
      throw std::invalid_argument("bad cpumask \"" + std::string(mask) + "\": not hex");
    }
    for (int bit = 0; bit < 32; ++bit) {
      if (v & (1u << bit)) cpus.push_back(static_cast<int>(g) * 32 + bit);
    }
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

const SchedstatCpu* SchedstatSnapshot::find(int cpu) const {
  for (const auto& c : cpus) {
    if (c.cpu == cpu) return &c;
  }
  return nullptr;
}

SchedstatSnapshot parse_schedstat(std::string_view text, const std::string& path) {
  // Token counts of a domain line (name + fields): v15/v16 "domainN mask" + 36 numbers, v17
  // "domainN name mask" + 45 numbers (sched-stats.rst; show_schedstat()).
  constexpr size_t kDomainTokensV15 = 2 + 36;
  constexpr size_t kDomainTokensV17 = 3 + 45;
  SchedstatSnapshot snap;
  for_each_line(text, [&](std::string_view line, int n) {
    auto tok = split_ws(line);
    if (tok.empty()) return;
    const std::string at = where(path, n);
    auto num = [&](size_t i, std::string_view what) {
      try {
        return need_u64(tok[i], at, what);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(e.what());
      }
    };
    if (tok[0] == "version") {
      if (tok.size() != 2) fail(at, "expected \"version N\"");
      uint64_t v = num(1, "version");
      if (v < 15 || v > 17) {
        fail(at, "schedstat version " + std::to_string(v) + " is not supported (15-17 are)");
      }
      snap.version = static_cast<int>(v);
    } else if (tok[0] == "timestamp") {
      if (tok.size() != 2) fail(at, "expected \"timestamp N\"");
      snap.timestamp_jiffies = num(1, "timestamp");
    } else if (auto cpu = indexed_name(tok[0], "cpu")) {
      if (tok.size() != 10) {
        fail(at, "cpu line has " + std::to_string(tok.size() - 1) + " fields, expected 9");
      }
      SchedstatCpu c;
      c.cpu = *cpu;
      c.yld_count = num(1, "yld_count");
      // Field 2 is the legacy O(1) expired-queue count, always 0.
      c.sched_count = num(3, "sched_count");
      c.sched_goidle = num(4, "sched_goidle");
      c.ttwu_count = num(5, "ttwu_count");
      c.ttwu_local = num(6, "ttwu_local");
      c.run_time_ns = num(7, "rq_cpu_time");
      c.run_delay_ns = num(8, "run_delay");
      c.pcount = num(9, "pcount");
      snap.cpus.push_back(std::move(c));
    } else if (auto dom = indexed_name(tok[0], "domain")) {
      if (snap.cpus.empty()) fail(at, "domain line before any cpu line");
      SchedstatDomain d;
      d.index = *dom;
      size_t mask_at = 1;
      if (tok.size() == kDomainTokensV17 && snap.version != 15 && snap.version != 16) {
        d.name = std::string(tok[1]);
        mask_at = 2;
      } else if (tok.size() != kDomainTokensV15 || snap.version == 17) {
        fail(at, "domain line has " + std::to_string(tok.size() - 1) + " fields, expected " +
                     (snap.version == 17  ? std::string("47 (version 17)")
                      : snap.version != 0 ? std::string("37 (version 15/16)")
                                          : std::string("37 (version 15/16) or 47 (17)")));
      }
      try {
        d.span = parse_cpumask(tok[mask_at]);
      } catch (const std::invalid_argument& e) {
        fail(at, e.what());
      }
      // The last three fields are ttwu_wake_remote, ttwu_move_affine, ttwu_move_balance.
      d.ttwu_wake_remote = num(tok.size() - 3, "ttwu_wake_remote");
      d.ttwu_move_affine = num(tok.size() - 2, "ttwu_move_affine");
      d.ttwu_move_balance = num(tok.size() - 1, "ttwu_move_balance");
      for (size_t i = mask_at + 1; i < tok.size() - 3; ++i) num(i, "domain field");
      snap.cpus.back().domains.push_back(std::move(d));
    }
    // Anything else (Android's "eas" lines) is not part of the mainline format: skipped.
  });
  if (snap.cpus.empty()) fail(path, "no cpu lines: not /proc/schedstat text");
  return snap;
}

std::optional<SchedstatSnapshot> read_schedstat(std::string* why_not) {
  const std::string path = "/proc/schedstat";
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    *why_not = path + " absent: kernel built without CONFIG_SCHEDSTATS";
    return std::nullopt;
  }
  auto text = read_text_file(path, why_not);
  if (!text) return std::nullopt;
  SchedstatSnapshot snap;
  try {
    snap = parse_schedstat(*text, path);
  } catch (const std::exception& e) {
    *why_not = e.what();
    return std::nullopt;
  }
  std::string ignored;
  if (auto on = read_u64_file("/proc/sys/kernel/sched_schedstats", &ignored)) {
    snap.schedstats_enabled = *on != 0;
  }
  return snap;
}

json schedstat_delta(const SchedstatSnapshot& before, const SchedstatSnapshot& after,
                     const std::vector<int>& cpus) {
  json out = {{"source", "/proc/schedstat"}, {"version", after.version}};
  if (before.timestamp_jiffies && after.timestamp_jiffies) {
    out["jiffies"] = *after.timestamp_jiffies - *before.timestamp_jiffies;
  }
  const bool off = before.schedstats_enabled == false || after.schedstats_enabled == false;
  out["schedstats_enabled"] = off ? json(false)
                              : (before.schedstats_enabled && after.schedstats_enabled)
                                  ? json(true)
                                  : json(nullptr);
  const std::string off_reason =
      "kernel.sched_schedstats=0, the kernel does not count this (sysctl -w "
      "kernel.sched_schedstats=1)";
  auto diff = [](uint64_t b, uint64_t a) -> json {
    if (a < b) return unavailable("counter went backwards between snapshots");
    return a - b;
  };
  // Fields 7-9 come from sched_info and count even with schedstats off (tests/fixtures/README.md).
  json per_cpu = json::object();
  json total = json::object();
  for (int cpu : cpus) {
    const SchedstatCpu* b = before.find(cpu);
    const SchedstatCpu* a = after.find(cpu);
    const std::string key = std::to_string(cpu);
    if (!a || !b) {
      per_cpu[key] = unavailable("cpu " + key + " not in /proc/schedstat");
      continue;
    }
    json c;
    auto counted = [&](const char* name, uint64_t bv, uint64_t av, bool needs_schedstats) {
      c[name] = (needs_schedstats && off) ? unavailable(off_reason) : diff(bv, av);
      if (c[name].is_number()) {
        total[name] =
            total.value(name, json(uint64_t{0})).get<uint64_t>() + c[name].get<uint64_t>();
      }
    };
    counted("ttwu_count", b->ttwu_count, a->ttwu_count, true);
    counted("ttwu_local", b->ttwu_local, a->ttwu_local, true);
    counted("sched_count", b->sched_count, a->sched_count, true);
    counted("sched_goidle", b->sched_goidle, a->sched_goidle, true);
    counted("yld_count", b->yld_count, a->yld_count, true);
    counted("run_time_ns", b->run_time_ns, a->run_time_ns, false);
    counted("run_delay_ns", b->run_delay_ns, a->run_delay_ns, false);
    counted("pcount", b->pcount, a->pcount, false);
    if (a->domains.size() != b->domains.size()) {
      c["domains"] = unavailable("sched domains were rebuilt between the snapshots");
    } else {
      json doms = json::array();
      for (size_t i = 0; i < a->domains.size(); ++i) {
        const auto& da = a->domains[i];
        const auto& db = b->domains[i];
        json d = {{"domain", da.index}, {"span", da.span}};
        if (!da.name.empty()) d["name"] = da.name;
        for (auto [name, bv, av] :
             {std::tuple{"ttwu_wake_remote", db.ttwu_wake_remote, da.ttwu_wake_remote},
              std::tuple{"ttwu_move_affine", db.ttwu_move_affine, da.ttwu_move_affine},
              std::tuple{"ttwu_move_balance", db.ttwu_move_balance, da.ttwu_move_balance}}) {
          d[name] = off ? unavailable(off_reason) : diff(bv, av);
        }
        doms.push_back(std::move(d));
      }
      c["domains"] = std::move(doms);
    }
    per_cpu[key] = std::move(c);
  }
  out["cpus"] = std::move(per_cpu);
  out["total"] = std::move(total);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Sched domains

namespace {

// Bit tables of include/linux/sched/topology.h (tests/fixtures/README.md#numeric-flags).
constexpr const char* kSdFlagsUpTo5_7[] = {
    "SD_LOAD_BALANCE",        "SD_BALANCE_NEWIDLE",   "SD_BALANCE_EXEC",
    "SD_BALANCE_FORK",        "SD_BALANCE_WAKE",      "SD_WAKE_AFFINE",
    "SD_ASYM_CPUCAPACITY",    "SD_SHARE_CPUCAPACITY", "SD_SHARE_POWERDOMAIN",
    "SD_SHARE_PKG_RESOURCES", "SD_SERIALIZE",         "SD_ASYM_PACKING",
    "SD_PREFER_SIBLING",      "SD_OVERLAP",           "SD_NUMA"};

void set_domain_field(SchedDomainEntry& e, std::string_view file, std::string_view value,
                      std::optional<SdFlagsTable> table, const std::string& at) {
  try {
    if (file == "name") {
      e.name = std::string(value);
    } else if (file == "flags") {
      if (auto v = to_u64(value)) {
        e.flags_value = *v;
        if (table) e.flags = decode_sd_flags(*v, *table);
      } else {
        e.flags = parse_sd_flags_text(value);
      }
    } else if (file == "groups_flags") {
      e.groups_flags = parse_sd_flags_text(value);
    } else if (file == "level") {
      e.level = static_cast<int>(need_u64(value, at, "level"));
    } else {
      e.other[std::string(file)] = std::string(value);
    }
  } catch (const std::invalid_argument& ex) {
    std::string msg = ex.what();
    if (msg.rfind(at, 0) == 0) throw std::runtime_error(msg);
    fail(at, msg);
  }
}

}  // namespace

std::optional<SdFlagsTable> sd_flags_table_for_release(std::string_view release) {
  auto parts = split(release, '.');
  if (parts.size() < 2) return std::nullopt;
  auto major = to_u64(parts[0]);
  std::string_view minor_text = parts[1];
  size_t digits = 0;
  while (digits < minor_text.size() && std::isdigit(static_cast<unsigned char>(minor_text[digits])))
    ++digits;
  auto minor = to_u64(minor_text.substr(0, digits));
  if (!major || !minor) return std::nullopt;
  if (*major < 5 || (*major == 5 && *minor <= 7)) return SdFlagsTable::kUpTo5_7;
  if (*major == 5 && *minor <= 9) return SdFlagsTable::k5_8To5_9;
  return std::nullopt;
}

std::vector<std::string> decode_sd_flags(uint64_t value, SdFlagsTable table) {
  // 5.8 removed SD_LOAD_BALANCE (bit 0) and moved every other flag down one bit.
  const size_t first = table == SdFlagsTable::kUpTo5_7 ? 0 : 1;
  const size_t count = std::size(kSdFlagsUpTo5_7) - first;
  std::vector<std::string> out;
  for (size_t bit = 0; bit < 64; ++bit) {
    if (!(value & (uint64_t{1} << bit))) continue;
    if (bit >= count) {
      throw std::invalid_argument("sched domain flags " + std::to_string(value) + ": bit " +
                                  std::to_string(bit) + " is not in the kernel's flag table");
    }
    out.emplace_back(kSdFlagsUpTo5_7[first + bit]);
  }
  return out;
}

std::vector<std::string> parse_sd_flags_text(std::string_view text) {
  std::vector<std::string> out;
  for (auto tok : split_ws(text)) {
    bool ok = tok.size() > 3 && tok.substr(0, 3) == "SD_";
    for (char ch : tok) ok = ok && (std::isupper(static_cast<unsigned char>(ch)) || ch == '_');
    if (!ok) {
      throw std::invalid_argument("\"" + std::string(tok) + "\" is not a sched domain flag name");
    }
    out.emplace_back(tok);
  }
  return out;
}

std::vector<SchedDomainEntry> parse_sched_domains_listing(std::string_view text,
                                                          const std::string& path,
                                                          std::optional<SdFlagsTable> table) {
  std::map<std::pair<int, int>, SchedDomainEntry> entries;
  for_each_line(text, [&](std::string_view line, int n) {
    if (trim(line).empty()) return;
    const std::string at = where(path, n);
    std::vector<std::string_view> comps;
    std::string_view value;
    constexpr std::string_view kSysctl = "kernel.sched_domain.";
    if (line.substr(0, kSysctl.size()) == kSysctl) {
      size_t eq = line.find(" = ");
      if (eq == std::string_view::npos) fail(at, "expected \"kernel.sched_domain.<...> = value\"");
      comps = split(line.substr(0, eq), '.');
      value = trim(line.substr(eq + 3));
    } else {
      std::string_view p;
      if (!split_path_value(line, &p, &value)) {
        fail(at, "expected \"<path>/domainN/<file>:<value>\"");
      }
      comps = split(p, '/');
    }
    size_t d = 0;
    while (d < comps.size() && !indexed_name(comps[d], "domain")) ++d;
    if (d + 2 != comps.size()) fail(at, "expected \"<path>/domainN/<file>:<value>\"");
    const int domain = *indexed_name(comps[d], "domain");
    const int cpu = d > 0 ? indexed_name(comps[d - 1], "cpu").value_or(-1) : -1;
    auto& e = entries[{cpu, domain}];
    e.cpu = cpu;
    e.domain = domain;
    set_domain_field(e, comps[d + 1], value, table, at);
  });
  if (entries.empty()) fail(path, "no sched domain lines");
  std::vector<SchedDomainEntry> out;
  for (auto& [k, e] : entries) out.push_back(std::move(e));
  return out;
}

std::string debugfs_unavailable_reason() {
  std::string why;
  auto mounts = read_text_file("/proc/self/mounts", &why);
  bool mounted = false;
  if (mounts) {
    for_each_line(*mounts, [&](std::string_view line, int) {
      auto tok = split_ws(line);
      if (tok.size() >= 3 && tok[1] == "/sys/kernel/debug" && tok[2] == "debugfs") mounted = true;
    });
  }
  if (!mounted) return "/sys/kernel/debug not mounted (mount -t debugfs none /sys/kernel/debug)";
  if (access("/sys/kernel/debug", R_OK | X_OK) != 0) {
    return "/sys/kernel/debug not readable: " + std::string(std::strerror(errno)) +
           " (debugfs is root-only)";
  }
  return "";
}

std::optional<std::string> read_debugfs_file(const std::string& path, std::string* why_not) {
  std::string reason = debugfs_unavailable_reason();
  if (!reason.empty()) {
    *why_not = reason;
    return std::nullopt;
  }
  auto text = read_text_file(path, why_not);
  if (!text && why_not->find(std::strerror(EPERM)) != std::string::npos) {
    *why_not += " (kernel lockdown restricts debugfs; see kernel_lockdown(7))";
  }
  return text;
}

std::optional<std::vector<SchedDomainEntry>> read_sched_domains(const std::vector<int>& cpus,
                                                                std::string* why_not) {
  // 5.13+ (commit 3b87f136f8fc) keeps the tree in debugfs, only while sched/verbose is Y
  // (commit 34320745dfc9); older kernels have it under /proc/sys with CONFIG_SCHED_DEBUG.
  const fs::path debugfs = "/sys/kernel/debug/sched/domains";
  const fs::path procsys = "/proc/sys/kernel/sched_domain";
  std::error_code ec;
  fs::path base;
  std::optional<SdFlagsTable> table;
  if (fs::is_directory(debugfs, ec)) {
    base = debugfs;
  } else if (fs::is_directory(procsys, ec)) {
    base = procsys;
    struct utsname u {};
    if (uname(&u) == 0) table = sd_flags_table_for_release(u.release);
  } else {
    std::string reason = debugfs_unavailable_reason();
    if (!reason.empty()) {
      *why_not = reason;
    } else if (std::string why; fs::exists("/sys/kernel/debug/sched/verbose", ec) &&
                                !read_debugfs_file("/sys/kernel/debug/sched/verbose", &why)) {
      *why_not = why;
    } else if (fs::is_directory("/sys/kernel/debug/sched", ec)) {
      *why_not =
          "/sys/kernel/debug/sched/domains absent: the tree exists only while "
          "/sys/kernel/debug/sched/verbose is Y (echo Y > /sys/kernel/debug/sched/verbose)";
    } else {
      *why_not = "/sys/kernel/debug/sched absent: this kernel has no scheduler debugfs";
    }
    return std::nullopt;
  }
  std::vector<SchedDomainEntry> out;
  for (int cpu : cpus) {
    const fs::path cpu_dir = base / ("cpu" + std::to_string(cpu));
    for (const auto& dom_dir : indexed_children(cpu_dir, "domain")) {
      SchedDomainEntry e;
      e.cpu = cpu;
      e.domain = *indexed_name(dom_dir.filename().string(), "domain");
      std::vector<fs::path> files;
      for (const auto& f : fs::directory_iterator(dom_dir, ec)) files.push_back(f.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        std::string why;
        auto text = read_text_file(f.string(), &why);
        if (!text) {
          e.other[f.filename().string()] = "unavailable: " + why;
          continue;
        }
        try {
          set_domain_field(e, f.filename().string(), trim(*text), table, f.string());
        } catch (const std::exception& ex) {
          e.other[f.filename().string()] = std::string("unavailable: ") + ex.what();
        }
      }
      out.push_back(std::move(e));
    }
  }
  if (out.empty()) {
    *why_not = base.string() + " lists no domains for CPUs of this run";
    return std::nullopt;
  }
  return out;
}

json to_json(const SchedDomainEntry& e) {
  json j = {{"cpu", e.cpu}, {"domain", e.domain}, {"name", e.name}, {"flags", e.flags}};
  if (e.flags_value) j["flags_value"] = *e.flags_value;
  if (e.groups_flags) j["groups_flags"] = *e.groups_flags;
  if (e.level) j["level"] = *e.level;
  for (const auto& [k, v] : e.other) {
    if (auto n = to_u64(v)) {
      j[k] = *n;
    } else {
      j[k] = v;
    }
  }
  return j;
}

// ---------------------------------------------------------------------------------------------
// sched features

std::vector<SchedFeature> parse_sched_features(std::string_view text, const std::string& path) {
  std::vector<SchedFeature> out;
  for_each_line(text, [&](std::string_view line, int n) {
    for (auto tok : split_ws(line)) {
      SchedFeature f;
      f.enabled = tok.substr(0, 3) != "NO_";
      f.name = std::string(f.enabled ? tok : tok.substr(3));
      bool ok = !f.name.empty();
      for (char ch : f.name) {
        ok = ok && (std::isupper(static_cast<unsigned char>(ch)) ||
                    std::isdigit(static_cast<unsigned char>(ch)) || ch == '_');
      }
      if (!ok) fail(where(path, n), "\"" + std::string(tok) + "\" is not a sched feature name");
      out.push_back(std::move(f));
    }
  });
  if (out.empty()) fail(path, "no sched features listed");
  return out;
}

std::optional<std::vector<SchedFeature>> read_sched_features(std::string* why_not) {
  // sched/features since 5.13 (commit d27e9ae2f244 "sched: Move /proc/sched_debug to debugfs"
  // moved the debug files under sched/); sched_features before.
  std::error_code ec;
  for (const char* path :
       {"/sys/kernel/debug/sched/features", "/sys/kernel/debug/sched_features"}) {
    if (!fs::exists(path, ec)) continue;
    auto text = read_debugfs_file(path, why_not);
    if (!text) return std::nullopt;
    try {
      return parse_sched_features(*text, path);
    } catch (const std::exception& e) {
      *why_not = e.what();
      return std::nullopt;
    }
  }
  std::string reason = debugfs_unavailable_reason();
  *why_not = reason.empty() ? "/sys/kernel/debug/sched/features absent" : reason;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// cpuidle

void set_cpuidle_field(CpuidleState& s, std::string_view file, std::string_view value,
                       const std::string& at) {
  value = trim(value);
  if (file == "name") {
    s.name = std::string(value);
  } else if (file == "desc") {
    s.desc = std::string(value);
  } else if (file == "latency") {
    s.latency_us = need_u64(value, at, "latency");
  } else if (file == "residency") {
    s.residency_us = need_u64(value, at, "residency");
  } else if (file == "disable") {
    s.disabled = need_bool01(value, at, "disable");
  } else if (file == "default_status") {
    s.default_status = std::string(value);
  } else if (file == "usage") {
    s.usage = need_u64(value, at, "usage");
  } else if (file == "time") {
    s.time_us = need_u64(value, at, "time");
  }
}

CpuidleListing parse_cpuidle_listing(std::string_view text, const std::string& path) {
  CpuidleListing out;
  std::map<int, std::map<int, CpuidleState>> states;
  for_each_line(text, [&](std::string_view line, int n) {
    if (trim(line).empty()) return;
    const std::string at = where(path, n);
    std::string_view p, value;
    if (!split_path_value(line, &p, &value)) fail(at, "expected \"<path>:<value>\"");
    auto comps = split(p, '/');
    size_t i = 0;
    while (i < comps.size() && comps[i] != "cpuidle") ++i;
    if (i == 0 || i + 2 >= comps.size() || !indexed_name(comps[i - 1], "cpu")) {
      fail(at, "expected \".../cpuN/cpuidle/<stateK|driver>/<file>:<value>\"");
    }
    const int cpu = *indexed_name(comps[i - 1], "cpu");
    if (comps[i + 1] == "driver" && i + 3 == comps.size() && comps[i + 2] == "name") {
      out.driver = std::string(value);
      return;
    }
    auto idx = indexed_name(comps[i + 1], "state");
    if (!idx) fail(at, "expected \".../cpuidle/stateK/<file>\"");
    if (i + 3 != comps.size()) return;  // stateK/s2idle/{usage,time}: not recorded
    auto& st = states[cpu][*idx];
    st.index = *idx;
    try {
      set_cpuidle_field(st, comps[i + 2], value, at);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(e.what());
    }
  });
  if (states.empty()) fail(path, "no cpuidle state lines");
  for (auto& [cpu, by_index] : states) {
    for (auto& [idx, st] : by_index) out.cpus[cpu].push_back(std::move(st));
  }
  return out;
}

std::optional<std::vector<CpuidleState>> read_cpuidle_states(int cpu, std::string* why_not) {
  const fs::path dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpuidle";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *why_not = dir.string() + " absent: no cpuidle driver (CONFIG_CPU_IDLE off or cpuidle.off=1)";
    return std::nullopt;
  }
  std::vector<CpuidleState> out;
  for (const auto& sdir : indexed_children(dir, "state")) {
    CpuidleState st;
    st.index = *indexed_name(sdir.filename().string(), "state");
    for (const char* file :
         {"name", "desc", "latency", "residency", "disable", "default_status", "usage", "time"}) {
      const std::string fpath = (sdir / file).string();
      std::string why;
      auto text = read_text_file(fpath, &why);
      if (!text) {
        st.unreadable[file] = why;
        continue;
      }
      try {
        set_cpuidle_field(st, file, *text, fpath);
      } catch (const std::invalid_argument& e) {
        st.unreadable[file] = e.what();
      }
    }
    out.push_back(std::move(st));
  }
  if (out.empty()) {
    *why_not = dir.string() + " has no stateN directories";
    return std::nullopt;
  }
  return out;
}

json to_json(const CpuidleState& s) {
  auto missing = [&](const char* file) {
    auto it = s.unreadable.find(file);
    return unavailable(it != s.unreadable.end() ? it->second : std::string(file) + " not captured");
  };
  json j = {{"index", s.index}, {"name", s.name}, {"desc", s.desc}};
  j["latency_us"] = s.latency_us ? json(*s.latency_us) : missing("latency");
  j["residency_us"] = s.residency_us ? json(*s.residency_us) : missing("residency");
  j["disabled"] = s.disabled ? json(*s.disabled) : missing("disable");
  if (s.default_status) j["default_status"] = *s.default_status;
  if (s.usage) j["usage"] = *s.usage;
  if (s.time_us) j["time_us"] = *s.time_us;
  return j;
}

// ---------------------------------------------------------------------------------------------
// cpufreq

void set_cpufreq_field(CpufreqPolicy& p, std::string_view file, std::string_view value,
                       const std::string& at) {
  value = trim(value);
  if (file == "scaling_driver") {
    p.driver = std::string(value);
  } else if (file == "scaling_governor") {
    p.governor = std::string(value);
  } else if (file == "energy_performance_preference") {
    p.energy_performance_preference = std::string(value);
  } else if (file == "scaling_min_freq") {
    p.scaling_min_khz = need_u64(value, at, "scaling_min_freq");
  } else if (file == "scaling_max_freq") {
    p.scaling_max_khz = need_u64(value, at, "scaling_max_freq");
  } else if (file == "cpuinfo_min_freq") {
    p.cpuinfo_min_khz = need_u64(value, at, "cpuinfo_min_freq");
  } else if (file == "cpuinfo_max_freq") {
    p.cpuinfo_max_khz = need_u64(value, at, "cpuinfo_max_freq");
  } else if (file == "scaling_cur_freq") {
    p.scaling_cur_khz = need_u64(value, at, "scaling_cur_freq");
  } else if (file == "boost") {
    p.boost = need_bool01(value, at, "boost");
  } else if (file == "related_cpus") {
    p.related_cpus = parse_int_list(value, at, "related_cpus");
  } else if (file == "affected_cpus") {
    p.affected_cpus = parse_int_list(value, at, "affected_cpus");
  } else if (file == "scaling_available_governors") {
    p.available_governors = to_strings(split_ws(value));
  }
}

CpufreqPolicy parse_cpufreq_listing(std::string_view text, const std::string& path) {
  CpufreqPolicy p;
  bool any = false;
  for_each_line(text, [&](std::string_view line, int n) {
    if (trim(line).empty()) return;
    const std::string at = where(path, n);
    std::string_view fpath, value;
    if (!split_path_value(line, &fpath, &value)) fail(at, "expected \"<path>:<value>\"");
    auto comps = split(fpath, '/');
    try {
      set_cpufreq_field(p, comps.back(), value, at);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(e.what());
    }
    any = true;
  });
  if (!any) fail(path, "no cpufreq lines");
  return p;
}

std::optional<CpufreqPolicy> read_cpufreq_policy(int cpu, std::string* why_not) {
  const fs::path dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *why_not =
        dir.string() + " absent: no cpufreq driver (usual in VMs, or the firmware owns P-states)";
    return std::nullopt;
  }
  CpufreqPolicy p;
  for (const char* file :
       {"scaling_driver", "scaling_governor", "scaling_min_freq", "scaling_max_freq",
        "cpuinfo_min_freq", "cpuinfo_max_freq", "scaling_cur_freq", "related_cpus", "affected_cpus",
        "scaling_available_governors", "energy_performance_preference", "boost"}) {
    const std::string fpath = (dir / file).string();
    std::string why;
    auto text = read_text_file(fpath, &why);
    if (!text) {
      p.unreadable[file] = why;
      continue;
    }
    try {
      set_cpufreq_field(p, file, *text, fpath);
    } catch (const std::invalid_argument& e) {
      p.unreadable[file] = e.what();
    }
  }
  return p;
}

json to_json(const CpufreqPolicy& p) {
  auto missing = [&](const char* file) {
    auto it = p.unreadable.find(file);
    return unavailable(it != p.unreadable.end() ? it->second : std::string(file) + " not captured");
  };
  json j;
  j["driver"] = p.driver ? json(*p.driver) : missing("scaling_driver");
  j["governor"] = p.governor ? json(*p.governor) : missing("scaling_governor");
  j["min_khz"] = p.scaling_min_khz ? json(*p.scaling_min_khz) : missing("scaling_min_freq");
  j["max_khz"] = p.scaling_max_khz ? json(*p.scaling_max_khz) : missing("scaling_max_freq");
  j["cpuinfo_min_khz"] = p.cpuinfo_min_khz ? json(*p.cpuinfo_min_khz) : missing("cpuinfo_min_freq");
  j["cpuinfo_max_khz"] = p.cpuinfo_max_khz ? json(*p.cpuinfo_max_khz) : missing("cpuinfo_max_freq");
  if (p.scaling_cur_khz) j["cur_khz"] = *p.scaling_cur_khz;
  if (p.boost) j["boost"] = *p.boost;
  if (p.energy_performance_preference) {
    j["energy_performance_preference"] = *p.energy_performance_preference;
  }
  j["related_cpus"] = p.related_cpus;
  j["available_governors"] = p.available_governors;
  return j;
}

// ---------------------------------------------------------------------------------------------
// /proc/cpuinfo

namespace {

// MIDR implementer and part codes (arch/arm64/include/asm/cputype.h).
struct ArmPart {
  unsigned implementer, part;
  const char* name;
};
constexpr ArmPart kArmParts[] = {
    {0x41, 0xd03, "Cortex-A53"},  {0x41, 0xd05, "Cortex-A55"},  {0x41, 0xd07, "Cortex-A57"},
    {0x41, 0xd08, "Cortex-A72"},  {0x41, 0xd09, "Cortex-A73"},  {0x41, 0xd0b, "Cortex-A76"},
    {0x41, 0xd0c, "Neoverse-N1"}, {0x41, 0xd40, "Neoverse-V1"}, {0x41, 0xd41, "Cortex-A78"},
    {0x41, 0xd46, "Cortex-A510"}, {0x41, 0xd47, "Cortex-A710"}, {0x41, 0xd49, "Neoverse-N2"},
    {0x41, 0xd4f, "Neoverse-V2"}, {0x41, 0xd84, "Neoverse-V3"}, {0x41, 0xd8e, "Neoverse-N3"},
    {0x48, 0xd01, "Kunpeng-920"}, {0xc0, 0xac3, "AmpereOne"},   {0x46, 0x001, "A64FX"},
    {0x43, 0x0af, "ThunderX2"},   {0x4e, 0x004, "Carmel"},
};
struct ArmImplementer {
  unsigned code;
  const char* name;
};
constexpr ArmImplementer kArmImplementers[] = {
    {0x41, "ARM"},       {0x42, "Broadcom"}, {0x43, "Cavium"}, {0x46, "Fujitsu"},
    {0x48, "HiSilicon"}, {0x4e, "NVIDIA"},   {0x50, "APM"},    {0x51, "Qualcomm"},
    {0x61, "Apple"},     {0xc0, "Ampere"},
};

std::optional<unsigned> parse_hex_or_dec(std::string_view s) {
  s = trim(s);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  unsigned v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

CpuInfo parse_cpuinfo(std::string_view text, const std::string& path) {
  std::map<std::string, std::string, std::less<>> first;  // first value of each key
  CpuInfo info;
  for_each_line(text, [&](std::string_view line, int) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    std::string key(trim(line.substr(0, colon)));
    std::string_view value = trim(line.substr(colon + 1));
    if (key == "processor") ++info.processors;
    first.emplace(key, value);
  });
  auto get = [&](std::string_view key) -> std::string {
    auto it = first.find(key);
    return it == first.end() ? std::string() : it->second;
  };
  if (!get("model name").empty()) {
    // x86 (and other architectures that print "model name").
    info.model = get("model name");
    info.vendor = get("vendor_id");
    if (first.count("microcode")) info.microcode = get("microcode");
    const std::string flags = get("flags");  // split_ws's views point into it
    for (auto flag : split_ws(flags)) {
      if (flag == "hypervisor") info.hypervisor_flag = true;
    }
  } else if (!get("CPU part").empty()) {
    // arm64 prints the MIDR fields only; names come from the implementer/part tables.
    auto impl = parse_hex_or_dec(get("CPU implementer"));
    auto part = parse_hex_or_dec(get("CPU part"));
    if (!impl || !part) fail(path, "unparsable \"CPU implementer\" / \"CPU part\"");
    char codes[64];
    std::snprintf(codes, sizeof codes, "0x%02x", *impl);
    info.vendor = codes;
    for (const auto& i : kArmImplementers) {
      if (i.code == *impl) info.vendor = i.name;
    }
    std::string name;
    for (const auto& p : kArmParts) {
      if (p.implementer == *impl && p.part == *part) name = p.name;
    }
    std::snprintf(codes, sizeof codes, "implementer 0x%02x part 0x%03x", *impl, *part);
    info.model = name.empty() ? info.vendor + " " + codes : info.vendor + " " + name;
    auto variant = parse_hex_or_dec(get("CPU variant"));
    auto revision = parse_hex_or_dec(get("CPU revision"));
    if (variant && revision) {
      info.model += " r" + std::to_string(*variant) + "p" + std::to_string(*revision);
    }
    if (!name.empty()) info.model += std::string(" (") + codes + ")";
  } else if (!get("cpu").empty()) {
    // powerpc: "cpu : POWER9 (raw), altivec supported", "revision : 2.2 (pvr 004e 1202)".
    info.model = get("cpu");
    if (!get("revision").empty()) info.model += ", revision " + get("revision");
    if (info.model.rfind("POWER", 0) == 0) info.vendor = "IBM";
    info.platform = get("platform");
    info.machine = get("machine");
  } else {
    fail(path, "no \"model name\", \"CPU part\" or \"cpu\" line: unknown /proc/cpuinfo layout");
  }
  return info;
}

std::map<int, std::pair<uint64_t, uint64_t>> parse_proc_stat_cpu_times(std::string_view text,
                                                                       const std::string& path) {
  std::map<int, std::pair<uint64_t, uint64_t>> out;
  for_each_line(text, [&](std::string_view line, int n) {
    auto tok = split_ws(line);
    if (tok.empty()) return;
    auto cpu = indexed_name(tok[0], "cpu");
    if (!cpu) return;
    // user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is already
    // included in user (fs/proc/stat.c), so the total is the first eight.
    if (tok.size() < 9) fail(where(path, n), "cpu line has fewer than 8 fields");
    uint64_t total = 0, idle = 0;
    for (size_t i = 1; i <= 8; ++i) {
      uint64_t v = 0;
      try {
        v = need_u64(tok[i], where(path, n), "cpu time");
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(e.what());
      }
      total += v;
      if (i == 4 || i == 5) idle += v;
    }
    out[*cpu] = {total - idle, total};
  });
  return out;
}

}  // namespace wb
