#include "common/system/environment_capture.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>

#include "common/schema/environment.h"
#include "common/system/cpuinfo.h"
#include "common/system/environment_probe.h"
#include "common/system/fair_placement.h"
#include "common/system/kernel_files.h"
#include "common/util/sys.h"
#include "common/util/text.h"

namespace wb {
namespace {

using ktext::unavailable;
using nlohmann::json;

// Length of the /proc/stat sample that measures the load on the measured CPUs (cpu_load).
constexpr int kLoadSampleMs = 100;

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

// The measured CPUs and their SMT siblings (smt.siblings), which share the core with the
// benchmark: the CPUs whose load counts. Sorted, without duplicates.
std::vector<int> load_cpus(const std::vector<int>& cpus, const json& smt) {
  std::vector<int> out = cpus;
  for (const auto& [cpu, sib] : smt.at("siblings").items()) {
    if (sib.is_array()) {
      for (int s : sib) out.push_back(s);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// cpu_load {sample_ms, busy_pct {"<cpu>": percent}} of `cpus` between two reads of /proc/stat.
json cpu_load(const std::string& first, const std::string& second, const std::vector<int>& cpus) {
  try {
    auto a = parse_proc_stat_cpu_times(first, "/proc/stat");
    auto b = parse_proc_stat_cpu_times(second, "/proc/stat");
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

// The processor: cpu, the load on the measured CPUs and their siblings (cpu_load, `smt` as
// captured), and the hypervisor it runs under. `info` is /proc/cpuinfo as read, or nullopt and
// `why` not.
json processor_items(const struct utsname& u, const std::optional<CpuInfo>& info,
                     const std::string& why, const std::vector<int>& cpus, const json& smt) {
  json items;
  items["cpu"] = probe_cpu(u.machine, info, why);
  std::string stat_why;
  const auto stat = probe_proc_stat_twice(kLoadSampleMs, &stat_why);
  items["cpu_load"] =
      stat ? cpu_load(stat->first, stat->second, load_cpus(cpus, smt)) : unavailable(stat_why);
  items["hypervisor"] =
      info ? detect_hypervisor(probe_hypervisor_evidence(*info)) : unavailable(why);
  return items;
}

// idle_latency {requested_us, effective_us}.
json idle_latency_item(std::optional<int> idle_latency_us) {
  return {{"requested_us", idle_latency_us ? json(*idle_latency_us) : json(nullptr)},
          {"effective_us", probe_idle_latency_effective()}};
}

// isolcpus and nohz_full: the kernel's lists and what the command line asked for.
json isolation_items(const std::string& cmdline) {
  json items;
  items["isolcpus"] = {{"list", probe_isolated_list()},
                       {"cmdline", cmdline_param(cmdline, "isolcpus")}};
  items["nohz_full"] = {{"list", probe_nohz_full_list()},
                        {"cmdline", cmdline_param(cmdline, "nohz_full")}};
  return items;
}

// The scheduler's settings. The preemption model matters for wakeup preemption.
json scheduler_items(const std::vector<int>& cpus) {
  json items;
  items["sched_features"] = probe_sched_features();
  items["sched_domains"] = probe_sched_domains(cpus);
  items["preempt"] = probe_preempt();
  items["sched_ext"] = probe_sched_ext();
  items["fair_placement"] = probe_fair_placement();
  items["numa_balancing"] = probe_numa_balancing();
  items["schedstats"] = probe_schedstats();
  return items;
}

// Counting and timing: perf_event_paranoid, clocksource, timer.
json measurement_items() {
  json items;
  items["perf_event_paranoid"] = probe_perf_event_paranoid();
  items["clocksource"] = probe_clocksource();
  items["timer"] = probe_timer();
  return items;
}

}  // namespace

json capture_cpu_settings(const std::vector<int>& cpus, const std::string& root) {
  json items;
  items["smt"] = probe_smt(cpus, root);
  const std::vector<int> with_siblings = load_cpus(cpus, items["smt"]);
  items["cpufreq"] = probe_cpufreq(with_siblings, root);
  items["cpuidle"] = probe_cpuidle(with_siblings, root);
  return items;
}

json capture_environment(const EnvironmentOptions& opts) {
  const std::vector<int> cpus = opts.cpus.empty() ? online_cpus() : opts.cpus;
  json env;
  env["captured_at"] = format_utc(std::time(nullptr), "%Y-%m-%dT%H:%M:%SZ");
  env["cpus"] = cpus;
  struct utsname u {};
  uname(&u);
  env["kernel"] = probe_kernel(u);
  std::string why;
  const std::optional<CpuInfo> info = read_cpuinfo(&why);
  env.update(capture_cpu_settings(cpus));
  env.update(processor_items(u, info, why, cpus, env["smt"]));
  env["idle_latency"] = idle_latency_item(opts.idle_latency_us);
  env.update(isolation_items(probe_cmdline()));
  env.update(scheduler_items(cpus));
  env.update(measurement_items());
  env["wakebench"] = wakebench_build();
  env["config_hash"] = "sha256:" + sha256_hex(opts.config_text);
  env["hostname"] = probe_hostname();
  return env;
}

}  // namespace wb
