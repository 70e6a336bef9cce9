#include "runners/run/gb_output.h"

#include <benchmark/benchmark.h>

#include <ctime>

#include "common/schema/stats.h"

namespace wb {

nlohmann::ordered_json gb_context(const std::string& executable) {
  const benchmark::CPUInfo& cpu = benchmark::CPUInfo::Get();
  nlohmann::ordered_json caches = nlohmann::ordered_json::array();
  for (const auto& c : cpu.caches)
    caches.push_back(
        {{"type", c.type}, {"level", c.level}, {"size", c.size}, {"num_sharing", c.num_sharing}});
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[40];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
  nlohmann::ordered_json j;
  j["date"] = date;
  j["host_name"] = benchmark::SystemInfo::Get().name;
  j["executable"] = executable;
  j["num_cpus"] = cpu.num_cpus;
  j["mhz_per_cpu"] = static_cast<int64_t>(cpu.cycles_per_second / 1e6);
  j["cpu_scaling_enabled"] = cpu.scaling == benchmark::CPUInfo::ENABLED;
  j["caches"] = caches;
  j["load_avg"] = cpu.load_avg;
  return j;
}

nlohmann::ordered_json GbBenchmarks::entry(const CaseRecord& rec, size_t family,
                                           const std::string& suffix, const char* run_type) const {
  nlohmann::ordered_json e;
  e["name"] = rec.spec.name + suffix;
  e["family_index"] = family;
  e["per_family_instance_index"] = 0;
  e["run_name"] = rec.spec.name;
  e["run_type"] = run_type;
  e["repetitions"] = rec.spec.repetitions;
  return e;
}

void GbBenchmarks::repetition(const CaseRecord& rec, size_t family, double supervisor_cpu_ns) {
  std::vector<int64_t> rtt, wake;
  for (const auto& p : rec.repetitions.back()) {
    rtt.insert(rtt.end(), p.rtt_ns.begin(), p.rtt_ns.end());
    wake.insert(wake.end(), p.wakeup_ns.begin(), p.wakeup_ns.end());
  }
  const SampleStats st = compute_stats(std::span<const int64_t>(rtt));
  const std::pair<const char*, double> metrics[] = {
      {"real_time", st.mean},
      {"cpu_time", supervisor_cpu_ns / static_cast<double>(rec.spec.round_trips)},
      {"rtt_median_us", st.median},
      {"rtt_p99_us", st.p99},
      {"wakeup_median_us", compute_stats(std::span<const int64_t>(wake)).median}};
  auto& values = values_[family];
  if (values.empty())
    for (const auto& [name, v] : metrics) values.push_back({name, {}});
  auto e = entry(rec, family, "", "iteration");
  e["repetition_index"] = rec.repetitions.size() - 1;
  e["threads"] = 1;
  e["iterations"] = rec.spec.round_trips;
  for (size_t m = 0; m < values.size(); ++m) {
    values[m].second.push_back(metrics[m].second / 1e3);  // microseconds
    e[values[m].first] = values[m].second.back();
  }
  e["time_unit"] = "us";
  benchmarks_.push_back(e);
}

void GbBenchmarks::done(const CaseRecord& rec, size_t family) {
  if (rec.status != CaseStatus::kOk) {
    auto e = entry(rec, family, "", "iteration");
    e["repetition_index"] = rec.repetitions.size();
    e["threads"] = 1;
    e["error_occurred"] = true;
    e["error_message"] = rec.reason;
    // As Google Benchmark writes a failed run: zero times, so compare.py can read every entry.
    e["iterations"] = 0;
    e["real_time"] = 0.0;
    e["cpu_time"] = 0.0;
    e["time_unit"] = "us";
    benchmarks_.push_back(e);
    return;
  }
  if (rec.repetitions.size() < 2) return;  // Google Benchmark aggregates two or more
  for (std::string agg : {"mean", "median", "stddev", "cv"}) {
    auto e = entry(rec, family, "_" + agg, "aggregate");
    e["threads"] = 1;
    e["aggregate_name"] = agg;
    e["aggregate_unit"] = agg == "cv" ? "percentage" : "time";
    e["iterations"] = rec.repetitions.size();
    for (const auto& [name, v] : values_[family]) {
      const SampleStats s = compute_stats(v);  // stddev over n - 1, as Google Benchmark's
      e[name] = agg == "mean"     ? s.mean
                : agg == "median" ? s.median
                : agg == "stddev" ? s.stddev
                : s.mean != 0     ? s.stddev / s.mean
                                  : 0.0;
    }
    e["time_unit"] = "us";
    benchmarks_.push_back(e);
  }
}

}  // namespace wb
