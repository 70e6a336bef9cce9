#include "common/system/environment_probe.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "common/system/clock.h"
#include "common/system/cpu_sysfs.h"
#include "common/system/idle_latency.h"
#include "common/system/kernel_files.h"
#include "common/system/sched_domains.h"
#include "common/system/sched_features.h"
#include "common/system/schedstat.h"
#include "common/util/cpulist.h"
#include "common/util/text.h"

namespace wb {
namespace {

namespace fs = std::filesystem;
using ktext::unavailable;
using nlohmann::json;

// The trimmed text of a file, or {"unavailable": reason}.
json text_or_unavailable(const std::string& path) {
  std::string why;
  auto text = read_text_file(path, &why);
  return text ? json(std::string(trim(*text))) : unavailable(why);
}

std::string read_or_empty(const std::string& path) {
  std::string why;
  auto text = read_text_file(path, &why);
  return text ? std::string(trim(*text)) : std::string();
}

json int_or_unavailable(const std::string& path, const std::string& absent_reason) {
  std::string why;
  auto text = read_text_file(path, &why);
  if (!text) {
    std::error_code ec;
    return unavailable(fs::exists(path, ec) ? why : absent_reason);
  }
  try {
    return std::stoll(std::string(trim(*text)));
  } catch (const std::exception&) {
    return unavailable(path + ": not a number: \"" + std::string(trim(*text)) + "\"");
  }
}

std::string cpuid_hypervisor_vendor() {
#if defined(__x86_64__) || defined(__i386__)
  // CPUID leaf 0x40000000: the hypervisor's 12-byte signature in EBX, ECX, EDX (only meaningful
  // when CPUID.1:ECX[31] is set; the caller checks the cpuinfo flag).
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  __cpuid(0x40000000, eax, ebx, ecx, edx);
  char sig[13] = {};
  std::memcpy(sig, &ebx, 4);
  std::memcpy(sig + 4, &ecx, 4);
  std::memcpy(sig + 8, &edx, 4);
  std::string s(sig);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
#else
  return "";
#endif
}

}  // namespace

std::string probe_cmdline() { return read_or_empty("/proc/cmdline"); }

json probe_kernel(const struct utsname& u) {
  json cmdline = text_or_unavailable("/proc/cmdline");
  return {{"release", u.release}, {"version", u.version}, {"cmdline", cmdline}};
}

json probe_cpu(const std::string& arch, const std::optional<CpuInfo>& info,
               const std::string& why) {
  json cpu = {{"arch", arch}};
  if (!info) {
    cpu["vendor"] = cpu["model"] = cpu["microcode"] = unavailable(why);
    return cpu;
  }
  cpu["vendor"] =
      info->vendor.empty() ? unavailable("/proc/cpuinfo names no vendor") : json(info->vendor);
  cpu["model"] = info->model;
  if (info->microcode) {
    cpu["microcode"] = *info->microcode;
  } else {
    std::error_code ec;
    const std::string sysfs = "/sys/devices/system/cpu/cpu0/microcode/version";
    cpu["microcode"] = fs::exists(sysfs, ec)
                           ? text_or_unavailable(sysfs)
                           : unavailable("the kernel exposes no microcode revision on " + arch);
  }
  if (!info->platform.empty()) cpu["platform"] = info->platform;
  if (!info->machine.empty()) cpu["machine"] = info->machine;
  return cpu;
}

json probe_smt(const std::vector<int>& cpus, const std::string& root) {
  const std::string base = under_root(root, "/sys/devices/system/cpu/smt/");
  json smt;
  smt["control"] = text_or_unavailable(base + "control");
  std::string why;
  auto active = read_text_file(base + "active", &why);
  smt["active"] = active ? json(trim(*active) == "1") : unavailable(why);
  json siblings = json::object();
  for (int cpu : cpus) {
    const std::string path = under_root(root, "/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                                                  "/topology/thread_siblings_list");
    auto text = read_text_file(path, &why);
    try {
      siblings[std::to_string(cpu)] = text ? json(parse_cpu_list(trim(*text))) : unavailable(why);
    } catch (const std::exception& e) {
      siblings[std::to_string(cpu)] = unavailable(path + ": " + e.what());
    }
  }
  smt["siblings"] = siblings;
  return smt;
}

std::optional<std::pair<std::string, std::string>> probe_proc_stat_twice(int interval_ms,
                                                                         std::string* why) {
  auto first = read_text_file("/proc/stat", why);
  if (!first) return std::nullopt;
  std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
  auto second = read_text_file("/proc/stat", why);
  if (!second) return std::nullopt;
  return std::pair{std::move(*first), std::move(*second)};
}

json probe_cpufreq(const std::vector<int>& cpus, const std::string& root) {
  json cpufreq = json::object();
  for (int cpu : cpus) {
    std::string why;
    auto p = read_cpufreq_policy(cpu, &why, root);
    cpufreq[std::to_string(cpu)] = p ? to_json(*p) : unavailable(why);
  }
  return cpufreq;
}

json probe_cpuidle(const std::vector<int>& cpus, const std::string& root) {
  const std::string base = under_root(root, "/sys/devices/system/cpu/cpuidle/");
  json idle;
  idle["driver"] = text_or_unavailable(base + "current_driver");
  std::error_code ec;
  // current_governor is writable and needs cpuidle_sysfs_switch on old kernels; the read-only file
  // exists everywhere the framework does.
  idle["governor"] = text_or_unavailable(base + (fs::exists(base + "current_governor", ec)
                                                     ? "current_governor"
                                                     : "current_governor_ro"));
  json states = json::object();
  for (int cpu : cpus) {
    std::string why;
    auto st = read_cpuidle_states(cpu, &why, root);
    if (!st) {
      states[std::to_string(cpu)] = unavailable(why);
      continue;
    }
    json list = json::array();
    for (const auto& s : *st) list.push_back(to_json(s));
    states[std::to_string(cpu)] = list;
  }
  idle["states"] = states;
  return idle;
}

json probe_idle_latency_effective() {
  std::string why;
  auto limit = read_cpu_latency_limit_us(&why);
  if (!limit) return unavailable(why);
  return *limit >= kCpuLatencyNoLimitUs ? json(nullptr) : json(*limit);
}

json probe_isolated_list() { return text_or_unavailable("/sys/devices/system/cpu/isolated"); }

json probe_nohz_full_list() {
  const std::string nohz = "/sys/devices/system/cpu/nohz_full";
  std::error_code ec;
  return fs::exists(nohz, ec)
             ? text_or_unavailable(nohz)
             : unavailable(nohz + " absent: kernel built without CONFIG_NO_HZ_FULL");
}

json probe_sched_features() {
  std::string why;
  auto features = read_sched_features(&why);
  if (!features) return unavailable(why);
  json f = json::object();
  for (const auto& feat : *features) f[feat.name] = feat.enabled;
  return f;
}

json probe_sched_domains(const std::vector<int>& cpus) {
  std::string why;
  auto domains = read_sched_domains(cpus, &why);
  if (!domains) return unavailable(why);
  json d = json::array();
  for (const auto& e : *domains) d.push_back(to_json(e));
  return d;
}

json probe_preempt() {
  // PREEMPT_DYNAMIC kernels show the current preemption model in debugfs (kernel/sched/core.c
  // sched_dynamic_show(): the active mode in parentheses).
  std::string why;
  auto preempt = read_debugfs_file("/sys/kernel/debug/sched/preempt", &why);
  return preempt ? json(std::string(trim(*preempt))) : unavailable(why);
}

json probe_sched_ext() {
  // /sys/kernel/sched_ext/ (kernel/sched/ext.c): state, root/ops while a BPF scheduler is loaded.
  const std::string base = "/sys/kernel/sched_ext";
  std::error_code ec;
  if (!fs::is_directory(base, ec)) {
    return unavailable(base + " absent: kernel built without CONFIG_SCHED_CLASS_EXT");
  }
  json j;
  j["state"] = text_or_unavailable(base + "/state");
  std::string ops = read_or_empty(base + "/root/ops");
  j["ops"] = ops.empty() ? json(nullptr) : json(ops);
  return j;
}

json probe_numa_balancing() {
  return int_or_unavailable("/proc/sys/kernel/numa_balancing",
                            "/proc/sys/kernel/numa_balancing absent: kernel built without "
                            "CONFIG_NUMA_BALANCING");
}

json probe_perf_event_paranoid() {
  return int_or_unavailable("/proc/sys/kernel/perf_event_paranoid",
                            "/proc/sys/kernel/perf_event_paranoid absent: kernel built without "
                            "perf events");
}

json probe_schedstats() {
  std::string why;
  auto snap = read_schedstat(&why);
  if (!snap) return unavailable(why);
  return {{"version", snap->version},
          {"enabled", snap->schedstats_enabled
                          ? json(*snap->schedstats_enabled)
                          : unavailable("/proc/sys/kernel/sched_schedstats unreadable")}};
}

json probe_clocksource() {
  return text_or_unavailable("/sys/devices/system/clocksource/clocksource0/current_clocksource");
}

json probe_timer() {
  // What the stamps of the timed loops cost: each round trip sample holds kStampsPerRoundTrip.
  const StampClock& clock = stamp_clock();
  const double read_ns = clock.overhead_ns();
  return {{"source", clock.source},
          {"ns_per_tick", clock.ns_per_tick},
          {"read_ns", read_ns},
          {"reads_per_round_trip", kStampsPerRoundTrip},
          {"round_trip_ns", read_ns * kStampsPerRoundTrip}};
}

HypervisorEvidence probe_hypervisor_evidence(const CpuInfo& info) {
  HypervisorEvidence ev;
  ev.sys_hypervisor_type = read_or_empty("/sys/hypervisor/type");
  ev.cpuinfo_hypervisor_flag = info.hypervisor_flag;
  if (info.hypervisor_flag) ev.cpuid_vendor = cpuid_hypervisor_vendor();
  ev.dmi_sys_vendor = read_or_empty("/sys/class/dmi/id/sys_vendor");
  ev.dmi_product_name = read_or_empty("/sys/class/dmi/id/product_name");
  ev.ppc_platform = info.platform;
  ev.ppc_machine = info.machine;
  ev.device_tree_hypervisor = read_or_empty("/proc/device-tree/hypervisor/compatible");
  return ev;
}

json probe_hostname() {
  char host[256] = {};
  return gethostname(host, sizeof host - 1) == 0 ? json(std::string(host))
                                                 : unavailable("gethostname failed");
}

}  // namespace wb
