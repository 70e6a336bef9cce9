#include "common/system/cpuinfo.h"

#include <charconv>
#include <cstdio>
#include <stdexcept>

#include "common/system/kernel_files.h"
#include "common/util/text.h"

namespace wb {

using namespace ktext;

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

std::optional<CpuInfo> read_cpuinfo(std::string* why_not, const std::string& root) {
  const std::string path = under_root(root, "/proc/cpuinfo");
  auto text = read_text_file(path, why_not);
  if (!text) return std::nullopt;
  try {
    return parse_cpuinfo(*text, path);
  } catch (const std::exception& e) {
    *why_not = e.what();
    return std::nullopt;
  }
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
