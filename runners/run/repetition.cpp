#include "runners/run/repetition.h"

#include <time.h>

#include <algorithm>
#include <chrono>

#include "common/system/schedstat.h"

namespace wb {
namespace {

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Counters perturb what they count: every context switch of a counted task saves and restores its
// perf context, which slows a same-CPU round trip by a large share (docs/configs.md#mechanisms). So
// they are counted in a pass of their own, exactly as long as a repetition, before the timed
// repetitions, which run uncounted (docs/result-set.md#counters). False when the pass failed.
bool counting_pass(CaseState& cs, const RunOptions& opts, const Topology& topo) {
  CaseRecord& rec = cs.record;
  if (opts.events.empty() || !rec.repetitions.empty()) return true;
  RunOutcome counting = run_case(rec.spec, *cs.mech, topo, opts);
  if (!counting.ok) {
    fail_case(rec, counting.error);
    return false;
  }
  rec.counted = std::move(counting.pairs);
  return true;
}

// The CPUs whose schedstat a case's delta covers: its pairs', and a kernel case's cpuset.
std::vector<int> schedstat_cpus(const CaseSpec& spec) {
  std::vector<int> cpus = spec.by_kernel() ? spec.cpuset : std::vector<int>{};
  for (auto [w, e] : spec.cpu_pairs) cpus.insert(cpus.end(), {w, e});
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

// The traced attribution of a kept repetition, added to the case's (and its decisions to the
// set's side file).
void keep_trace(CaseState& cs, const WakeupTraceSummary& traced) {
  if (!cs.trace) cs.trace.emplace();
  if (cs.decisions && !traced.decisions.empty())
    cs.decisions->add_run(cs.record.spec.name, cs.trace->traced_runs, traced.decisions);
  cs.trace->add(traced);
}

// A pause of `d` (cut short by a signal: an interrupted run ends at once).
void settle(std::chrono::nanoseconds d) {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d);
  const timespec ts{static_cast<time_t>(s.count()), static_cast<long>((d - s).count())};
  ::nanosleep(&ts, nullptr);
}

}  // namespace

void fail_case(CaseRecord& rec, const std::string& why) {
  if (g_interrupted.load() && !rec.repetitions.empty()) return;
  rec.status = CaseStatus::kFailed;
  rec.reason = why;
}

double run_repetition(CaseState& cs, const RunOptions& base, const CaseTracer& tracer) {
  CaseRecord& rec = cs.record;
  const CaseSpec& spec = rec.spec;
  RunOptions opts = base;
  if (opts.timeout_s <= 0) opts.timeout_s = spec.timeout_s;
  if (!counting_pass(cs, opts, *tracer.topo)) return 0.0;
  opts.events.clear();
  // schedstat deltas over the case's CPUs, one per repetition, added up at the end.
  std::string why_not;
  const auto before = read_schedstat(&why_not);
  const int64_t cpu0 = thread_cpu_ns();
  const bool traced =
      tracer.session && spec.by_kernel() && start_trace(tracer, spec, cs.trace_error);
  RunOutcome out = run_case(spec, *cs.mech, *tracer.topo, opts);
  const auto ended = std::chrono::steady_clock::now();
  std::optional<WakeupTraceSummary> trace;
  if (traced) trace = finish_trace(tracer, cs.trace_error);
  rec.background_cpus = out.background_cpus;
  const int64_t cpu_ns = thread_cpu_ns() - cpu0;
  const auto after = read_schedstat(&why_not);
  cs.schedstat_window.push_back(before && after
                                    ? schedstat_delta(*before, *after, schedstat_cpus(spec))
                                    : nlohmann::json{{"unavailable", why_not}});
  if (out.ok && trace) keep_trace(cs, *trace);
  if (traced) settle(trace_settle(std::chrono::steady_clock::now() - ended));
  if (!out.ok) {
    fail_case(rec, out.error);
    return 0.0;
  }
  rec.repetitions.push_back(std::move(out.pairs));
  return static_cast<double>(cpu_ns);
}

}  // namespace wb
