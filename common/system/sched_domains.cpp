#include "common/system/sched_domains.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>

#include "common/system/kernel_files.h"
#include "common/util/text.h"

namespace wb {

using namespace ktext;
using nlohmann::json;
namespace fs = std::filesystem;

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

namespace {

// Why neither tree is there: debugfs unmounted or unreadable, sched/verbose off, or no debugfs.
std::string no_domains_reason(const std::string& root, const fs::path& debugfs) {
  const std::string verbose = "/sys/kernel/debug/sched/verbose";
  std::error_code ec;
  if (std::string reason = debugfs_unavailable_reason(root); !reason.empty()) return reason;
  if (std::string why;
      fs::exists(under_root(root, verbose), ec) && !read_debugfs_file(verbose, &why, root))
    return why;
  if (fs::is_directory(under_root(root, "/sys/kernel/debug/sched"), ec))
    return debugfs.string() +
           " absent: the tree exists only while "
           "/sys/kernel/debug/sched/verbose is Y (echo Y > /sys/kernel/debug/sched/verbose)";
  return "/sys/kernel/debug/sched absent: this kernel has no scheduler debugfs";
}

// One domainN directory: each file a field; a file that cannot be read or parsed says why.
SchedDomainEntry read_domain_dir(int cpu, const fs::path& dom_dir,
                                 const std::optional<SdFlagsTable>& table) {
  SchedDomainEntry e;
  e.cpu = cpu;
  e.domain = *indexed_name(dom_dir.filename().string(), "domain");
  std::error_code ec;
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
  return e;
}

}  // namespace

std::optional<std::vector<SchedDomainEntry>> read_sched_domains(const std::vector<int>& cpus,
                                                                std::string* why_not,
                                                                const std::string& root) {
  // 5.13+ (commit 3b87f136f8fc) keeps the tree in debugfs, only while sched/verbose is Y
  // (commit 34320745dfc9); older kernels have it under /proc/sys with CONFIG_SCHED_DEBUG.
  const fs::path debugfs = under_root(root, "/sys/kernel/debug/sched/domains");
  const fs::path procsys = under_root(root, "/proc/sys/kernel/sched_domain");
  std::error_code ec;
  fs::path base;
  std::optional<SdFlagsTable> table;
  if (fs::is_directory(debugfs, ec)) {
    base = debugfs;
  } else if (fs::is_directory(procsys, ec)) {
    base = procsys;
    std::string why;  // the release decides the numeric flags' table (uname(2)'s release)
    if (auto release = read_text_file(under_root(root, "/proc/sys/kernel/osrelease"), &why))
      table = sd_flags_table_for_release(trim(*release));
  } else {
    *why_not = no_domains_reason(root, debugfs);
    return std::nullopt;
  }
  std::vector<SchedDomainEntry> out;
  for (int cpu : cpus)
    for (const auto& dom_dir : indexed_children(base / ("cpu" + std::to_string(cpu)), "domain"))
      out.push_back(read_domain_dir(cpu, dom_dir, table));
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

}  // namespace wb
