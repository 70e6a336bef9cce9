// `wakebench run`: config -> cases -> driver, repetitions interleaved -> result set -> summary.
// wakebench owns the loop (README "Architecture"): a repetition is one run_case, a fixed number of
// round trips between a fresh pair of tasks; the result set carries Google Benchmark's JSON shape
// (context, benchmarks) so that its tools/compare.py reads it.
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <random>
#include <regex>
#include <sstream>

#include "analysis/noise.h"
#include "analysis/predict_results.h"
#include "analysis/resultset_io.h"
#include "analysis/sequential.h"
#include "analysis/summary.h"
#include "benchmarks/registry.h"
#include "common/measure/perf.h"
#include "common/measure/stats.h"
#include "common/schema/config.h"
#include "common/schema/environment.h"
#include "common/schema/placement.h"
#include "common/schema/registry.h"
#include "common/schema/result_set.h"
#include "common/schema/result_set_doc.h"
#include "common/schema/run_order.h"
#include "common/schema/wakeup_trace.h"
#include "common/system/cpu_sysfs.h"
#include "common/system/environment_capture.h"
#include "common/system/idle_latency.h"
#include "common/system/journal.h"
#include "common/system/schedstat.h"
#include "common/system/settings.h"
#include "common/system/tracefs.h"
#include "common/util/input.h"
#include "common/util/output_file.h"
#include "common/util/sys.h"
#include "common/util/text.h"
#include "runners/commands.h"
#include "runners/gb_output.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

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
  bool trace_decisions = false;        // --trace-decisions: and keep the lab kernel's decisions
  std::string filter;                  // --benchmark_filter: regex over case names, '-' negates
  std::optional<int> repetitions;      // --benchmark_repetitions: overrides the config
  std::optional<int64_t> round_trips;  // --round-trips: overrides the config
  std::optional<uint64_t> seed;        // --seed: the interleaved order's seed
  std::string noise;                   // --noise: an A/A noise file the result set keeps
  std::vector<std::string> ab;        // --ab SPEC...: settings to switch (common/system/settings.h)
  bool ab_any_setting = false;        // --ab-any-setting: not only the scheduler's settings
  std::string ab_root;                // --ab-root: the root of the --ab files (tests)
  std::string state_dir = kStateDir;  // --state-dir: the journals and locks (tests)
  std::string until_decided;          // --until-decided BASE.json
  std::size_t looks = 10;             // --looks: the most looks --until-decided takes
  double budget_s = 300;              // --budget: seconds --until-decided may measure
  std::vector<std::string> extras;    // anything else: refused with a reason
};

// --trace-decisions: one set's decision records, written to its side file as each repetition ends
// (a cell's run holds hundreds of thousands: never all in memory), each repetition's after a
// "# case NAME" and a "# run N" line; published beside the set, which names it by its sha256
// (docs/result-set.md#decisions). Removed, never half-published, when the run fails.
class DecisionSide {
 public:
  // Beside `set_path` (its extension replaced), or with it empty a new `<stem>.decisions.txt`.
  DecisionSide(const std::string& set_path, const std::string& stem)
      : file_(set_path.empty() ? set_path : fs::path(set_path).replace_extension(kExt).string(),
              stem, kExt) {
    add("# wakebench decision records (docs/policy-model.md#decision-records)\n");
  }
  void add_run(const std::string& case_name, int64_t run, const std::string& records) {
    add("# case " + case_name + "\n# run " + std::to_string(run) + "\n");
    add(records);
  }
  DecisionsRecord publish() {
    return {fs::path(file_.publish()).filename().string(), sha_.hex(), lines_};
  }

 private:
  static constexpr const char* kExt = ".decisions.txt";
  void add(std::string_view text) {
    file_.append(text);
    sha_.update(text);
    lines_ += std::count(text.begin(), text.end(), '\n');
  }
  StreamedFile file_;
  Sha256 sha_;
  int64_t lines_ = 0;
};

// One case while the run goes.
struct CaseState {
  const Mechanism* mech = nullptr;
  CaseRecord record;
  std::vector<nlohmann::json> schedstat_window;  // one delta per repetition
  // --trace-wakeups: the kept repetitions' attributions added up; trace_error says why one could
  // not be recorded or read.
  std::optional<WakeupTraceSummary> trace;
  std::string trace_error;
  DecisionSide* decisions = nullptr;  // its set's, with --trace-decisions
};

// One result set of the run: every case under one setting (the only one without --ab).
struct SetRun {
  std::vector<CaseState> cases;
  GbBenchmarks gb;
  std::unique_ptr<DecisionSide> decisions;  // with --trace-decisions
};

// The configs folder: beside an installed binary (<prefix>/share/wakebench/configs, as
// `cmake --install` lays it out), else in the source tree the binary was built from (a folder
// above it holding configs/quick.json).
std::filesystem::path configs_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "configs";
  const fs::path installed = exe.parent_path().parent_path() / "share/wakebench/configs";
  if (fs::is_directory(installed, ec)) return installed;
  for (auto dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path())
    if (fs::exists(dir / "configs/quick.json", ec)) return dir / "configs";
  return "configs";
}

// --config: a file's path, or the name of a config of the configs folder ("quick", "seeds/000-x":
// NAME.json there) when no file has that path; "-" is standard input. Without --config:
// configs/quick.json of the working folder, else the folder's "quick".
std::string config_path(const std::string& given) {
  std::error_code ec;
  if (given == "-") return given;
  if (given.empty())
    return std::filesystem::exists("configs/quick.json", ec) ? "configs/quick.json"
                                                             : config_path("quick");
  if (std::filesystem::exists(given, ec) || given.ends_with(".json") || !is_safe_name(given))
    return given;
  return (configs_dir() / (given + ".json")).string();
}

std::string fmt_duration(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return buf;
}

// One line per case on stderr once it is done (its last repetition, its failure, or its skip),
// with the ETA from the round trips done so far and those left.
class Progress {
 public:
  explicit Progress(const std::vector<SetRun>& sets) {
    for (const auto& set : sets)
      for (const auto& c : set.cases) {
        ++total_;
        if (c.record.spec.skip_reason.empty())
          left_ += c.record.spec.round_trips * c.record.spec.repetitions;
      }
  }
  void repetition_done(const CaseSpec& s) {
    done_ += s.round_trips;
    left_ -= s.round_trips;
  }
  // `tag`: which setting's set, " ab1" (empty without --ab).
  void case_done(const CaseRecord& r, const std::string& tag) {
    std::string what;
    if (r.status == CaseStatus::kOk) {
      std::vector<int64_t> all;
      for (const auto& rep : r.repetitions)
        for (const auto& p : rep) all.insert(all.end(), p.rtt_ns.begin(), p.rtt_ns.end());
      const SampleStats st = compute_stats(std::span<const int64_t>(all));
      char buf[96];
      std::snprintf(buf, sizeof buf, "ok  median %6s us  p99 %6s us", us_figure(st.median).c_str(),
                    us_figure(st.p99).c_str());
      what = buf;
    } else {
      what = std::string(status_id(r.status)) + ": " + r.reason;
      if (r.status == CaseStatus::kFailed)  // its repetitions not run
        left_ -=
            r.spec.round_trips * (r.spec.repetitions - static_cast<int64_t>(r.repetitions.size()));
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string eta;
    if (done_ > 0 && left_ > 0)
      eta = "  ETA " +
            fmt_duration(elapsed * static_cast<double>(left_) / static_cast<double>(done_));
    std::fprintf(stderr, "[%zu/%zu] %-40s %s%s\n", ++reported_, total_, (r.spec.name + tag).c_str(),
                 what.c_str(), eta.c_str());
  }

 private:
  size_t total_ = 0, reported_ = 0;
  int64_t left_ = 0, done_ = 0;  // round trips
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

void on_signal(int) { g_interrupted.store(true); }

// Adds up the per-repetition schedstat deltas of one case (numbers add; anything else is kept from
// the first).
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

// --trace-wakeups around one repetition of a kernel case: the session's buffer is sized for it,
// started right before and stopped right after; the text is attributed at once (the buffers are
// cleared for the next repetition). nullopt, with cs.trace_error set, when it fails.
struct CaseTracer {
  WakeupTraceSession* session = nullptr;
  const Topology* topo = nullptr;
  bool decisions = false;  // --trace-decisions
};

std::optional<WakeupTraceSummary> traced_run(const CaseTracer& tr, CaseState& cs,
                                             const RunOptions& opts, RunOutcome& out) {
  const CaseSpec& spec = cs.record.spec;
  const int tid = static_cast<int>(::syscall(SYS_gettid));
  const int64_t streams = static_cast<int64_t>(std::max<size_t>(1, concurrent_pairs(spec).size()));
  const int64_t kb =
      WakeupTraceSession::buffer_kb_for((spec.round_trips + spec.warmup) * streams,
                                        static_cast<int>(spec.cpuset.size()), tr.decisions);
  bool started = false;
  try {
    tr.session->start(spec.cpuset, kb);
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
    wo.keep_decisions = tr.decisions;
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

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// One repetition of a case: fresh tasks, spec.round_trips timed round trips. Its first one is
// preceded by the counting pass. A failure fails the case with its first reason; its later
// repetitions do not run. An interruption (Ctrl-C, SIGTERM) drops only the repetition it stopped:
// a case keeps those it finished (it fails "interrupted" when it finished none). Returns the
// supervisor thread's CPU time over the timed round trips.
double run_repetition(CaseState& cs, const RunOptions& base, const CaseTracer& tracer) {
  CaseRecord& rec = cs.record;
  const CaseSpec& spec = rec.spec;
  auto fail = [&rec](const std::string& why) {
    if (g_interrupted.load() && !rec.repetitions.empty()) return 0.0;
    rec.status = CaseStatus::kFailed;
    rec.reason = why;
    return 0.0;
  };
  RunOptions opts = base;
  if (opts.timeout_s <= 0) opts.timeout_s = spec.timeout_s;
  // Counters perturb what they count: every context switch of a counted task saves and restores
  // its perf context, which slows a same-CPU round trip by a large share (README.md#mechanisms).
  // So they are counted in a pass of their own, exactly as long as a repetition, before the timed
  // repetitions, which run uncounted (docs/result-set.md#counters).
  if (!opts.events.empty()) {
    if (rec.repetitions.empty()) {
      RunOutcome counting = run_case(spec, *cs.mech, *tracer.topo, opts);
      if (!counting.ok) return fail(counting.error);
      rec.counted = std::move(counting.pairs);
    }
    opts.events.clear();
  }
  // schedstat deltas over the case's CPUs, one per repetition, added up at the end.
  std::string why_not;
  const auto before = read_schedstat(&why_not);
  const int64_t cpu0 = thread_cpu_ns();
  RunOutcome out;
  std::optional<WakeupTraceSummary> traced;
  if (tracer.session && spec.kernel)
    traced = traced_run(tracer, cs, opts, out);
  else
    out = run_case(spec, *cs.mech, *tracer.topo, opts);
  rec.background_cpus = out.background_cpus;
  const int64_t cpu = thread_cpu_ns() - cpu0;
  const auto after = read_schedstat(&why_not);
  if (before && after) {
    std::vector<int> cpus = spec.kernel ? spec.cpuset : std::vector<int>{};
    for (auto [w, e] : spec.pairs) cpus.insert(cpus.end(), {w, e});
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    cs.schedstat_window.push_back(schedstat_delta(*before, *after, cpus));
  } else {
    rec.schedstat = {{"unavailable", why_not}};
  }
  if (!out.ok) return fail(out.error);
  if (traced) {
    if (!cs.trace) cs.trace.emplace();
    if (cs.decisions && !traced->decisions.empty())
      cs.decisions->add_run(spec.name, cs.trace->traced_runs, traced->decisions);
    cs.trace->add(*traced);
  }
  rec.repetitions.push_back(std::move(out.pairs));
  return static_cast<double>(cpu);
}

// Google Benchmark's filter semantics over case names: a regex search, a leading '-' negates,
// "", "all" and "." select everything.
std::function<bool(const std::string&)> name_filter(const std::string& filter) {
  if (filter.empty() || filter == "all" || filter == ".")
    return [](const std::string&) { return true; };
  const bool negate = filter[0] == '-';
  std::regex re;
  try {
    re = std::regex(negate ? filter.substr(1) : filter);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("--benchmark_filter " + filter + ": invalid regular expression (" +
                                e.what() + ")");
  }
  return [re, negate](const std::string& name) { return std::regex_search(name, re) != negate; };
}

void refuse_extras(const std::vector<std::string>& extras) {
  for (const auto& f : extras) {
    if (f.rfind("--benchmark_min_time", 0) == 0)
      throw std::invalid_argument(
          f + ": a repetition is a fixed number of round trips here; use --round-trips N");
    if (f.rfind("--benchmark_", 0) == 0)
      throw std::invalid_argument("unrecognized Google Benchmark flag " + f +
                                  " (run takes --benchmark_filter and --benchmark_repetitions)");
    throw std::invalid_argument("unknown option " + f + " (see wakebench run --help)");
  }
}

RunOptions run_options(const RunArgs& args) {
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
  return opts;
}

// The cases of the config that the filter selects, with the overrides of the command line and the
// reason each one that cannot run here is skipped.
std::vector<CaseState> plan_cases(const RunArgs& args, const Config& config, const Topology& topo,
                                  const std::string& config_path) {
  std::vector<std::string> known;
  for (const Mechanism* m : all_mechanisms()) known.emplace_back(m->id());
  const auto selected = name_filter(args.filter);
  std::vector<CaseState> cases;
  for (CaseSpec& spec : expand_cases(config, topo, known, args.pairs_per_class)) {
    if (!selected(spec.name)) continue;
    if (args.repetitions) spec.repetitions = *args.repetitions;
    if (args.round_trips) spec.round_trips = *args.round_trips;
    CaseState cs;
    cs.mech = find_mechanism(spec.mechanism);
    if (spec.skip_reason.empty())
      if (auto why = cs.mech->skip_reason(spec, topo)) spec.skip_reason = *why;
    cs.record.spec = std::move(spec);
    cs.record.wake_flags = registry().mechanism(cs.mech->id()).wake_flags;
    cases.push_back(std::move(cs));
  }
  // A class this machine lacks may be there with the CPUs the run cannot use: say which.
  if (const std::string note = unused_cpus_note(topo.cpus()); !note.empty())
    for (CaseState& cs : cases)
      if (cs.record.spec.skip_reason.rfind("unavailable: ", 0) == 0)
        cs.record.spec.skip_reason += " (" + note + ")";
  if (cases.empty())
    throw std::invalid_argument("--benchmark_filter " + args.filter + ": matches no case of " +
                                config_path);
  return cases;
}

// Where each result set goes: `path` ("" for a new file of `stem`). With --ab, set k goes to the
// stem of --out (or the default stem) + "-ab<k>.json". Each is checked before anything runs.
struct OutputTarget {
  std::string path, stem;
};
std::vector<OutputTarget> output_targets(const RunArgs& args, const std::string& default_stem,
                                         int ab_settings) {
  std::vector<OutputTarget> out;
  if (ab_settings == 0) {
    out.push_back({args.out, default_stem});
  } else {
    const std::string stem = args.out.empty()
                                 ? default_stem
                                 : std::filesystem::path(args.out).replace_extension().string();
    for (int k = 0; k < ab_settings; ++k) {
      const std::string s = stem + "-ab" + std::to_string(k);
      out.push_back({args.out.empty() ? "" : s + ".json", s});
    }
  }
  for (const OutputTarget& t : out)
    check_output_writable(args.out.empty() ? "results folder" : "--out",
                          t.path.empty() ? t.stem + ".json" : t.path);
  return out;
}

std::string set_tag(const std::vector<SetRun>& sets, size_t k) {
  return sets.size() > 1 ? " ab" + std::to_string(k) : "";
}

// One repetition of the schedule. With --ab its setting is written and read back first (a
// read-back that differs from what was written fails the case), and its round and read-back are
// kept beside it (docs/result-set.md#ab).
double run_step(CaseState& cs, const AbStep& step, const RunOptions& opts, const CaseTracer& tracer,
                SettingsGuard* guard) {
  if (!guard) return run_repetition(cs, opts, tracer);
  SettingValues read_back;
  if (const std::string why = guard->apply(step.setting, &read_back); !why.empty()) {
    if (g_interrupted.load() && !cs.record.repetitions.empty()) return 0.0;
    cs.record.status = CaseStatus::kFailed;
    cs.record.reason = why;
    return 0.0;
  }
  const size_t before = cs.record.repetitions.size();
  const double cpu_ns = run_repetition(cs, opts, tracer);
  if (cs.record.repetitions.size() > before)
    cs.record.ab.push_back({step.round, std::move(read_back)});
  return cpu_ns;
}

// Runs the schedule (README.md "run": interleaved repetitions; with --ab each under every setting)
// until it ends or the run is interrupted; returns whether it was.
bool execute(std::vector<SetRun>& sets, const std::vector<AbStep>& steps, const RunOptions& opts,
             const CaseTracer& tracer, SettingsGuard* guard) {
  Progress progress(sets);
  auto done = [&](size_t k, size_t i) {
    progress.case_done(sets[k].cases[i].record, set_tag(sets, k));
    sets[k].gb.done(sets[k].cases[i].record, i);
  };
  for (size_t k = 0; k < sets.size(); ++k)
    for (size_t i = 0; i < sets[k].cases.size(); ++i)
      if (CaseRecord& rec = sets[k].cases[i].record;
          !rec.spec.skip_reason.empty() && rec.status == CaseStatus::kOk) {
        rec.status = CaseStatus::kSkipped;
        rec.reason = rec.spec.skip_reason;
        done(k, i);
      }
  for (const AbStep& step : steps) {
    if (g_interrupted.load()) break;
    const size_t k = static_cast<size_t>(step.setting), i = step.case_index;
    const CaseRecord& rec = sets[k].cases[i].record;
    if (rec.status != CaseStatus::kOk) continue;  // failed in an earlier repetition
    const double cpu_ns = run_step(sets[k].cases[i], step, opts, tracer, guard);
    if (rec.status == CaseStatus::kOk) {
      progress.repetition_done(rec.spec);
      sets[k].gb.repetition(rec, i, cpu_ns);
    }
    if (rec.status != CaseStatus::kOk ||
        static_cast<int>(rec.repetitions.size()) == rec.spec.repetitions)
      done(k, i);
  }
  const bool interrupted = g_interrupted.load();
  for (size_t k = 0; interrupted && k < sets.size(); ++k)
    for (size_t i = 0; i < sets[k].cases.size(); ++i) {
      const CaseRecord& rec = sets[k].cases[i].record;
      const auto kept = static_cast<int>(rec.repetitions.size());
      if (rec.status == CaseStatus::kOk && kept > 0 && kept < rec.spec.repetitions)
        done(k, i);  // what it finished
    }
  return interrupted;
}

// What every result set of one run shares.
struct RunContext {
  std::string config_path;
  const Config* config = nullptr;
  const Topology* topo = nullptr;
  int pairs_per_class = 1;
  uint64_t seed = 0;
  nlohmann::json env;
  std::optional<NoiseFloor> noise;
  std::string noise_path;
  bool traced = false;
  bool interrupted = false;
  const AbPlan* ab = nullptr;  // null without --ab
  std::string ab_id;
  std::optional<UntilDecidedRecord> until_decided;  // --until-decided: the looks, the verdicts
};

nlohmann::ordered_json cases_json(const RunContext& ctx, const SetRun& set) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& cs : set.cases) {
    // Interrupted: a case that had not finished a repetition yet is left out.
    if (cs.record.status == CaseStatus::kOk && cs.record.repetitions.empty()) continue;
    CaseRecord rec = cs.record;
    if (!cs.schedstat_window.empty()) rec.schedstat = sum_schedstat(cs.schedstat_window);
    if (ctx.traced && rec.spec.kernel && rec.status == CaseStatus::kOk) {
      if (cs.trace && cs.trace_error.empty()) {
        std::vector<std::string> classes;
        for (PlacementClass c : kAllClasses) classes.emplace_back(class_id(c));
        rec.trace = trace_json(*cs.trace, classes);
      } else {
        rec.trace = {
            {"unavailable", cs.trace_error.empty() ? std::string("not traced") : cs.trace_error}};
      }
    }
    out.push_back(case_json(rec, *ctx.topo));
  }
  return out;
}

// The top level of every set of this run (docs/result-set.md#document), cases included: what
// a look of --until-decided compares and, with set k's own parts, what the run writes.
ResultSetDoc run_doc(const RunContext& ctx, const SetRun& set) {
  ResultSetDoc d;
  d.schema = kResultSchema;
  d.schema_version = kResultSchemaVersion;
  d.environment = ctx.env;
  d.cases = cases_json(ctx, set);
  return d;
}

// Set k as written (docs/result-set.md#contract), typed, with its predictions (nullopt when
// unavailable) and their text.
struct SetOut {
  ResultSet rs;
  std::optional<ResultsPrediction> predictions;
  std::string predictions_text;
};
SetOut result_set(const RunContext& ctx, const SetRun& set, int k) {
  ResultSetDoc d = run_doc(ctx, set);
  d.complete = !ctx.interrupted;
  d.context = gb_context(std::filesystem::read_symlink("/proc/self/exe").string());
  d.benchmarks = set.gb.json();
  d.run = RunOrder{"interleaved", ctx.seed};
  if (ctx.ab)
    d.ab = AbSet{ctx.ab_id, k, ctx.ab->settings, ctx.ab->label(k), ctx.ab->values(k), ctx.seed};
  d.until_decided = ctx.until_decided;
  d.topology = TopologyRecord{
      topology_json(*ctx.topo, choose_pairs(*ctx.topo, ctx.pairs_per_class)), ctx.topo->xml()};
  d.config = ConfigRecord{ctx.config_path, ctx.config->name, ctx.config->json, {}};
  if (ctx.noise) {  // compare holds this set's cases to it when the set is the baseline
    d.noise = noise_json(*ctx.noise);
    (*d.noise)["from"] = ctx.noise_path;
  }
  // The predictor reads only the result set (data flows one way); its answer goes into the set.
  SetOut out;
  try {
    out.rs = typed_result_set(std::move(d), "this run");
    out.predictions = predict_for_results(out.rs);
    out.predictions_text = render_results_text(*out.predictions);
    out.rs.set.predictions = to_json(*out.predictions);
  } catch (const std::exception& e) {
    if (out.rs.set.schema.empty()) out.rs.set = std::move(d);  // a case did not parse: no views
    out.rs.set.predictions = {{"unavailable", e.what()}};
    out.predictions_text = std::string("predictions unavailable: ") + e.what() + "\n";
  }
  return out;
}

// Writes each set (never dropping one: write_or_fallback), prints each one's summary on stderr and
// the paths on stdout, one per line. Throws ExitCode 2 when a set went elsewhere, 130 when the run
// was interrupted.
void write_and_print(const RunContext& ctx, const std::vector<SetRun>& sets,
                     const std::vector<OutputTarget>& targets, const std::string& show) {
  std::string paths, warnings;
  for (size_t k = 0; k < sets.size(); ++k) {
    SetOut out = result_set(ctx, sets[k], static_cast<int>(k));
    if (sets[k].decisions) out.rs.set.decisions = sets[k].decisions->publish();
    const std::string text = result_set_json(out.rs.set).dump(1) + "\n";
    const Saved saved = write_or_fallback(targets[k].path, targets[k].stem, ".json", text);
    if (ctx.ab)
      std::fprintf(stderr, "\nA/B setting %zu of %d: %s (%s)", k, ctx.ab->settings,
                   ctx.ab->label(static_cast<int>(k)).c_str(),
                   saved.path.empty() ? "standard output" : saved.path.c_str());
    std::fprintf(stderr, "\n%s\n%s\n%s", summary_table(out.rs, show).c_str(),
                 out.predictions_text.c_str(),
                 claims_table(out.rs, out.predictions ? &*out.predictions : nullptr).c_str());
    if (!saved.warning.empty()) warnings += "wakebench: warning: " + saved.warning + "\n";
    paths += (saved.path.empty() ? text : saved.path + "\n");
  }
  std::fputs(warnings.c_str(), stderr);
  std::fputs(paths.c_str(), stdout);
  if (!warnings.empty()) throw ExitCode{2};
  if (ctx.interrupted) {
    std::fprintf(stderr, "wakebench: interrupted; the result set is marked incomplete\n");
    throw ExitCode{130};
  }
}

// --until-decided: the baseline and the sequential procedure (analysis/sequential.h).
struct UntilDecided {
  ResultSet base;
  SequentialRun seq;
  double budget_s;
  size_t batches = 0;  // case batches run so far (one case's repetitions of one look)
};

// The cases (indices into set.cases) whose keys are in `keys`.
std::vector<size_t> cases_of(const SetRun& set, const ResultSet& partial,
                             const std::vector<std::string>& keys) {
  std::vector<size_t> out;
  for (const CaseView& v : partial.views) {
    if (std::find(keys.begin(), keys.end(), v.key()) == keys.end()) continue;
    for (size_t i = 0; i < set.cases.size(); ++i)
      if (set.cases[i].record.spec.name == v.name) out.push_back(i);
  }
  return out;
}

// What compare reads of this run so far: its cases and environment (no predictions, no benchmark
// entries: those are for the set written at the end).
ResultSet so_far(const RunContext& ctx, const SetRun& set) {
  return typed_result_set(run_doc(ctx, set), "this run");
}

// Before the first case: the look compare takes, on this run with no case yet, so that a baseline
// compare refuses (one from the topology lab, a noise floor that does not read) is one line.
void check_comparable(const UntilDecided& ud, const RunContext& ctx, const SetRun& set) {
  try {
    compare_result_sets({ud.base, so_far(ctx, set)}, CompareOptions{});
  } catch (const std::exception& e) {
    throw std::invalid_argument("--until-decided " + ud.base.path + ": cannot be compared with " +
                                "this run: " + e.what());
  }
}

// One look: this run so far against the baseline at the look's level. Returns the cases that go
// on and prints where the run stands.
std::vector<size_t> take_look(UntilDecided& ud, const RunContext& ctx, const SetRun& set,
                              size_t look, double elapsed_s) {
  const ResultSet partial = so_far(ctx, set);
  CompareOptions options;
  options.level = ud.seq.level(look);
  const Comparison cmp = compare_result_sets({ud.base, partial}, options);
  const std::vector<size_t> go_on = cases_of(set, partial, ud.seq.look(cmp, look));
  const auto n = ud.seq.counts();
  // The next look's ETA: its cases at the mean time of a case batch so far.
  const double next_s = elapsed_s / static_cast<double>(std::max<size_t>(ud.batches, 1)) *
                        static_cast<double>(go_on.size());
  const std::string next =
      go_on.empty() || look == ud.seq.looks() ? "" : "; next look in about " + fmt_duration(next_s);
  std::fprintf(stderr,
               "wakebench: look %zu of %zu (level %.4f): %d DIFFERENT, %d SAME, %d UNKNOWN; %zu "
               "go on; %s of %s spent%s\n",
               look, ud.seq.looks(), *options.level, n.at(CompareVerdict::kDifferent),
               n.at(CompareVerdict::kSame), n.at(CompareVerdict::kUnknown), go_on.size(),
               fmt_duration(elapsed_s).c_str(), fmt_duration(ud.budget_s).c_str(), next.c_str());
  return go_on;
}

// Batches of interleaved rounds of the cases still UNKNOWN, each batch the config's repetitions,
// until every case is decided, the looks or the budget are spent, or the run is interrupted
// (returned). The verdicts go into ctx.until_decided.
bool execute_until_decided(UntilDecided& ud, RunContext& ctx, std::vector<SetRun>& sets,
                           const RunOptions& opts, const CaseTracer& tracer) {
  const auto start = std::chrono::steady_clock::now();
  SetRun& set = sets[0];
  std::vector<int> batch;
  std::vector<size_t> active;
  for (size_t i = 0; i < set.cases.size(); ++i) {
    const CaseSpec& spec = set.cases[i].record.spec;
    batch.push_back(spec.skip_reason.empty() ? spec.repetitions : 0);
    if (spec.skip_reason.empty()) active.push_back(i);
  }
  bool interrupted = false;
  size_t look = 0;
  double elapsed = 0;
  while (!active.empty() && look < ud.seq.looks() && elapsed < ud.budget_s && !interrupted) {
    std::vector<int> reps(set.cases.size(), 0);
    for (size_t i : active) {
      reps[i] = batch[i];
      CaseSpec& spec = set.cases[i].record.spec;
      if (look > 0) spec.repetitions += batch[i];
    }
    interrupted = execute(sets, ab_schedule(reps, 1, ctx.seed + look), opts, tracer, nullptr);
    ud.batches += active.size();
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!interrupted) active = take_look(ud, ctx, set, ++look, elapsed);
  }
  const auto n = ud.seq.counts();
  ctx.until_decided = UntilDecidedRecord{ud.base.path,
                                         static_cast<int64_t>(look),
                                         static_cast<int64_t>(ud.seq.looks()),
                                         ud.budget_s,
                                         elapsed,
                                         0.05,
                                         {{"DIFFERENT", n.at(CompareVerdict::kDifferent)},
                                          {"SAME", n.at(CompareVerdict::kSame)},
                                          {"UNKNOWN", n.at(CompareVerdict::kUnknown)}},
                                         ud.seq.json()};
  return interrupted;
}

// SIGINT, SIGTERM, SIGHUP (the terminal gone) and SIGPIPE (stderr's reader gone) alike stop the
// run: the running case's tasks are killed, the set is written marked incomplete and the settings
// restored; a write to a gone reader then fails (EPIPE) instead of killing the run.
void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;  // no SA_RESTART: the supervisor's poll returns EINTR
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaction(sig, &sa, nullptr);
}

// Every CPU a case pins or may use.
std::vector<int> measured_cpus(const std::vector<CaseState>& cases) {
  std::vector<int> measured;
  for (const auto& cs : cases)
    for (auto [w, e] : cs.record.spec.pairs) measured.insert(measured.end(), {w, e});
  std::sort(measured.begin(), measured.end());
  measured.erase(std::unique(measured.begin(), measured.end()), measured.end());
  return measured;
}

std::string ab_root(const RunArgs& args) { return args.ab_root.empty() ? "/" : args.ab_root; }

// The checks between options, before anything runs.
void check_options(const RunArgs& args) {
  refuse_extras(args.extras);
  if (!args.ab_root.empty() && args.ab.empty())
    throw std::invalid_argument("--ab-root: only with --ab");
  if (args.ab_any_setting && args.ab.empty())
    throw std::invalid_argument("--ab-any-setting: only with --ab");
  if (!args.until_decided.empty() && !args.ab.empty())
    throw std::invalid_argument(
        "--until-decided: not with --ab (an A/B run compares its own sets)");
  std::error_code ec;  // one file, however each is spelled (device and inode)
  if (!args.until_decided.empty() && !args.out.empty() &&
      std::filesystem::equivalent(args.out, args.until_decided, ec))
    throw std::invalid_argument("--out " + args.out + ": is the --until-decided baseline " +
                                args.until_decided + ", which the run reads; write elsewhere");
}

// Before anything else: what a run that ended without restoring left changed is restored
// (common/system/journal.h); with --ab or --trace-wakeups this run's own journal is made, holding
// the locks of its settings. Null without.
std::unique_ptr<RunJournal> open_journal(const RunArgs& args, const AbPlan& ab) {
  if (ab.specs.empty() && !args.trace_wakeups && !args.trace_decisions) {
    try {
      recover_journals(args.state_dir);
    } catch (const std::runtime_error&) {
      // A folder this user cannot open holds nothing this user's run could restore.
    }
    return nullptr;
  }
  try {
    return std::make_unique<RunJournal>(args.state_dir, ab_root(args), ab);
  } catch (const std::runtime_error& e) {  // a setting a live run holds: std::invalid_argument
    throw std::runtime_error(std::string(ab.specs.empty() ? "--trace-wakeups" : "--ab") +
                             ": the journal of the settings it changes: " + e.what() +
                             (geteuid() != 0 ? " (needs root)" : ""));
  }
}

// --ab: the SPECs checked against the files (one line, exit 2, before anything runs); null
// without --ab.
std::unique_ptr<SettingsGuard> settings_guard(const RunArgs& args, const AbPlan& plan,
                                              RunJournal* journal) {
  if (plan.specs.empty()) return nullptr;
  return std::make_unique<SettingsGuard>(plan, ab_root(args), journal);
}

// What the run is about to do, on stderr: its cases, the A/B settings, what makes the figures
// noisy.
void announce(const RunContext& ctx, size_t cases, const std::string& host, const AbPlan& ab) {
  std::fprintf(stderr, "wakebench: %zu cases from %s on %s (%zu CPUs: %s), order seed %llu\n",
               cases, ctx.config_path.c_str(), host.c_str(), ctx.topo->cpus().size(),
               ctx.topo->source().c_str(), static_cast<unsigned long long>(ctx.seed));
  for (int k = 0; k < ab.settings; ++k)
    std::fprintf(stderr, "wakebench: A/B setting %d: %s\n", k, ab.label(k).c_str());
  for (const auto& w : environment_warnings(ctx.env))
    std::fprintf(stderr, "warning: %s\n", w.c_str());
}

void run_command(const RunArgs& args) {
  ::signal(SIGPIPE, SIG_IGN);  // until install_signal_handlers: a gone stderr fails, never kills
  // Parse.
  check_options(args);
  const AbPlan ab = parse_ab_plan(args.ab, args.ab_any_setting);
  const std::unique_ptr<RunJournal> journal = open_journal(args, ab);
  std::optional<UntilDecided> until;
  if (!args.until_decided.empty())
    until.emplace(UntilDecided{load_result_set(args.until_decided),
                               SequentialRun(args.looks, CompareOptions{}.alpha), args.budget_s});
  RunContext ctx;
  ctx.config_path = config_path(args.config);
  const Config config = load_config(ctx.config_path);
  const Topology topo = Topology::from_system();
  if (args.pairs_per_class < 1) throw std::invalid_argument("--pairs-per-class must be >= 1");
  const RunOptions opts = run_options(args);
  // Read before anything runs, so a bad noise file is one line and exit 2.
  if (!args.noise.empty()) ctx.noise = load_noise(args.noise);
  // Up front: a run that cannot trace fails before it measures anything (one line, exit 2).
  std::unique_ptr<WakeupTraceSession> trace_session;
  if (args.trace_wakeups || args.trace_decisions)
    trace_session = std::make_unique<WakeupTraceSession>(journal.get(), args.trace_decisions);
  const CaseTracer tracer{trace_session.get(), &topo, args.trace_decisions};

  // Plan.
  const std::vector<CaseState> cases = plan_cases(args, config, topo, ctx.config_path);
  ctx.seed = args.seed ? *args.seed : std::random_device{}();
  std::vector<int> repetitions;
  for (const auto& cs : cases)
    repetitions.push_back(cs.record.spec.skip_reason.empty() ? cs.record.spec.repetitions : 0);
  const std::string host = topo.source().substr(topo.source().find(':') + 1);
  const std::string utc = format_utc(std::time(nullptr), "%Y%m%dT%H%M%SZ");
  // By default a new file (results/<host>-<UTC second>[-N].json, never another run's); either way
  // checked before anything is measured.
  const auto targets =
      output_targets(args, "results/" + safe_file_name(host) + "-" + utc, ab.settings);
  install_signal_handlers();  // before the trial writes, so an interruption reaches the restore
  // Restores every knob it changed when the measuring ends (reset below) or unwinds.
  std::unique_ptr<SettingsGuard> guard = settings_guard(args, ab, journal.get());

  // Held until the run returns: the CPUs stay out of idle states deeper than the limit.
  std::optional<IdleLatencyGuard> idle_guard;
  if (args.idle_latency_us) idle_guard.emplace(*args.idle_latency_us);
  ctx.env = capture_environment({measured_cpus(cases), config.text, args.idle_latency_us});
  ctx.config = &config;
  ctx.topo = &topo;
  ctx.pairs_per_class = args.pairs_per_class;
  ctx.noise_path = args.noise;
  ctx.traced = trace_session != nullptr;
  std::vector<SetRun> sets(static_cast<size_t>(std::max(ab.settings, 1)));
  for (size_t k = 0; k < sets.size(); ++k) {
    sets[k].cases = cases;
    if (!args.trace_decisions) continue;
    sets[k].decisions = std::make_unique<DecisionSide>(targets[k].path, targets[k].stem);
    for (CaseState& cs : sets[k].cases) cs.decisions = sets[k].decisions.get();
  }
  if (until) check_comparable(*until, ctx, sets[0]);
  announce(ctx, cases.size(), host, ab);

  // Execute.
  ctx.interrupted = until ? execute_until_decided(*until, ctx, sets, opts, tracer)
                          : execute(sets, ab_schedule(repetitions, ab.settings, ctx.seed), opts,
                                    tracer, guard.get());
  guard.reset();

  // Write and print.
  if (!ab.specs.empty()) {
    ctx.ab = &ab;
    ctx.ab_id = utc + "-" + std::to_string(getpid());
  }
  write_and_print(ctx, sets, targets, args.show);
}

// CLI11 validators: "" when the text is acceptable, else why not.
std::string finite_number(const std::string& text) {
  double v = 0;
  return CLI::detail::lexical_cast(text, v) && std::isfinite(v) ? "" : "not a finite number";
}

std::string unsigned_integer(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos
             ? ""
             : "not an unsigned integer";
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
      ->check(finite_number)
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
  sub->add_flag("--trace-decisions", args->trace_decisions,
                "--trace-wakeups, and keep every wakeup decision a lab kernel records "
                "(runners/lab/KERNELS.md) in a side file beside the result set, which names it "
                "with its sha256; `wakebench replay RESULTS` replays them");
  sub->add_option("--benchmark_filter", args->filter,
                  "run only the cases whose name matches this regex (Google Benchmark's "
                  "semantics: a search; a leading '-' negates)");
  sub->add_option("--benchmark_repetitions", args->repetitions,
                  "repetitions of every case (overrides the config)")
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--round-trips", args->round_trips,
                  "timed round trips of every repetition (overrides the config; replaces Google "
                  "Benchmark's --benchmark_min_time)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  sub->add_option("--seed", args->seed,
                  "seed of the interleaved order of repetitions (default: random; the result set "
                  "records it as run.order_seed)")
      ->check(unsigned_integer);
  sub->add_option("--noise", args->noise,
                  "this machine's A/A noise floor (wakebench noise A.json B.json --out FILE), kept "
                  "in the result set as \"noise\": compare, with this set as its baseline, never "
                  "calls a change smaller than a case's floor there DIFFERENT");
  sub->add_option("--ab", args->ab,
                  "SPEC: switch a kernel setting inside the run, one result set per setting "
                  "(feature:NAME=on,off, sysctl:kernel.sched_x=V1,V2, debugfs:sched/FILE=V1,V2; "
                  "repeat to zip several; README.md#ab-runs)")
      ->take_all()
      ->allow_extra_args(false);
  sub->add_option("--until-decided", args->until_decided,
                  "BASE.json: add batches of interleaved rounds (each the config's repetitions) "
                  "of the cases still UNKNOWN against this baseline until each is SAME or "
                  "DIFFERENT, --looks or --budget are spent; the verdicts spend alpha over the "
                  "looks (README.md#until-decided)");
  sub->add_option("--looks", args->looks, "--until-decided: the most looks (default 10)")
      ->check(CLI::Range(1, 100));
  sub->add_option("--budget", args->budget_s,
                  "--until-decided: seconds of measuring after which no new batch starts "
                  "(default 300)")
      ->check(finite_number)
      ->check(CLI::Range(1.0, 1e6));
  sub->add_flag("--ab-any-setting", args->ab_any_setting,
                "--ab: switch any sysctl or debugfs file, not only the scheduler's own settings "
                "(" +
                    registry().scheduler_settings_text() + ")");
  // Hidden (no group), for tests: the root of --ab's files, a fake tree, and the folder of the
  // journals and locks (README.md#ab-runs).
  sub->add_option("--ab-root", args->ab_root, "")->group("");
  sub->add_option("--state-dir", args->state_dir, "")->group("");
  sub->allow_extras();
  sub->callback([args, sub] {
    args->extras = sub->remaining();
    run_command(*args);
  });
}

const CommandRegistrar reg("run", add_run_command);

}  // namespace
}  // namespace wb
