// `wakebench run`: config -> cases -> Google Benchmark -> result set -> summary.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "analysis/predict.h"
#include "benchmarks/registry.h"
#include "common/config.h"
#include "common/environment.h"
#include "common/idle_latency.h"
#include "common/perf.h"
#include "common/placement.h"
#include "common/procfs.h"
#include "common/result_set.h"
#include "common/stats.h"
#include "common/sys.h"
#include "common/wakeup_trace.h"
#include "runners/commands.h"
#include "runners/summary.h"

namespace wb {
namespace {

struct RunArgs {
  std::string config;
  std::string out;
  int pairs_per_class = 1;
  double case_timeout_s = 0;  // 0: the config's timeout_s
  std::string events;         // --events: comma-separated libpfm4 event strings
  bool require_events = false;
  std::optional<int> idle_latency_us;  // --idle-latency-us
  std::string show;                    // --show: a counter instead of the RTT in the summary
  bool trace_wakeups = false;          // --trace-wakeups: attribute kernel cases' wakeup paths
  std::vector<std::string> benchmark_flags;
};

// One case while the run goes: what Google Benchmark calls produced, and the record kept.
struct CaseState {
  const Mechanism* mech = nullptr;
  CaseRecord record;
  bool ran = false;  // the benchmark function was called at least once (not filtered out)
  std::vector<std::vector<PairSamples>> calls;   // every completed call, until reported
  bool counted = false;                          // the counting pass ran (record.counted)
  std::vector<nlohmann::json> schedstat_window;  // one delta per call
  // --trace-wakeups: one attribution per entry of `calls` (nullopt: that call was not traced),
  // kept alongside them; the kept repetitions' ones add up into `trace`.
  std::vector<std::optional<WakeupTraceSummary>> call_traces;
  std::optional<WakeupTraceSummary> trace;
  std::string trace_error;  // why a call's trace could not be recorded or read
};

std::string default_config_path() {
  const std::string rel = "configs/quick.json";
  if (std::filesystem::exists(rel)) return rel;
  // Run from elsewhere: the configs beside the source tree the binary was built from.
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (auto dir = exe.parent_path(); !ec && !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path())
    if (std::filesystem::exists(dir / rel)) return (dir / rel).string();
  return rel;
}

std::string default_out_path(const std::string& host) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  return "results/" + host + "-" + stamp + ".json";
}

std::string fmt_duration(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

// Captures Google Benchmark's JSON (context + benchmarks) in memory, hands each finished
// repetition's samples to its case, and prints one progress line per case on stderr.
class Reporter : public benchmark::JSONReporter {
 public:
  Reporter(std::vector<CaseState>& cases, size_t total) : cases_(cases), total_(total) {
    SetOutputStream(&json_);
    SetErrorStream(&json_);
    for (size_t i = 0; i < cases_.size(); ++i) by_name_[cases_[i].record.spec.name] = i;
    for (const auto& c : cases_)
      if (c.record.spec.skip_reason.empty())
        work_left_ += static_cast<double>(c.record.spec.round_trips * c.record.spec.repetitions);
  }
  std::string json() const { return json_.str(); }

  void ReportRuns(const std::vector<Run>& runs) override {
    JSONReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration) continue;
      auto it = by_name_.find(run.run_name.function_name);
      if (it == by_name_.end()) continue;
      CaseState& cs = cases_[it->second];
      if (run.error_occurred) continue;  // status and reason were set by the case itself
      // The call that made this repetition is the first with its iteration count; earlier ones
      // were Google Benchmark's iteration estimates (only with --benchmark_min_time).
      for (size_t k = 0; k < cs.calls.size(); ++k)
        if (!cs.calls[k].empty() &&
            static_cast<int64_t>(cs.calls[k][0].rtt_ns.size()) == run.iterations) {
          cs.record.repetitions.push_back(std::move(cs.calls[k]));
          cs.calls.erase(cs.calls.begin(), cs.calls.begin() + static_cast<long>(k) + 1);
          if (k < cs.call_traces.size()) {
            if (const auto& t = cs.call_traces[k]) {
              if (!cs.trace) cs.trace.emplace();
              cs.trace->add(*t);
            }
            cs.call_traces.erase(cs.call_traces.begin(),
                                 cs.call_traces.begin() + static_cast<long>(k) + 1);
          }
          break;
        }
    }
    if (runs.empty()) return;
    auto it = by_name_.find(runs.front().run_name.function_name);
    if (it == by_name_.end() || done_.count(it->second)) return;
    done_.insert(it->second);
    progress(cases_[it->second]);
  }

 private:
  void progress(const CaseState& cs) {
    const CaseRecord& r = cs.record;
    std::string what;
    if (r.status == "ok" && !r.repetitions.empty()) {
      std::vector<int64_t> all;
      for (const auto& rep : r.repetitions)
        for (const auto& p : rep) all.insert(all.end(), p.rtt_ns.begin(), p.rtt_ns.end());
      const SampleStats st = compute_stats(std::span<const int64_t>(all));
      char buf[96];
      std::snprintf(buf, sizeof buf, "ok      median %8.2f us  p99 %8.2f us", st.median / 1e3,
                    st.p99 / 1e3);
      what = buf;
    } else {
      what = r.status + ": " + r.reason;
    }
    if (r.spec.skip_reason.empty())
      work_done_ += static_cast<double>(r.spec.round_trips * r.spec.repetitions);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string eta;
    if (work_done_ > 0 && work_left_ > work_done_)
      eta = "  ETA " + fmt_duration(elapsed * (work_left_ - work_done_) / work_done_);
    std::fprintf(stderr, "[%zu/%zu] %-40s %s%s\n", ++reported_, total_, r.spec.name.c_str(),
                 what.c_str(), eta.c_str());
  }

  std::vector<CaseState>& cases_;
  size_t total_;
  size_t reported_ = 0;
  std::ostringstream json_;
  std::map<std::string, size_t> by_name_;
  std::set<size_t> done_;
  double work_left_ = 0, work_done_ = 0;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

void on_signal(int) { g_interrupted.store(true); }

// Adds up the per-call schedstat deltas of one case (numbers add; anything else is kept from the
// first call).
nlohmann::json sum_schedstat(const std::vector<nlohmann::json>& parts) {
  nlohmann::json total = parts.front();
  for (size_t i = 1; i < parts.size(); ++i) {
    const auto flat = parts[i].flatten();
    auto acc = total.flatten();
    for (const auto& [k, v] : flat.items())
      if (v.is_number() && acc.contains(k) && acc[k].is_number())
        acc[k] = acc[k].get<double>() + v.get<double>();
    total = acc.unflatten();
  }
  return total;
}

// --trace-wakeups around one run_case of a kernel case: the session's buffer is sized for the
// call, started right before and stopped right after; the text is attributed at once (the
// buffers are cleared for the next call). nullopt, with cs.trace_error set, when it fails.
struct CaseTracer {
  WakeupTraceSession* session = nullptr;
  const Topology* topo = nullptr;
};

std::optional<WakeupTraceSummary> traced_run(const CaseTracer& tr, CaseState& cs,
                                             const CaseSpec& spec, const RunOptions& opts,
                                             RunOutcome& out) {
  const int tid = static_cast<int>(::syscall(SYS_gettid));
  const int64_t streams = static_cast<int64_t>(std::max<size_t>(1, concurrent_pairs(spec).size()));
  const int64_t kb = WakeupTraceSession::buffer_kb_for((spec.round_trips + spec.warmup) * streams,
                                                       static_cast<int>(spec.cpuset.size()));
  bool started = false;
  try {
    tr.session->start(tid, spec.cpuset, kb);
    started = true;
  } catch (const std::exception& e) {
    cs.trace_error = e.what();
  }
  out = run_case(spec, *cs.mech, *tr.topo, opts);
  if (!started) return std::nullopt;
  try {
    int64_t lost = 0;
    const std::string text = tr.session->stop(&lost);
    WakeupTraceOptions wo;
    wo.supervisor_pid = tid;
    const Topology& topo = *tr.topo;
    wo.class_of = [&topo](int waker, int target) {
      return std::string(class_id(classify(topo, waker, target)));
    };
    WakeupTraceSummary s = attribute_wakeups(text, wo);
    s.lost += lost;
    s.traced_runs = 1;
    return s;
  } catch (const std::exception& e) {
    cs.trace_error = e.what();
    return std::nullopt;
  }
}

// Ends a repetition that measured nothing. Google Benchmark checks that every repetition of a
// case reports the same iterations (statistics.cc ComputeStats, when two or more succeeded): an
// error raised inside its loop books max_iterations, one raised before the loop books 0. Raised
// before the loop, a failure after two good repetitions (a counting pass refused by
// --require-events, a partner killed in repetition 3) aborted the whole run.
void skip_repetition(benchmark::State& state, const std::string& reason) {
  for (auto _ : state) {
    state.SkipWithError(reason.c_str());
    break;
  }
}

void run_benchmark(benchmark::State& state, CaseState& cs, const RunOptions& base,
                   const CaseTracer& tracer) {
  CaseRecord& rec = cs.record;
  cs.ran = true;
  if (g_interrupted.load()) {
    skip_repetition(state, "interrupted");
    return;
  }
  if (!rec.spec.skip_reason.empty()) {
    rec.status = "skipped";
    rec.reason = rec.spec.skip_reason;
    skip_repetition(state, rec.reason);
    return;
  }
  // A failed case stays failed, with its first reason: its later repetitions do not run.
  if (rec.status == "failed") {
    skip_repetition(state, rec.reason);
    return;
  }
  CaseSpec spec = rec.spec;
  spec.round_trips = state.max_iterations;
  RunOptions opts = base;
  if (opts.timeout_s <= 0) opts.timeout_s = spec.timeout_s;
  // Counters perturb what they count: every context switch of a counted task saves and restores
  // its perf context (a same-CPU pipe round trip takes +65% here). So they are counted in a pass
  // of their own, as long as one repetition, before the timed repetitions, which run uncounted.
  if (!opts.events.empty()) {
    if (!cs.counted) {
      cs.counted = true;
      RunOutcome counting = run_case(spec, *cs.mech, *tracer.topo, opts);
      if (!counting.ok) {
        rec.status = "failed";
        rec.reason = counting.error;
        skip_repetition(state, rec.reason);
        return;
      }
      rec.counted = std::move(counting.pairs);
    }
    opts.events.clear();
  }
  // schedstat deltas over the case's CPUs: the first call opens the window, each later call
  // extends it, so the record covers every repetition.
  std::string why_not;
  auto before = read_schedstat(&why_not);
  RunOutcome out;
  std::optional<WakeupTraceSummary> traced;
  const bool trace_this = tracer.session && spec.kernel;
  if (trace_this)
    traced = traced_run(tracer, cs, spec, opts, out);
  else
    out = run_case(spec, *cs.mech, *tracer.topo, opts);
  rec.background_cpus = out.background_cpus;
  auto after = read_schedstat(&why_not);
  if (before && after) {
    std::vector<int> cpus = spec.kernel ? spec.cpuset : std::vector<int>{};
    for (auto [w, e] : spec.pairs) cpus.insert(cpus.end(), {w, e});
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    cs.schedstat_window.push_back(schedstat_delta(*before, *after, cpus));
  } else {
    rec.schedstat = {{"unavailable", why_not}};
  }
  if (!out.ok) {
    rec.status = "failed";
    rec.reason = out.error;
    skip_repetition(state, rec.reason);
    return;
  }
  // Google Benchmark's time is the measured round trips, replayed as manual iteration times
  // (mean over concurrent pairs), so its real_time is the mean RTT and tools/compare.py works.
  size_t k = 0;
  std::vector<int64_t> rtt;
  for (auto _ : state) {
    double sum = 0;
    for (const auto& p : out.pairs) sum += static_cast<double>(p.rtt_ns[k]);
    state.SetIterationTime(sum / static_cast<double>(out.pairs.size()) / 1e9);
    ++k;
  }
  for (const auto& p : out.pairs) rtt.insert(rtt.end(), p.rtt_ns.begin(), p.rtt_ns.end());
  std::vector<int64_t> wake;
  for (const auto& p : out.pairs) wake.insert(wake.end(), p.wakeup_ns.begin(), p.wakeup_ns.end());
  const SampleStats st = compute_stats(std::span<const int64_t>(rtt));
  const SampleStats ws = compute_stats(std::span<const int64_t>(wake));
  state.counters["rtt_median_us"] = st.median / 1e3;
  state.counters["rtt_p99_us"] = st.p99 / 1e3;
  state.counters["wakeup_median_us"] = ws.median / 1e3;
  cs.calls.push_back(std::move(out.pairs));
  if (trace_this) {
    cs.call_traces.resize(cs.calls.size() - 1);
    cs.call_traces.push_back(std::move(traced));
  }
}

// Google Benchmark's filter semantics (a leading '-' negates) over our case names, to count the
// cases a run will report.
size_t count_selected(const std::vector<CaseState>& cases, const std::string& filter) {
  if (filter.empty() || filter == "all" || filter == ".") return cases.size();
  const bool negate = filter[0] == '-';
  std::regex re;
  try {
    re = std::regex(negate ? filter.substr(1) : filter);
  } catch (const std::regex_error&) {
    return cases.size();
  }
  size_t n = 0;
  for (const auto& c : cases) n += std::regex_search(c.record.spec.name, re) != negate;
  return n;
}

void run_command(const RunArgs& args) {
  const std::string config_path = args.config.empty() ? default_config_path() : args.config;
  const Config config = load_config(config_path);
  const Topology topo = Topology::from_system();
  std::vector<std::string> known;
  for (const Mechanism* m : all_mechanisms()) known.emplace_back(m->id());
  if (args.pairs_per_class < 1) throw std::invalid_argument("--pairs-per-class must be >= 1");
  // Up front: a run that cannot trace fails before it measures anything (one line, exit 2).
  std::unique_ptr<WakeupTraceSession> trace_session;
  if (args.trace_wakeups) trace_session = std::make_unique<WakeupTraceSession>();
  const CaseTracer tracer{trace_session.get(), &topo};
  std::vector<CaseState> cases;
  for (CaseSpec& spec : expand_cases(config, topo, known, args.pairs_per_class)) {
    CaseState cs;
    cs.mech = find_mechanism(spec.mechanism);
    if (spec.skip_reason.empty())
      if (auto why = cs.mech->skip_reason(spec, topo)) spec.skip_reason = *why;
    cs.record.spec = std::move(spec);
    cs.record.wake_flags = cs.mech->wake_flags();
    cases.push_back(std::move(cs));
  }

  // Google Benchmark flags given on the command line override the config.
  std::vector<std::string> gb_args = {"wakebench"};
  bool user_repetitions = false, user_min_time = false;
  std::string filter;
  for (const auto& f : args.benchmark_flags) {
    if (f.rfind("--benchmark_", 0) != 0)
      throw std::invalid_argument("unknown option " + f + " (see wakebench run --help)");
    user_repetitions |= f.rfind("--benchmark_repetitions", 0) == 0;
    user_min_time |= f.rfind("--benchmark_min_time", 0) == 0;
    if (f.rfind("--benchmark_filter=", 0) == 0) filter = f.substr(19);
    gb_args.push_back(f);
  }
  std::vector<char*> gb_argv;
  for (auto& a : gb_args) gb_argv.push_back(a.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (gb_argc > 1)
    throw std::invalid_argument(std::string("unrecognized Google Benchmark flag ") + gb_argv[1]);

  RunOptions opts;
  opts.timeout_s = args.case_timeout_s;
  opts.events = default_events();
  if (args.events == "none") {
    opts.events.clear();  // no counters at all: what runners/overhead.sh compares against
  } else if (!args.events.empty()) {
    opts.events.clear();
    std::stringstream ss(args.events);
    for (std::string e; std::getline(ss, e, ',');)
      if (!e.empty()) opts.events.push_back(e);
  }
  opts.require_events = args.require_events;
  // --require-events on a machine that cannot count them: one line before anything runs (what this
  // process may open, every task may: same user, same perf_event_paranoid, same PMU).
  if (opts.require_events) require_events(PerfCounters(opts.events).unavailable(), "this machine");
  if (!args.show.empty() &&
      std::find(opts.events.begin(), opts.events.end(), args.show) == opts.events.end()) {
    std::string list;
    for (const auto& e : opts.events) list += (list.empty() ? "" : ",") + e;
    throw std::invalid_argument("--show " + args.show + ": not among the counted events (" + list +
                                ")");
  }
  for (auto& cs : cases) {
    const CaseSpec& s = cs.record.spec;
    auto* b = benchmark::RegisterBenchmark(
        s.name.c_str(),
        [&cs, &opts, &tracer](benchmark::State& st) { run_benchmark(st, cs, opts, tracer); });
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (!user_min_time) b->Iterations(s.round_trips);
    if (!user_repetitions) b->Repetitions(s.repetitions);
  }

  const std::string host = topo.source().substr(topo.source().find(':') + 1);
  const std::string out_path = args.out.empty() ? default_out_path(host) : args.out;
  struct sigaction sa {};
  sa.sa_handler = on_signal;  // no SA_RESTART: the supervisor's poll returns EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const size_t selected = count_selected(cases, filter);
  std::fprintf(stderr, "wakebench: %zu cases from %s on %s (%zu CPUs: %s)\n", selected,
               config_path.c_str(), host.c_str(), topo.cpus().size(), topo.source().c_str());
  std::vector<int> measured;
  for (const auto& cs : cases)
    for (auto [w, e] : cs.record.spec.pairs) measured.insert(measured.end(), {w, e});
  std::sort(measured.begin(), measured.end());
  measured.erase(std::unique(measured.begin(), measured.end()), measured.end());
  // Held until the run returns: the CPUs stay out of idle states deeper than the limit.
  std::optional<IdleLatencyGuard> idle_guard;
  if (args.idle_latency_us) idle_guard.emplace(*args.idle_latency_us);
  const nlohmann::json env = capture_environment({measured, config.text, args.idle_latency_us});
  for (const auto& w : environment_warnings(env)) std::fprintf(stderr, "warning: %s\n", w.c_str());

  Reporter reporter(cases, selected);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  const bool interrupted = g_interrupted.load();

  nlohmann::ordered_json rs;
  rs["schema"] = kResultSchema;
  rs["schema_version"] = kResultSchemaVersion;
  rs["complete"] = !interrupted;
  nlohmann::ordered_json gb;
  try {
    gb = nlohmann::ordered_json::parse(reporter.json());
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("cannot read Google Benchmark's report: ") + e.what());
  }
  rs["context"] = gb.value("context", nlohmann::ordered_json::object());
  rs["benchmarks"] = gb.value("benchmarks", nlohmann::ordered_json::array());
  rs["environment"] = env;
  auto topo_summary = topology_json(topo, choose_pairs(topo, args.pairs_per_class));
  topo_summary["xml"] = topo.xml();
  rs["topology"] = topo_summary;
  rs["config"] = {{"path", config_path}, {"name", config.name}, {"document", config.json}};
  rs["predictions"] = nullptr;
  nlohmann::ordered_json out_cases = nlohmann::ordered_json::array();
  for (const auto& cs : cases) {
    if (!cs.ran) continue;  // filtered out
    if (interrupted && cs.record.status == "ok" && cs.record.repetitions.empty()) continue;
    CaseRecord rec = cs.record;
    if (!cs.schedstat_window.empty()) rec.schedstat = sum_schedstat(cs.schedstat_window);
    if (trace_session && rec.spec.kernel && rec.status == "ok") {
      if (cs.trace && cs.trace_error.empty()) {
        std::vector<std::string> classes;
        for (PlacementClass c : kAllClasses) classes.emplace_back(class_id(c));
        rec.trace = trace_json(*cs.trace, classes);
      } else {
        rec.trace = {
            {"unavailable", cs.trace_error.empty() ? std::string("not traced") : cs.trace_error}};
      }
    }
    out_cases.push_back(case_json(rec, topo));
  }
  rs["cases"] = out_cases;
  // The predictor reads only the result set (data flows one way); its answer goes into the set.
  std::string predictions_text;
  try {
    const nlohmann::json predictions = predict_for_results(nlohmann::json(rs));
    predictions_text = render_results_text(predictions);
    rs["predictions"] = predictions;
  } catch (const std::exception& e) {
    rs["predictions"] = {{"unavailable", e.what()}};
    predictions_text = std::string("predictions unavailable: ") + e.what() + "\n";
  }
  write_json_atomic(out_path, rs);

  const nlohmann::json plain(rs);
  std::fprintf(stderr, "\n%s\n%s\n%s", summary_table(plain, args.show).c_str(),
               predictions_text.c_str(), claims_table(plain).c_str());
  std::printf("%s\n", out_path.c_str());
  if (interrupted) {
    std::fprintf(stderr, "wakebench: interrupted; the result set is marked incomplete\n");
    throw ExitCode{130};
  }
}

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* sub = app.add_subcommand("run", "run a suite and write a result set");
  sub->add_option("--config", args->config, "suite (default configs/quick.json)");
  sub->add_option("--out", args->out, "result set path (default results/<host>-<UTC time>.json)");
  sub->add_option("--pairs-per-class", args->pairs_per_class,
                  "CPU pairs per placement class, spread over cores / LLCs / nodes")
      ->check(CLI::PositiveNumber);
  sub->add_option("--case-timeout", args->case_timeout_s,
                  "seconds one repetition of a case may take before it fails (default: the "
                  "config's timeout_s, 60)")
      ->check(CLI::Range(0.001, 1e6));
  sub->add_option("--events", args->events,
                  "comma-separated perf events for both sides (any libpfm4 name; default: cycles, "
                  "instructions, cache-misses, LLC misses, branch-misses, context-switches, "
                  "cpu-migrations, task-clock, page-faults; none: count nothing)");
  sub->add_flag("--require-events", args->require_events,
                "fail a case when one of its events cannot be counted (default: note it)");
  sub->add_option("--idle-latency-us", args->idle_latency_us,
                  "hold every CPU out of idle states whose exit latency exceeds N us while the "
                  "run lasts (/dev/cpu_dma_latency; needs root); recorded in the result set")
      ->check(CLI::Range(0, 2000000));
  sub->add_option("--show", args->show,
                  "summary cells show this counter per round trip, waker / wakee (e.g. "
                  "context-switches, cycles), instead of the RTT");
  sub->add_flag("--trace-wakeups", args->trace_wakeups,
                "kernel-placement cases: record the pair's sched trace events in a private tracefs "
                "instance and attribute each wakeup to the CPU selection or to a try_to_wake_up "
                "bypass (needs root and tracefs; adds the tracepoints' cost to those cases)");
  sub->allow_extras();
  sub->footer(
      "Google Benchmark flags (--benchmark_filter=REGEX, --benchmark_repetitions=N, ...) "
      "pass through and override the config.");
  sub->callback([args, sub] {
    args->benchmark_flags = sub->remaining();
    run_command(*args);
  });
}

const CommandRegistrar reg("run", add_run_command);

}  // namespace
}  // namespace wb
