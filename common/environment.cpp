#include "common/environment.h"

#include <openssl/evp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <thread>
#include <tuple>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "common/clock.h"
#include "common/cpu_sysfs.h"
#include "common/cpuinfo.h"
#include "common/cpulist.h"
#include "common/idle_latency.h"
#include "common/kernel_files.h"
#include "common/sched_domains.h"
#include "common/sched_features.h"
#include "common/schedstat.h"
#include "common/sys.h"
#include "common/text.h"

namespace wb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Idle states with an exit latency above this count as deep: POLL is 0 us and C1 / WFI / haltpoll
// 1-2 us on the machines in tests/fixtures/captures/cpuidle, C1E and deeper are >= 10 us.
constexpr uint64_t kShallowIdleLatencyUs = 2;
// A CPU busier than this during the capture sample has load that will compete with the benchmark.
constexpr double kBusyPct = 10.0;
// Length of the /proc/stat sample that measures that load.
constexpr int kLoadSampleMs = 100;

json unavailable(const std::string& reason) { return json{{"unavailable", reason}}; }

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

// Value of `key=` on the kernel command line, or null.
json cmdline_param(const std::string& cmdline, const std::string& key) {
  size_t pos = 0;
  while (pos < cmdline.size()) {
    size_t end = cmdline.find(' ', pos);
    if (end == std::string::npos) end = cmdline.size();
    std::string tok = cmdline.substr(pos, end - pos);
    if (tok.rfind(key + "=", 0) == 0) return tok.substr(key.size() + 1);
    if (tok == "--") break;  // the rest belongs to init
    pos = end + 1;
  }
  return nullptr;
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

// busy percentage per CPU over a short sample of /proc/stat.
json sample_cpu_load(const std::vector<int>& cpus) {
  std::string why;
  auto first = read_text_file("/proc/stat", &why);
  if (!first) return unavailable(why);
  std::this_thread::sleep_for(std::chrono::milliseconds(kLoadSampleMs));
  auto second = read_text_file("/proc/stat", &why);
  if (!second) return unavailable(why);
  try {
    auto a = parse_proc_stat_cpu_times(*first, "/proc/stat");
    auto b = parse_proc_stat_cpu_times(*second, "/proc/stat");
    json busy = json::object();
    for (int cpu : cpus) {
      auto ia = a.find(cpu), ib = b.find(cpu);
      if (ia == a.end() || ib == b.end()) continue;
      uint64_t total = ib->second.second - ia->second.second;
      uint64_t used = ib->second.first - ia->second.first;
      double pct = total ? 100.0 * static_cast<double>(used) / static_cast<double>(total) : 0.0;
      busy[std::to_string(cpu)] = std::round(pct * 10) / 10;
    }
    return json{{"sample_ms", kLoadSampleMs}, {"busy_pct", busy}};
  } catch (const std::exception& e) {
    return unavailable(e.what());
  }
}

json capture_kernel(const struct utsname& u) {
  json cmdline = text_or_unavailable("/proc/cmdline");
  return {{"release", u.release}, {"version", u.version}, {"cmdline", cmdline}};
}

json capture_cpu(const struct utsname& u, CpuInfo* info_out, json* info_error) {
  json cpu = {{"arch", u.machine}};
  std::string why;
  auto read = read_cpuinfo(&why);
  if (!read) {
    cpu["vendor"] = cpu["model"] = cpu["microcode"] = unavailable(why);
    *info_error = unavailable(why);
    return cpu;
  }
  *info_out = *read;
  const CpuInfo& info = *info_out;
  cpu["vendor"] =
      info.vendor.empty() ? unavailable("/proc/cpuinfo names no vendor") : json(info.vendor);
  cpu["model"] = info.model;
  if (info.microcode) {
    cpu["microcode"] = *info.microcode;
  } else {
    std::error_code ec;
    const std::string sysfs = "/sys/devices/system/cpu/cpu0/microcode/version";
    cpu["microcode"] =
        fs::exists(sysfs, ec)
            ? text_or_unavailable(sysfs)
            : unavailable(std::string("the kernel exposes no microcode revision on ") + u.machine);
  }
  if (!info.platform.empty()) cpu["platform"] = info.platform;
  if (!info.machine.empty()) cpu["machine"] = info.machine;
  return cpu;
}

json capture_smt(const std::vector<int>& cpus) {
  const std::string base = "/sys/devices/system/cpu/smt/";
  json smt;
  smt["control"] = text_or_unavailable(base + "control");
  std::string why;
  auto active = read_text_file(base + "active", &why);
  smt["active"] = active ? json(trim(*active) == "1") : unavailable(why);
  json siblings = json::object();
  for (int cpu : cpus) {
    const std::string path =
        "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list";
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

json capture_cpuidle(const std::vector<int>& cpus) {
  const std::string base = "/sys/devices/system/cpu/cpuidle/";
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
    auto st = read_cpuidle_states(cpu, &why);
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

json capture_sched_ext() {
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

json capture_hypervisor(const CpuInfo& info) {
  HypervisorEvidence ev;
  ev.sys_hypervisor_type = read_or_empty("/sys/hypervisor/type");
  ev.cpuinfo_hypervisor_flag = info.hypervisor_flag;
  if (info.hypervisor_flag) ev.cpuid_vendor = cpuid_hypervisor_vendor();
  ev.dmi_sys_vendor = read_or_empty("/sys/class/dmi/id/sys_vendor");
  ev.dmi_product_name = read_or_empty("/sys/class/dmi/id/product_name");
  ev.ppc_platform = info.platform;
  ev.ppc_machine = info.machine;
  ev.device_tree_hypervisor = read_or_empty("/proc/device-tree/hypervisor/compatible");
  return detect_hypervisor(ev);
}

json capture_idle_latency(const EnvironmentOptions& opts) {
  json j;
  j["requested_us"] = opts.idle_latency_us ? json(*opts.idle_latency_us) : json(nullptr);
  std::string why;
  auto limit = read_cpu_latency_limit_us(&why);
  if (!limit) {
    j["effective_us"] = unavailable(why);
  } else {
    j["effective_us"] = *limit >= kCpuLatencyNoLimitUs ? json(nullptr) : json(*limit);
  }
  return j;
}

}  // namespace

json detect_hypervisor(const HypervisorEvidence& ev) {
  json evidence = json::array();
  std::string vendor;
  auto note = [&](const std::string& what, const std::string& name) {
    evidence.push_back(what);
    if (vendor.empty() && !name.empty()) vendor = name;
  };
  // CPUID signatures as the hypervisors publish them (KVM: Documentation/virt/kvm/x86/cpuid.rst).
  static const std::map<std::string, std::string> kCpuid = {
      {"KVMKVMKVM", "KVM"},     {"Microsoft Hv", "Hyper-V"},    {"VMwareVMware", "VMware"},
      {"XenVMMXenVMM", "Xen"},  {"TCGTCGTCGTCG", "QEMU TCG"},   {"ACRNACRNACRN", "ACRN"},
      {"bhyve bhyve", "bhyve"}, {"VBoxVBoxVBox", "VirtualBox"}, {"QNXQVMBSQG", "QNX"}};
  if (!ev.cpuid_vendor.empty()) {
    auto it = kCpuid.find(ev.cpuid_vendor);
    note("cpuid 0x40000000: " + ev.cpuid_vendor, it != kCpuid.end() ? it->second : ev.cpuid_vendor);
  }
  if (ev.cpuinfo_hypervisor_flag) note("/proc/cpuinfo flag: hypervisor", "");
  if (!ev.sys_hypervisor_type.empty()) {
    note("/sys/hypervisor/type: " + ev.sys_hypervisor_type,
         ev.sys_hypervisor_type == "xen" ? "Xen" : ev.sys_hypervisor_type);
  }
  if (!ev.device_tree_hypervisor.empty()) {
    const std::string& c = ev.device_tree_hypervisor;
    note("device-tree hypervisor: " + c, c.find("xen") != std::string::npos   ? "Xen"
                                         : c.find("kvm") != std::string::npos ? "KVM"
                                                                              : c);
  }
  // DMI strings of common virtual platforms; bare-metal cloud instances (".metal") are not guests.
  const std::string& sv = ev.dmi_sys_vendor;
  const std::string& pn = ev.dmi_product_name;
  const bool metal = pn.size() >= 6 && pn.compare(pn.size() - 6, 6, ".metal") == 0;
  std::string dmi;
  if (sv == "QEMU" || pn.rfind("KVM", 0) == 0) dmi = "KVM/QEMU";
  if (sv == "VMware, Inc.") dmi = "VMware";
  if (sv == "Xen") dmi = "Xen";
  if (sv == "innotek GmbH") dmi = "VirtualBox";
  if (sv == "Microsoft Corporation" && pn == "Virtual Machine") dmi = "Hyper-V";
  if (sv == "Amazon EC2" && !metal) dmi = "Amazon EC2 (Nitro)";
  if (sv == "Google" && pn == "Google Compute Engine") dmi = "Google Compute Engine (KVM)";
  if (!dmi.empty()) note("dmi: " + sv + " / " + pn, dmi);
  // powerpc: "pSeries" is a logical partition (PowerVM) or a KVM pseries guest; "PowerNV" is
  // bare metal (arch/powerpc/platforms/{pseries,powernv}).
  if (ev.ppc_platform == "pSeries") {
    const bool qemu = ev.ppc_machine.find("qemu") != std::string::npos;
    note("cpuinfo platform: pSeries, machine: " + ev.ppc_machine,
         qemu ? "KVM (pseries guest)" : "PowerVM (LPAR)");
  }
  json j;
  j["detected"] = !evidence.empty();
  j["vendor"] = evidence.empty() ? json(nullptr) : json(vendor.empty() ? "unknown" : vendor);
  j["evidence"] = evidence;
  return j;
}

std::string sha256_hex(std::string_view data) {
  // One-shot digest, EVP_Digest(3ossl): 0 when it fails (no memory, or no provider that offers
  // SHA-256).
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("EVP_Digest(SHA-256) failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 0xf];
  }
  return out;
}

json capture_environment(const EnvironmentOptions& opts) {
  const std::vector<int> cpus = opts.cpus.empty() ? online_cpus() : opts.cpus;
  json env;
  env["captured_at"] = format_utc(std::time(nullptr), "%Y-%m-%dT%H:%M:%SZ");
  env["cpus"] = cpus;
  struct utsname u {};
  uname(&u);
  env["kernel"] = capture_kernel(u);
  const std::string cmdline = read_or_empty("/proc/cmdline");

  CpuInfo info;
  json info_error;
  env["cpu"] = capture_cpu(u, &info, &info_error);
  env["smt"] = capture_smt(cpus);

  // Load on the measured CPUs and their SMT siblings, which share the core with the benchmark.
  std::vector<int> load_cpus = cpus;
  for (const auto& [cpu, sib] : env["smt"]["siblings"].items()) {
    if (sib.is_array()) {
      for (int s : sib) load_cpus.push_back(s);
    }
  }
  std::sort(load_cpus.begin(), load_cpus.end());
  load_cpus.erase(std::unique(load_cpus.begin(), load_cpus.end()), load_cpus.end());
  env["cpu_load"] = sample_cpu_load(load_cpus);

  json cpufreq = json::object();
  for (int cpu : cpus) {
    std::string why;
    auto p = read_cpufreq_policy(cpu, &why);
    cpufreq[std::to_string(cpu)] = p ? to_json(*p) : unavailable(why);
  }
  env["cpufreq"] = cpufreq;
  env["cpuidle"] = capture_cpuidle(cpus);
  env["idle_latency"] = capture_idle_latency(opts);

  std::error_code ec;
  std::string why;
  env["isolcpus"] = {{"list", text_or_unavailable("/sys/devices/system/cpu/isolated")},
                     {"cmdline", cmdline_param(cmdline, "isolcpus")}};
  const std::string nohz = "/sys/devices/system/cpu/nohz_full";
  env["nohz_full"] = {
      {"list", fs::exists(nohz, ec) ? text_or_unavailable(nohz)
                                    : unavailable(nohz + " absent: kernel built without "
                                                         "CONFIG_NO_HZ_FULL")},
      {"cmdline", cmdline_param(cmdline, "nohz_full")}};

  if (auto features = read_sched_features(&why)) {
    json f = json::object();
    for (const auto& feat : *features) f[feat.name] = feat.enabled;
    env["sched_features"] = f;
  } else {
    env["sched_features"] = unavailable(why);
  }
  if (auto domains = read_sched_domains(cpus, &why)) {
    json d = json::array();
    for (const auto& e : *domains) d.push_back(to_json(e));
    env["sched_domains"] = d;
  } else {
    env["sched_domains"] = unavailable(why);
  }
  // The preemption model matters for wakeup preemption; PREEMPT_DYNAMIC kernels show the current
  // one in debugfs (kernel/sched/core.c sched_dynamic_show(): the active mode in parentheses).
  if (auto preempt = read_debugfs_file("/sys/kernel/debug/sched/preempt", &why)) {
    env["preempt"] = std::string(trim(*preempt));
  } else {
    env["preempt"] = unavailable(why);
  }
  env["sched_ext"] = capture_sched_ext();
  env["numa_balancing"] =
      int_or_unavailable("/proc/sys/kernel/numa_balancing",
                         "/proc/sys/kernel/numa_balancing absent: kernel built without "
                         "CONFIG_NUMA_BALANCING");
  env["perf_event_paranoid"] = int_or_unavailable("/proc/sys/kernel/perf_event_paranoid",
                                                  "/proc/sys/kernel/perf_event_paranoid absent: "
                                                  "kernel built without perf events");
  env["clocksource"] =
      text_or_unavailable("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  {
    // What the stamps of the timed loops cost: each round trip sample holds kStampsPerRoundTrip.
    const StampClock& clock = stamp_clock();
    const double read_ns = clock.overhead_ns();
    env["timer"] = {{"source", clock.source},
                    {"ns_per_tick", clock.ns_per_tick},
                    {"read_ns", read_ns},
                    {"reads_per_round_trip", kStampsPerRoundTrip},
                    {"round_trip_ns", read_ns * kStampsPerRoundTrip}};
  }
  env["hypervisor"] = info_error.is_null() ? capture_hypervisor(info) : info_error;

  if (auto snap = read_schedstat(&why)) {
    env["schedstats"] = {
        {"version", snap->version},
        {"enabled", snap->schedstats_enabled ? json(*snap->schedstats_enabled)
                                             : unavailable("/proc/sys/kernel/sched_schedstats "
                                                           "unreadable")}};
  } else {
    env["schedstats"] = unavailable(why);
  }

  env["wakebench"] = wakebench_build();
  env["config_hash"] = "sha256:" + sha256_hex(opts.config_text);
  char host[256] = {};
  env["hostname"] = gethostname(host, sizeof host - 1) == 0 ? json(std::string(host))
                                                            : unavailable("gethostname failed");
  return env;
}

// ---------------------------------------------------------------------------------------------
// Warnings

namespace {

// Groups CPUs under a key so one warning covers every CPU with the same problem.
using Grouped = std::map<std::string, std::vector<int>>;

std::optional<int> cpu_key(const std::string& key) {
  try {
    size_t used = 0;
    int v = std::stoi(key, &used);
    if (used == key.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::string cpus_phrase(const std::vector<int>& cpus) {
  return (cpus.size() == 1 ? "CPU " : "CPUs ") + format_cpu_list(cpus);
}

void warn_cpufreq(const json& env, std::vector<std::string>& out) {
  if (!env.contains("cpufreq") || !env["cpufreq"].is_object()) return;
  Grouped by_governor;
  for (const auto& [key, p] : env["cpufreq"].items()) {
    auto cpu = cpu_key(key);
    if (!cpu || !p.is_object() || !p.contains("governor") || !p["governor"].is_string()) continue;
    const std::string gov = p["governor"];
    if (gov != "performance") by_governor[gov].push_back(*cpu);
  }
  for (auto& [gov, cpus] : by_governor) {
    std::sort(cpus.begin(), cpus.end());
    out.push_back("cpufreq governor is " + gov + " on " + cpus_phrase(cpus) +
                  ": frequency follows load, so wakeup times change with it; fix: "
                  "cpupower -c " +
                  format_cpu_list(cpus) +
                  " frequency-set -g performance (or echo performance > "
                  "/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor)");
  }
}

void warn_idle(const json& env, std::vector<std::string>& out) {
  if (!env.contains("cpuidle") || !env["cpuidle"].is_object()) return;
  const json& idle = env["cpuidle"];
  if (!idle.contains("states") || !idle["states"].is_object()) return;
  // With --idle-latency-us the user chose which states to allow; record, do not nag.
  if (env.contains("idle_latency") && env["idle_latency"].is_object() &&
      env["idle_latency"].value("requested_us", json(nullptr)).is_number()) {
    return;
  }
  std::map<std::tuple<int, std::string, uint64_t>, std::vector<int>> deep;  // state -> CPUs
  for (const auto& [key, states] : idle["states"].items()) {
    auto cpu = cpu_key(key);
    if (!cpu || !states.is_array()) continue;
    for (const auto& s : states) {
      if (!s.contains("latency_us") || !s["latency_us"].is_number_unsigned()) continue;
      if (s.contains("disabled") && s["disabled"].is_boolean() && s["disabled"].get<bool>())
        continue;
      const uint64_t lat = s["latency_us"];
      if (lat <= kShallowIdleLatencyUs) continue;
      deep[{s.value("index", -1), s.value("name", std::string("?")), lat}].push_back(*cpu);
    }
  }
  for (auto& [state, cpus] : deep) {
    const auto& [index, name, lat] = state;
    std::sort(cpus.begin(), cpus.end());
    out.push_back(cpus_phrase(cpus) + " can enter idle state " + name + " (exit latency " +
                  std::to_string(lat) +
                  " us): a cross-CPU wakeup then includes that exit; fix: "
                  "run with --idle-latency-us 0 (holds every CPU out of deep states), or "
                  "echo 1 > /sys/devices/system/cpu/cpuN/cpuidle/state" +
                  std::to_string(index) + "/disable");
  }
}

void warn_hypervisor(const json& env, std::vector<std::string>& out) {
  if (!env.contains("hypervisor") || !env["hypervisor"].is_object()) return;
  const json& h = env["hypervisor"];
  if (!h.value("detected", false)) return;
  std::string vendor = h.contains("vendor") && h["vendor"].is_string()
                           ? h["vendor"].get<std::string>()
                           : std::string("unknown");
  out.push_back("running under a hypervisor (" + vendor +
                "): cross-CPU wakeups include vCPU wakeup cost (the IPI exits to the host, and the "
                "host may have descheduled the target vCPU); fix: measure on bare metal, or pin "
                "each vCPU to its own host CPU");
}

double busy_of(const json& env, int cpu) {
  if (!env.contains("cpu_load") || !env["cpu_load"].is_object()) return -1;
  const json& busy = env["cpu_load"].value("busy_pct", json::object());
  auto it = busy.find(std::to_string(cpu));
  return it != busy.end() && it->is_number() ? it->get<double>() : -1;
}

std::string pct(double v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", v);
  return buf;
}

void warn_load(const json& env, std::vector<std::string>& out) {
  if (!env.contains("cpus") || !env["cpus"].is_array()) return;
  std::vector<int> measured = env["cpus"].get<std::vector<int>>();
  for (int cpu : measured) {
    double b = busy_of(env, cpu);
    if (b > kBusyPct) {
      out.push_back("measured CPU " + std::to_string(cpu) + " was " + pct(b) +
                    " busy before the run: other tasks will preempt or delay the benchmark; "
                    "fix: stop them, or keep them off with isolcpus= / a cpuset");
    }
  }
  if (!env.contains("smt") || !env["smt"].is_object()) return;
  const json& sib = env["smt"].value("siblings", json::object());
  for (int cpu : measured) {
    auto it = sib.find(std::to_string(cpu));
    if (it == sib.end() || !it->is_array()) continue;
    for (int s : *it) {
      if (s == cpu) continue;
      double b = busy_of(env, s);
      if (b > kBusyPct) {
        out.push_back("SMT sibling CPU " + std::to_string(s) + " of measured CPU " +
                      std::to_string(cpu) + " was " + pct(b) +
                      " busy: it shares the core's pipeline and L1/L2 with the benchmark; fix: "
                      "stop that load, or isolate the whole core (isolcpus= / cpuset with both "
                      "siblings)");
      }
    }
  }
}

void warn_sched(const json& env, std::vector<std::string>& out) {
  if (env.contains("numa_balancing") && env["numa_balancing"].is_number_integer() &&
      env["numa_balancing"].get<int>() != 0) {
    out.push_back("NUMA balancing is on (kernel.numa_balancing=" +
                  std::to_string(env["numa_balancing"].get<int>()) +
                  "): it samples page faults and migrates tasks and memory during the run; fix: "
                  "sysctl -w kernel.numa_balancing=0");
  }
  if (env.contains("sched_ext") && env["sched_ext"].is_object() &&
      env["sched_ext"].value("state", json(nullptr)) == "enabled") {
    const json ops = env["sched_ext"].value("ops", json(nullptr));
    out.push_back("a sched_ext BPF scheduler" +
                  (ops.is_string() ? " (" + ops.get<std::string>() + ")" : std::string()) +
                  " is running: wakeup placement and costs are its own, not the fair class's; "
                  "fix: unload it for mainline figures");
  }
}

}  // namespace

std::vector<std::string> environment_warnings(const json& env) {
  std::vector<std::string> out;
  warn_cpufreq(env, out);
  warn_idle(env, out);
  warn_hypervisor(env, out);
  warn_load(env, out);
  warn_sched(env, out);
  return out;
}

json wakebench_build() {
  return {{"version", WB_VERSION}, {"git_sha", WB_GIT_SHA}, {"compiler", WB_COMPILER}};
}

}  // namespace wb
