#include "common/system/cpu_sysfs.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "common/system/kernel_files.h"
#include "common/util/cpulist.h"
#include "common/util/text.h"

namespace wb {

using namespace ktext;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Sets one field from a state file's content; unknown files are ignored. Throws
// std::invalid_argument (naming `at`) on a bad value for a numeric file.
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

}  // namespace

std::optional<std::vector<CpuidleState>> read_cpuidle_states(int cpu, std::string* why_not,
                                                             const std::string& root) {
  const fs::path dir =
      under_root(root, "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpuidle");
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

namespace {

// Sets one field from a policy file's content; unknown files are ignored. Throws
// std::invalid_argument (naming `at`) on a bad value for a numeric file.
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
    for (auto g : split_ws(value)) p.available_governors.emplace_back(g);
  }
}

}  // namespace

std::optional<CpufreqPolicy> read_cpufreq_policy(int cpu, std::string* why_not,
                                                 const std::string& root) {
  const fs::path dir =
      under_root(root, "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq");
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

namespace {

// "CPU 1 is offline", "CPUs 1,3 are offline": `cpus` said to be `what`; "" for none.
std::string cpus_are(const std::vector<int>& cpus, const std::string& what) {
  if (cpus.empty()) return "";
  return (cpus.size() == 1 ? "CPU " : "CPUs ") + format_cpu_list(cpus) +
         (cpus.size() == 1 ? " is " : " are ") + what;
}

std::vector<int> minus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  for (int cpu : a)
    if (std::find(b.begin(), b.end(), cpu) == b.end()) out.push_back(cpu);
  return out;
}

}  // namespace

std::string describe_unused_cpus(const std::vector<int>& present, const std::vector<int>& online,
                                 const std::vector<int>& usable) {
  const std::string offline = cpus_are(minus(present, online), "offline");
  const std::string barred =
      cpus_are(minus(minus(present, usable), minus(present, online)), "not allowed");
  return offline + (offline.empty() || barred.empty() ? "" : "; ") + barred;
}

std::string unused_cpus_note(const std::vector<int>& usable, const std::string& root) {
  std::string why;
  const auto present = read_text_file(under_root(root, "/sys/devices/system/cpu/present"), &why);
  const auto online = read_text_file(under_root(root, "/sys/devices/system/cpu/online"), &why);
  if (!present || !online) return "";
  try {
    return describe_unused_cpus(parse_cpu_list(trim(*present)), parse_cpu_list(trim(*online)),
                                usable);
  } catch (const std::invalid_argument&) {
    return "";
  }
}

}  // namespace wb
