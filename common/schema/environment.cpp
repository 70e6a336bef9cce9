#include "common/schema/environment.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

#include "common/util/cpulist.h"
#include "common/util/text.h"

namespace wb {
namespace {

using nlohmann::json;

// Idle states with an exit latency above this count as deep: POLL is 0 us and C1 / WFI / haltpoll
// 1-2 us on the machines in tests/fixtures/captures/cpuidle, C1E and deeper are >= 10 us.
constexpr uint64_t kShallowIdleLatencyUs = 2;
// A CPU busier than this during the capture sample has load that will compete with the benchmark.
constexpr double kBusyPct = 10.0;

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
         qemu ? "KVM/QEMU (pseries guest)" : "PowerVM (LPAR)");
  }
  json j;
  j["detected"] = !evidence.empty();
  j["vendor"] = evidence.empty() ? json(nullptr) : json(vendor.empty() ? "unknown" : vendor);
  j["evidence"] = evidence;
  return j;
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx_);
    throw std::runtime_error("EVP_DigestInit_ex(SHA-256) failed");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(std::string_view data) {
  if (EVP_DigestUpdate(ctx_, data.data(), data.size()) != 1)
    throw std::runtime_error("EVP_DigestUpdate(SHA-256) failed");
}

std::string Sha256::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_, md, &len) != 1)
    throw std::runtime_error("EVP_DigestFinal_ex(SHA-256) failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 0xf];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 sha;
  sha.update(data);
  return sha.hex();
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

// Whether `cpu` is one the run measured (env "cpus"); every CPU when the set does not say. The
// capture also records the measured CPUs' SMT siblings, which warn_siblings judges.
bool measured_cpu(const json& env, int cpu) {
  if (!env.contains("cpus") || !env["cpus"].is_array()) return true;
  const json& cpus = env["cpus"];
  return std::find(cpus.begin(), cpus.end(), json(cpu)) != cpus.end();
}

void warn_cpufreq(const json& env, std::vector<std::string>& out) {
  if (!env.contains("cpufreq") || !env["cpufreq"].is_object()) return;
  Grouped by_governor;
  for (const auto& [key, p] : env["cpufreq"].items()) {
    auto cpu = cpu_key(key);
    if (!cpu || !measured_cpu(env, *cpu)) continue;
    if (!p.is_object() || !p.contains("governor") || !p["governor"].is_string()) continue;
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
    if (!cpu || !measured_cpu(env, *cpu) || !states.is_array()) continue;
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

// j[key], or null when `j` is not an object or has no `key`.
const json& member(const json& j, const std::string& key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it != j.end() ? *it : kNull;
}

// The settings of one CPU that act on its whole core: cpufreq governor and limits, and per idle
// state whether it is disabled. Names as the warning prints them; absent where not recorded.
std::map<std::string, std::string> core_settings(const json& env, int cpu) {
  std::map<std::string, std::string> out;
  const std::string key = std::to_string(cpu);
  const json& freq = member(member(env, "cpufreq"), key);
  if (member(freq, "governor").is_string()) out["governor"] = freq["governor"];
  for (const char* limit : {"min_khz", "max_khz"}) {
    const json& v = member(freq, limit);
    if (v.is_number_unsigned()) out[limit] = std::to_string(v.get<uint64_t>());
  }
  const json& states = member(member(member(env, "cpuidle"), "states"), key);
  if (!states.is_array()) return out;
  for (const auto& st : states) {
    if (member(st, "name").is_string() && member(st, "disabled").is_boolean()) {
      out["idle state " + st["name"].get<std::string>()] =
          st["disabled"].get<bool>() ? "disabled" : "enabled";
    }
  }
  return out;
}

// "governor powersave (CPU 0: performance), ..." for each setting both CPUs record differently.
std::string setting_differences(const json& env, int cpu, int sibling) {
  const auto mine = core_settings(env, cpu), theirs = core_settings(env, sibling);
  std::string out;
  for (const auto& [name, value] : theirs) {
    auto it = mine.find(name);
    if (it == mine.end() || it->second == value) continue;
    out += (out.empty() ? "" : ", ") + name + " " + value + " (CPU " + std::to_string(cpu) + ": " +
           it->second + ")";
  }
  return out;
}

// A measured CPU whose SMT sibling runs another governor, frequency limit or idle-state setting:
// the core's clock and idle depth follow both threads, so the measured wakeups depend on the
// sibling's settings too. Each pair of threads once.
void warn_siblings(const json& env, std::vector<std::string>& out) {
  if (!env.contains("cpus") || !env["cpus"].is_array()) return;
  const json& siblings = member(member(env, "smt"), "siblings");
  for (const json& c : env["cpus"]) {
    if (!c.is_number_integer()) continue;
    const int cpu = c.get<int>();
    const json& list = member(siblings, std::to_string(cpu));
    if (!list.is_array()) continue;
    for (const json& s : list) {
      if (!s.is_number_integer()) continue;
      const int other = s.get<int>();
      if (other == cpu || (other < cpu && measured_cpu(env, other))) continue;
      const std::string diff = setting_differences(env, cpu, other);
      if (diff.empty()) continue;
      out.push_back("SMT sibling CPU " + std::to_string(other) + " of measured CPU " +
                    std::to_string(cpu) + " is set otherwise: " + diff +
                    "; the core's clock and idle depth follow both threads; fix: give CPUs " +
                    format_cpu_list({std::min(cpu, other), std::max(cpu, other)}) +
                    " the same cpufreq and cpuidle settings");
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
  const json::json_pointer applies("/fair_placement/applies");
  if (env.contains(applies) && env.at(applies) == false)
    out.push_back(
        "the wakeup model's predictions do not apply to this run, and predict scores no "
        "verdict: " +
        env.value(json::json_pointer("/fair_placement/why"), std::string("?")));
}

}  // namespace

std::vector<std::string> environment_warnings(const json& env) {
  std::vector<std::string> out;
  warn_cpufreq(env, out);
  warn_idle(env, out);
  warn_hypervisor(env, out);
  warn_load(env, out);
  warn_siblings(env, out);
  warn_sched(env, out);
  return out;
}

// The build's identity, generated at configure time (cmake/build_info.cpp.in).
extern const std::string_view kBuildVersion, kBuildGitSha, kBuildCompiler;

json wakebench_build() {
  return {{"version", std::string(kBuildVersion)},
          {"git_sha", std::string(kBuildGitSha)},
          {"compiler", std::string(kBuildCompiler)}};
}

}  // namespace wb
