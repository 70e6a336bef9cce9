#include "common/system/schedstat.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <stdexcept>
#include <tuple>

#include "common/system/kernel_files.h"
#include "common/util/text.h"

namespace wb {

using namespace ktext;
using nlohmann::json;
namespace fs = std::filesystem;

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

namespace {

using Tokens = std::vector<std::string_view>;

// Token i of a schedstat line as a counter, else the line's one-line error.
uint64_t field(const Tokens& tok, size_t i, const std::string& at, std::string_view what) {
  try {
    return need_u64(tok[i], at, what);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
}

SchedstatCpu cpu_line(int cpu, const Tokens& tok, const std::string& at) {
  if (tok.size() != 10)
    fail(at, "cpu line has " + std::to_string(tok.size() - 1) + " fields, expected 9");
  SchedstatCpu c;
  c.cpu = cpu;
  c.yld_count = field(tok, 1, at, "yld_count");
  // Field 2 is the legacy O(1) expired-queue count, always 0.
  c.sched_count = field(tok, 3, at, "sched_count");
  c.sched_goidle = field(tok, 4, at, "sched_goidle");
  c.ttwu_count = field(tok, 5, at, "ttwu_count");
  c.ttwu_local = field(tok, 6, at, "ttwu_local");
  c.run_time_ns = field(tok, 7, at, "rq_cpu_time");
  c.run_delay_ns = field(tok, 8, at, "run_delay");
  c.pcount = field(tok, 9, at, "pcount");
  return c;
}

SchedstatDomain domain_line(int index, const Tokens& tok, int version, const std::string& at) {
  // Token counts of a domain line (name + fields): v15/v16 "domainN mask" + 36 numbers, v17
  // "domainN name mask" + 45 numbers (sched-stats.rst; show_schedstat()).
  constexpr size_t kDomainTokensV15 = 2 + 36;
  constexpr size_t kDomainTokensV17 = 3 + 45;
  SchedstatDomain d;
  d.index = index;
  size_t mask_at = 1;
  if (tok.size() == kDomainTokensV17 && version != 15 && version != 16) {
    d.name = std::string(tok[1]);
    mask_at = 2;
  } else if (tok.size() != kDomainTokensV15 || version == 17) {
    fail(at, "domain line has " + std::to_string(tok.size() - 1) + " fields, expected " +
                 (version == 17  ? std::string("47 (version 17)")
                  : version != 0 ? std::string("37 (version 15/16)")
                                 : std::string("37 (version 15/16) or 47 (17)")));
  }
  try {
    d.span = parse_cpumask(tok[mask_at]);
  } catch (const std::invalid_argument& e) {
    fail(at, e.what());
  }
  // The last three fields are ttwu_wake_remote, ttwu_move_affine, ttwu_move_balance.
  d.ttwu_wake_remote = field(tok, tok.size() - 3, at, "ttwu_wake_remote");
  d.ttwu_move_affine = field(tok, tok.size() - 2, at, "ttwu_move_affine");
  d.ttwu_move_balance = field(tok, tok.size() - 1, at, "ttwu_move_balance");
  for (size_t i = mask_at + 1; i < tok.size() - 3; ++i) field(tok, i, at, "domain field");
  return d;
}

}  // namespace

SchedstatSnapshot parse_schedstat(std::string_view text, const std::string& path) {
  SchedstatSnapshot snap;
  for_each_line(text, [&](std::string_view line, int n) {
    const Tokens tok = split_ws(line);
    if (tok.empty()) return;
    const std::string at = where(path, n);
    if (tok[0] == "version") {
      if (tok.size() != 2) fail(at, "expected \"version N\"");
      uint64_t v = field(tok, 1, at, "version");
      if (v < 15 || v > 17) {
        fail(at, "schedstat version " + std::to_string(v) + " is not supported (15-17 are)");
      }
      snap.version = static_cast<int>(v);
    } else if (tok[0] == "timestamp") {
      if (tok.size() != 2) fail(at, "expected \"timestamp N\"");
      snap.timestamp_jiffies = field(tok, 1, at, "timestamp");
    } else if (auto cpu = indexed_name(tok[0], "cpu")) {
      snap.cpus.push_back(cpu_line(*cpu, tok, at));
    } else if (auto dom = indexed_name(tok[0], "domain")) {
      if (snap.cpus.empty()) fail(at, "domain line before any cpu line");
      snap.cpus.back().domains.push_back(domain_line(*dom, tok, snap.version, at));
    }
    // Anything else (Android's "eas" lines) is not part of the mainline format: skipped.
  });
  if (snap.cpus.empty()) fail(path, "no cpu lines: not /proc/schedstat text");
  return snap;
}

std::optional<SchedstatSnapshot> read_schedstat(std::string* why_not, const std::string& root) {
  const std::string path = under_root(root, "/proc/schedstat");
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
  if (auto on = read_u64_file(under_root(root, "/proc/sys/kernel/sched_schedstats"), &ignored)) {
    snap.schedstats_enabled = *on != 0;
  }
  return snap;
}

namespace {

const char* const kRebuilt = "sched domains were rebuilt between the snapshots";
const char* const kSchedstatsOff =
    "kernel.sched_schedstats=0, the kernel does not count this (sysctl -w "
    "kernel.sched_schedstats=1)";

json counter_diff(uint64_t b, uint64_t a) {
  if (a < b) return unavailable("counter went backwards between snapshots");
  return a - b;
}

// One CPU's domains between the snapshots: each domain's ttwu counters, or why not.
json domains_delta(const SchedstatCpu& b, const SchedstatCpu& a, bool off) {
  if (a.domains.size() != b.domains.size()) return unavailable(kRebuilt);
  json doms = json::array();
  for (size_t i = 0; i < a.domains.size(); ++i) {
    const auto& da = a.domains[i];
    const auto& db = b.domains[i];
    json d = {{"domain", da.index}, {"span", da.span}};
    if (!da.name.empty()) d["name"] = da.name;
    for (auto [name, bv, av] :
         {std::tuple{"ttwu_wake_remote", db.ttwu_wake_remote, da.ttwu_wake_remote},
          std::tuple{"ttwu_move_affine", db.ttwu_move_affine, da.ttwu_move_affine},
          std::tuple{"ttwu_move_balance", db.ttwu_move_balance, da.ttwu_move_balance}}) {
      d[name] = off ? unavailable(kSchedstatsOff) : counter_diff(bv, av);
    }
    doms.push_back(std::move(d));
  }
  return doms;
}

// One CPU's counters between the snapshots, each also added to `total`.
json cpu_delta(const SchedstatCpu& b, const SchedstatCpu& a, bool off, json& total) {
  json c;
  auto counted = [&](const char* name, uint64_t bv, uint64_t av, bool needs_schedstats) {
    c[name] = (needs_schedstats && off) ? unavailable(kSchedstatsOff) : counter_diff(bv, av);
    if (c[name].is_number()) {
      total[name] = total.value(name, json(uint64_t{0})).get<uint64_t>() + c[name].get<uint64_t>();
    }
  };
  // Fields 7-9 come from sched_info and count even with schedstats off (tests/fixtures/README.md).
  counted("ttwu_count", b.ttwu_count, a.ttwu_count, true);
  counted("ttwu_local", b.ttwu_local, a.ttwu_local, true);
  counted("sched_count", b.sched_count, a.sched_count, true);
  counted("sched_goidle", b.sched_goidle, a.sched_goidle, true);
  counted("yld_count", b.yld_count, a.yld_count, true);
  counted("run_time_ns", b.run_time_ns, a.run_time_ns, false);
  counted("run_delay_ns", b.run_delay_ns, a.run_delay_ns, false);
  counted("pcount", b.pcount, a.pcount, false);
  c["domains"] = domains_delta(b, a, off);
  return c;
}

// Two windows' values under `key` added: counters (unsigned numbers) add; what names them (the
// version, a domain's index, span and name) is the first window's; a counter, a CPU or a CPU's
// domains unavailable in either window is unavailable over both.
json add_windows(const json& a, const json& b, std::string_view key) {
  if (a.is_object() && a.contains("unavailable")) return a;
  if (b.is_object() && b.contains("unavailable")) return b;
  if (a.is_number_unsigned() && b.is_number_unsigned())
    return a.get<uint64_t>() + b.get<uint64_t>();
  if (a.is_object() && b.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : a.items())
      if (b.contains(k)) out[k] = add_windows(v, b[k], k);
    return out;
  }
  if (key != "domains" || !a.is_array() || !b.is_array()) return a;
  if (a.size() != b.size()) return unavailable(kRebuilt);
  json out = json::array();
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(add_windows(a[i], b[i], ""));
  return out;
}

}  // namespace

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
  json per_cpu = json::object();
  json total = json::object();
  for (int cpu : cpus) {
    const SchedstatCpu* b = before.find(cpu);
    const SchedstatCpu* a = after.find(cpu);
    const std::string key = std::to_string(cpu);
    per_cpu[key] = (a && b) ? cpu_delta(*b, *a, off, total)
                            : unavailable("cpu " + key + " not in /proc/schedstat");
  }
  out["cpus"] = std::move(per_cpu);
  out["total"] = std::move(total);
  return out;
}

json sum_schedstat(const std::vector<json>& windows) {
  for (std::size_t i = 0; i < windows.size(); ++i)  // fewer windows would pass for the whole span
    if (windows[i].contains("unavailable"))
      return unavailable("repetition " + std::to_string(i + 1) + " of " +
                         std::to_string(windows.size()) + ": " +
                         windows[i]["unavailable"].get<std::string>());
  json total = windows.at(0);
  for (std::size_t i = 1; i < windows.size(); ++i) total = add_windows(total, windows[i], "");
  return total;
}

}  // namespace wb
