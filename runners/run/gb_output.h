// wakebench's one boundary with Google Benchmark (docs/architecture.md#architecture): wakebench
// owns the loop, and its result sets carry Google Benchmark's JSON shape, `context` and
// `benchmarks`, so that Google Benchmark's tools/compare.py reads two result sets.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/schema/result_set.h"

namespace wb {

// Google Benchmark's "context": the date, the host, the executable and Google Benchmark's own
// description of the CPUs (count, MHz, scaling, caches, load average).
nlohmann::ordered_json gb_context(const std::string& executable);

// The "benchmarks" array, written as the run goes: each repetition's entry when it ends, so the
// array is the run's order (Google Benchmark itself writes a benchmark's repetitions together when
// its last one ends; compare.py groups entries by name either way). `family` is the case's index
// in the run.
class GbBenchmarks {
 public:
  // An "iteration" entry for the case's last repetition: iterations = its round trips, real_time =
  // its mean RTT in microseconds, cpu_time = the supervisor thread's CPU time per round trip
  // (`supervisor_cpu_ns` over the repetition: what Google Benchmark measures of the calling
  // thread), and the counters rtt_median_us, rtt_p99_us, wakeup_median_us.
  void repetition(const CaseRecord& rec, size_t family, double supervisor_cpu_ns);
  // The case is done: with every repetition ok, the mean, median, stddev and cv aggregates (two or
  // more repetitions); skipped or failed, one entry with error_occurred and its reason.
  void done(const CaseRecord& rec, size_t family);
  const nlohmann::ordered_json& json() const { return benchmarks_; }

 private:
  nlohmann::ordered_json entry(const CaseRecord& rec, size_t family, const std::string& suffix,
                               const char* run_type) const;
  nlohmann::ordered_json benchmarks_ = nlohmann::ordered_json::array();
  // Per case, per metric (real_time, cpu_time, the counters): its value in each repetition.
  std::map<size_t, std::vector<std::pair<std::string, std::vector<double>>>> values_;
};

}  // namespace wb
