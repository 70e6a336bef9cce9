#include "common/schema/result_set.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "common/schema/blocked.h"
#include "common/schema/histogram.h"
#include "common/schema/stats.h"

namespace wb {

namespace {

// Where the wakee of one round trip ran relative to the waker (docs/result-set.md#observed):
// a placement class id, or "unknown" for a CPU outside the topology.
std::string round_trip_class(const Topology& topo, int waker, int wakee) {
  if (!topo.find(waker) || !topo.find(wakee)) return "unknown";
  return std::string(class_id(classify(topo, waker, wakee)));
}

nlohmann::ordered_json observed_json(const CaseRecord& rec, const Topology& topo) {
  std::map<std::string, int64_t> histogram;
  std::map<int, int64_t> waker_cpus, wakee_cpus;
  int64_t waker_migrations = 0, wakee_migrations = 0;
  for (const auto& rep : rec.repetitions)
    for (const auto& pair : rep) {
      for (size_t k = 0; k < pair.waker_cpu.size(); ++k) {
        const int w = pair.waker_cpu[k], e = pair.wakee_cpu[k];
        ++histogram[round_trip_class(topo, w, e)];
        ++waker_cpus[w];
        ++wakee_cpus[e];
        if (k > 0) {
          waker_migrations += pair.waker_cpu[k - 1] != w;
          wakee_migrations += pair.wakee_cpu[k - 1] != e;
        }
      }
    }
  auto cpu_map = [](const std::map<int, int64_t>& m) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (auto [cpu, n] : m) j[std::to_string(cpu)] = n;
    return j;
  };
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  for (PlacementClass c : kAllClasses)  // every class, in order, so tables line up
    h[std::string(class_id(c))] =
        histogram.count(std::string(class_id(c))) ? histogram[std::string(class_id(c))] : 0;
  if (histogram.count("unknown")) h["unknown"] = histogram["unknown"];
  return {{"histogram", h},
          {"cpus", {{"waker", cpu_map(waker_cpus)}, {"wakee", cpu_map(wakee_cpus)}}},
          {"migrations", {{"waker", waker_migrations}, {"wakee", wakee_migrations}}},
          {"start_cpus",
           {{"waker", rec.spec.cpu_pairs.empty() ? -1 : rec.spec.cpu_pairs[0].first},
            {"wakee", rec.spec.cpu_pairs.empty() ? -1 : rec.spec.cpu_pairs[0].second}}},
          {"cpuset", rec.spec.cpuset}};
}

// Per side, per measured round trip (per transaction for binder-like; for K pairs the per-pair
// average): each side's totals over every repetition and stream divided by the round trips they
// cover. A count that was never scheduled onto a counter (NaN) is null.
nlohmann::ordered_json counters_json(const CaseRecord& rec) {
  const CaseCounters c =
      rec.counted.empty() ? sum_counters(rec.repetitions) : sum_counters({rec.counted});
  nlohmann::ordered_json j;
  for (Role r : {Role::kWaker, Role::kWakee}) {
    nlohmann::ordered_json side = nlohmann::ordered_json::object();
    for (const auto& [event, total] : c.totals[static_cast<int>(r)]) {
      const double v = total / static_cast<double>(std::max<int64_t>(c.round_trips, 1));
      side[event] = std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
    }
    j[std::string(role_id(r))] = side;
  }
  nlohmann::ordered_json unavailable = nlohmann::ordered_json::object();
  for (const auto& [event, reason] : c.unavailable) unavailable[event] = reason;
  j["unavailable"] = unavailable;
  return j;
}

// Round trips (transactions) per second of one repetition: all its streams' round trips over the
// time from the first one's start to the last one's end.
std::pair<int64_t, int64_t> rep_span(const std::vector<PairSamples>& rep) {
  int64_t begin = INT64_MAX, end = INT64_MIN, n = 0;
  for (const auto& s : rep) {
    begin = std::min(begin, s.begin_ns);
    end = std::max(end, s.end_ns);
    n += static_cast<int64_t>(s.rtt_ns.size());
  }
  return {n, end > begin ? end - begin : 0};
}

// n per span in ns as a rate per second; null when the span is unknown (zero): no rate was
// measured, and 0 would read as one.
nlohmann::ordered_json rate(int64_t n, int64_t span) {
  if (span <= 0) return nullptr;
  return static_cast<double>(n) * 1e9 / static_cast<double>(span);
}

// One repetition: every RTT statistic under its own name, the wakeup's as "wakeup-<stat>", tps,
// and both histograms (common/schema/histogram.h), so that compare can test every metric it offers
// and report can draw the distributions.
nlohmann::ordered_json repetition_json(const std::vector<PairSamples>& rep) {
  std::vector<int64_t> rtt, wake;
  for (const auto& pair : rep) {
    rtt.insert(rtt.end(), pair.rtt_ns.begin(), pair.rtt_ns.end());
    wake.insert(wake.end(), pair.wakeup_ns.begin(), pair.wakeup_ns.end());
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  // The statistics compare tests, under "<prefix><stat>" (stddev and MdAPE are not among them).
  const auto put = [&j](const std::string& prefix, const std::vector<int64_t>& v) {
    const nlohmann::ordered_json st = to_json(compute_stats(std::span<const int64_t>(v)));
    for (const auto& [k, x] : st.items())
      if (k != "stddev" && k != "mdape_pct") j[prefix + k] = x;
  };
  put("", rtt);
  if (!wake.empty()) put("wakeup-", wake);
  const auto [n, span] = rep_span(rep);
  j["tps"] = rate(n, span);
  Histogram rh, wh;
  rh.add(std::span<const int64_t>(rtt));
  wh.add(std::span<const int64_t>(wake));
  j["rtt_hist"] = rh.to_json();
  j["wakeup_hist"] = wh.to_json();
  return j;
}

// --ab: repetition r's {"round", "read_back"} (docs/result-set.md#ab), when the run recorded one.
void add_ab_repetition(const CaseRecord& rec, std::size_t r, nlohmann::ordered_json& rep) {
  if (r >= rec.ab.size()) return;
  nlohmann::ordered_json read_back = nlohmann::ordered_json::object();
  for (const auto& [key, value] : rec.ab[r].read_back) read_back[key] = value;
  rep["ab"] = {{"round", rec.ab[r].round}, {"read_back", read_back}};
}

// docs/result-set.md#classes: a kernel-placed repetition's round trips split by their observed
// class, each with its count, mean, median and histogram; the classes it has, in kAllClasses
// order, then "unknown".
nlohmann::ordered_json repetition_classes_json(const std::vector<PairSamples>& rep,
                                               const Topology& topo) {
  std::map<std::string, std::vector<int64_t>> rtt;
  for (const auto& pair : rep)
    for (size_t k = 0; k < pair.rtt_ns.size() && k < pair.waker_cpu.size(); ++k)
      rtt[round_trip_class(topo, pair.waker_cpu[k], pair.wakee_cpu[k])].push_back(pair.rtt_ns[k]);
  std::vector<std::string> order;
  for (PlacementClass c : kAllClasses) order.emplace_back(class_id(c));
  order.emplace_back("unknown");
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const std::string& cls : order) {
    const auto it = rtt.find(cls);
    if (it == rtt.end()) continue;
    const SampleStats st = compute_stats(std::span<const int64_t>(it->second));
    Histogram h;
    h.add(std::span<const int64_t>(it->second));
    j[cls] = {{"round_trips", st.count},
              {"mean_ns", st.mean},
              {"median_ns", st.median},
              {"hist", h.to_json()}};
  }
  return j;
}

// {"waker", "wakee"} of per-side shares, each null when not counted; null when neither is.
nlohmann::ordered_json sides_json(const std::array<std::optional<double>, 2>& v) {
  if (!v[0] && !v[1]) return nullptr;
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (Role side : {Role::kWaker, Role::kWakee}) {
    const auto& x = v[static_cast<int>(side)];
    j[std::string(role_id(side))] =
        x ? nlohmann::ordered_json(*x) : nlohmann::ordered_json(nullptr);
  }
  return j;
}

// docs/result-set.md#blocked and #classes: adds to repetition `r` its waits that blocked and its
// preemptions per round trip of each side (null when its mechanism's waits do not sleep), whether
// it is marked, and under kernel placement its round trips by observed class.
void add_wakeup_facts(nlohmann::ordered_json& r, const std::vector<PairSamples>& rep,
                      const CaseSpec& spec, const Topology& topo) {
  const SwitchShares s = switches_per_round_trip(rep);
  r["blocked"] = sides_json(s.blocked);
  r["preempted"] = sides_json(s.preempted);
  r["marked"] = repetition_marked(s, marking_exempt_side(spec.params));
  if (spec.by_kernel()) r["classes"] = repetition_classes_json(rep, topo);
}

// The case's repetitions that repetition_marked() marks (docs/result-set.md#blocked).
int64_t marked_repetitions(const CaseRecord& rec) {
  int64_t n = 0;
  const auto exempt = marking_exempt_side(rec.spec.params);
  for (const auto& rep : rec.repetitions)
    n += repetition_marked(switches_per_round_trip(rep), exempt);
  return n;
}

// `marking_exempt`: {side: why} for the side the marking rule leaves out, else null.
nlohmann::ordered_json marking_exempt_json(const Params& p) {
  const auto exempt = marking_exempt_side(p);
  if (!exempt) return nullptr;
  return {{std::string(role_id(exempt->side)), exempt->why}};
}

}  // namespace

namespace {

// The case's waker and wakee CPUs (its first pair, and every pair when there are more), else null.
nlohmann::ordered_json cpus_json(const CaseSpec& s) {
  if (s.cpu_pairs.empty()) return nullptr;
  nlohmann::ordered_json j = {{"waker", s.cpu_pairs[0].first}, {"wakee", s.cpu_pairs[0].second}};
  if (s.cpu_pairs.size() > 1) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (auto [w, e] : s.cpu_pairs) all.push_back({{"waker", w}, {"wakee", e}});
    j["pairs"] = all;
  }
  return j;
}

// The case as it was asked for: what runs, where, beside which background.
nlohmann::ordered_json spec_json(const CaseRecord& rec) {
  const CaseSpec& s = rec.spec;
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["mechanism"] = s.mechanism;
  j["mode"] = std::string(mode_id(s.mode));
  j["placement"] = s.placement;
  j["cpus"] = cpus_json(s);
  if (s.by_kernel()) j["cpuset"] = s.cpuset;
  j["wake_flags"] = std::string(wake_flags_id(rec.wake_flags));
  j["params"] = to_json(s.params);
  if (s.params.background == "none")
    j["background"] = nullptr;
  else
    j["background"] = {{"knob", s.params.background},
                       {"cpus", rec.background_cpus},
                       {"busy_ns", duty_busy_ns(s.params)},
                       {"period_ns", duty_period_ns(s.params)}};
  return j;
}

// What an ok case measured, into `j`: the statistics over every repetition, each repetition,
// the counters, where the kernel placed the pairs, the trace and schedstat.
void add_measured(const CaseRecord& rec, const Topology& topo, nlohmann::ordered_json& j) {
  const CaseSpec& s = rec.spec;
  std::vector<int64_t> rtt_all, wake_all;
  nlohmann::ordered_json reps = nlohmann::ordered_json::array();
  int64_t all_n = 0, all_span = 0;
  for (const auto& rep : rec.repetitions) {
    reps.push_back(repetition_json(rep));
    add_ab_repetition(rec, reps.size() - 1, reps.back());
    add_wakeup_facts(reps.back(), rep, s, topo);
    // A repetition whose span is unknown adds neither its round trips nor time.
    if (const auto [rep_n, span] = rep_span(rep); span > 0) {
      all_n += rep_n;
      all_span += span;
    }
    for (const auto& pair : rep) {
      rtt_all.insert(rtt_all.end(), pair.rtt_ns.begin(), pair.rtt_ns.end());
      wake_all.insert(wake_all.end(), pair.wakeup_ns.begin(), pair.wakeup_ns.end());
    }
  }
  j["rtt_ns"] = to_json(compute_stats(std::span<const int64_t>(rtt_all)));
  j["tps"] = rate(all_n, all_span);
  j["wakeup_ns"] = to_json(compute_stats(std::span<const int64_t>(wake_all)));
  j["repetitions"] = reps;
  j["marked_repetitions"] = marked_repetitions(rec);
  j["marking_exempt"] = marking_exempt_json(s.params);
  j["counters"] = counters_json(rec);
  j["observed"] = s.by_kernel() ? observed_json(rec, topo) : nlohmann::ordered_json(nullptr);
  j["trace"] = rec.trace;
  j["schedstat"] = rec.schedstat;
}

}  // namespace

nlohmann::ordered_json case_json(const CaseRecord& rec, const Topology& topo) {
  nlohmann::ordered_json j = spec_json(rec);
  j["status"] = std::string(status_id(rec.status));
  j["reason"] = rec.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(rec.reason);
  j["round_trips"] = rec.spec.round_trips;
  j["warmup"] = rec.spec.warmup;
  if (rec.status != CaseStatus::kOk || rec.repetitions.empty()) {
    for (const char* key : {"rtt_ns", "tps", "wakeup_ns"}) j[key] = nullptr;
    j["repetitions"] = nlohmann::json::array();
    j["marked_repetitions"] = 0;
    for (const char* key : {"counters", "observed", "trace"}) j[key] = nullptr;
    return j;
  }
  add_measured(rec, topo, j);
  return j;
}

}  // namespace wb
