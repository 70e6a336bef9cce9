// `wakebench search`: kernel-placed cases that tell the policies apart on a topology (an hwloc XML,
// a lab preset's XML in configs/lab/topologies/, or the live machine), written as a `wakebench
// run` config with the search's record (docs/policy-model.md#search).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "analysis/predict/predict.h"
#include "analysis/predict/predict_results.h"
#include "analysis/predict/search.h"
#include "common/schema/config.h"
#include "common/schema/environment.h"
#include "common/schema/registry.h"
#include "common/system/kernel_files.h"
#include "common/util/cpulist.h"
#include "common/util/input.h"
#include "common/util/output_file.h"
#include "common/util/text.h"
#include "runners/commands.h"
#include "runners/run/progress.h"

namespace wb {

namespace {

using json = nlohmann::json;

struct SearchArgs {
  std::string topology, llc_level, policies, mechanism = "pipe", out;
  bool emulated = false, exhaustive = false;
  long long work_ns = 0;
  double max_seconds = 0;  // 0: no limit
  int check_shapes = 0;    // > 0: check that many random candidates against their shapes instead
  int per_pair = 2, per_policy = 6, max_cases = 24;
  int duty = 0;        // 0: busy CPUs busy throughout
  int period_ms = 10;  // with duty: the background's period
  double round_trip_us =
      100;  // with duty: the pair's round trip, which turns the period into wakes
  std::string objective = "placement";
};

SearchOptions options_of(const SearchArgs& a) {
  const MechanismEntry* m = registry().find_mechanism(a.mechanism);
  if (!m)
    throw std::invalid_argument("search --mechanism: unknown mechanism \"" + a.mechanism +
                                "\" (known: " + join(registry().mechanism_ids(), ", ") + ")");
  if (m->no_kernel_wakeup)
    throw std::invalid_argument("search --mechanism " + a.mechanism + ": its tasks never block (" +
                                *m->no_kernel_wakeup + "): no wakeup placement to tell apart");
  SearchOptions o;
  o.policies = registry().kernel_policy_ids();
  if (!a.policies.empty()) {
    o.policies.clear();
    for (std::string_view id : ktext::split(a.policies, ',')) o.policies.emplace_back(id);
  }
  o.sync = m->wake_flags == WakeFlags::kSync;
  o.current_cpu = m->wake_flags == WakeFlags::kCurrentCpu;
  o.emulated = a.emulated;
  o.work_ns = a.work_ns;
  o.per_pair = a.per_pair;
  o.per_policy = a.per_policy;
  o.max_cases = a.max_cases;
  o.exhaustive = a.exhaustive;
  if (a.duty > 0) o.intermittent = Intermittent{a.duty, period_wakes(a.period_ms, a.round_trip_us)};
  if (a.objective == "decisions") o.objective = SearchOptions::Objective::kDecisions;
  return o;
}

json entry_of(const FoundCase& f, const SchedTopology& sched, const SearchArgs& a) {
  const SearchCandidate& c = f.candidate;
  json params = {{"start", {std::to_string(c.start_a) + "," + std::to_string(c.start_b)}}};
  if (!c.busy.empty()) params["background"] = {format_cpu_list(c.busy)};
  if (!c.busy.empty() && a.duty > 0) {
    params["duty"] = {a.duty};
    params["period_ms"] = {a.period_ms};
  }
  if (a.work_ns > 0) params["work_ns"] = {a.work_ns};
  const bool all = c.allowed == sched.cpus();
  return {{"mechanisms", {a.mechanism}},
          {"modes", {"threads"}},
          {"placements", {all ? std::string("kernel") : "kernel:" + format_cpu_list(c.allowed)}},
          {"params", params}};
}

json record_of(const FoundCase& f, const std::string& name, const std::vector<std::string>& ids) {
  json steady = json::object(), pairs = json::array();
  for (const SteadyResult& s : f.steady)
    steady[s.policy] = {{"classes", classes_json(s.classes)}, {"cpus", s.cpus}};
  for (const auto& [i, j] : f.pairs) pairs.push_back({ids[i], ids[j]});
  json differ =
      json::object();  // {policy: {other: share of policy's wakes other decides otherwise}}
  for (std::size_t i = 0; i < f.differ.size(); ++i)
    for (std::size_t j = 0; j < f.differ[i].size(); ++j)
      if (i != j) differ[ids[i]][ids[j]] = f.differ[i][j];
  return {{"case", name}, {"steady", steady}, {"discriminates", pairs}, {"differ", differ}};
}

json pair_json(const PairReport& p) {
  return {{"policies", {p.a, p.b}}, {"chosen", p.chosen},         {"candidates", p.candidates},
          {"best_tv", p.best_tv},   {"best_split", p.best_split}, {"blocked_by", p.blocked_by}};
}

// The config: one entry per chosen case, the search's record under `search`. Expanded once on the
// topology, which checks it and gives each case the name `run` will give it.
std::string config_text(const SearchResult& r, const SearchOptions& opt, const SearchArgs& a,
                        const SchedTopology& sched) {
  json cfg = {{"schema_version", kConfigSchemaVersion},
              {"name", "search-" + safe_file_name(sched.topology().source())},
              {"description", "Kernel-placed cases `wakebench search` chose on " +
                                  sched.topology().source() +
                                  " to tell the policies apart; `search` holds each policy's "
                                  "predicted steady state and the pairs each case discriminates."},
              {"defaults",
               {{"round_trips", 2000}, {"warmup", 200}, {"repetitions", 3}, {"timeout_s", 180}}},
              {"cases", json::array()}};
  for (const FoundCase& f : r.chosen) cfg["cases"].push_back(entry_of(f, sched, a));
  const Config parsed = parse_config(cfg.dump(), "search output");
  const std::vector<CaseSpec> cases =
      expand_cases(parsed, sched.topology(), registry().mechanism_ids());
  json rec = json::array(), pairs = json::array();
  for (std::size_t k = 0; k < r.chosen.size(); ++k)
    rec.push_back(record_of(r.chosen[k], cases[k].name, r.policies));
  for (const PairReport& p : r.pairs) pairs.push_back(pair_json(p));
  cfg["search"] = {
      {"topology", sched.topology().source()},
      {"topology_file", a.topology.empty() ? json(nullptr) : json(a.topology)},
      {"topology_sha256", a.topology.empty()
                              ? json(nullptr)
                              : json(sha256_hex(read_input_file("topology", a.topology)))},
      {"emulated", opt.emulated},
      {"work_ns", opt.work_ns},
      {"slow_switch_out", slow_switch_out_applies(opt.emulated, opt.work_ns)},
      {"objective", a.objective},
      {"intermittent", a.duty > 0
                           ? json{{"duty", a.duty},
                                  {"period_ms", a.period_ms},
                                  {"round_trip_us", a.round_trip_us},
                                  {"period_wakes", period_wakes(a.period_ms, a.round_trip_us)}}
                           : json(nullptr)},
      {"mechanism", a.mechanism},
      {"policies", r.policies},
      {"rules",
       {{"tv", kDiscriminateTv}, {"match_distance", kMatchDistance}, {"split", kSplitShare}}},
      {"model", wakebench_build()},
      {"candidates", r.candidates},
      {"exhaustive", opt.exhaustive},
      {"shapes", r.shapes},
      {"complete", !r.cut},
      {"simulated_shapes", r.simulated},
      {"max_seconds", a.max_seconds > 0 ? json(a.max_seconds) : json(nullptr)},
      {"pairs", pairs},
      {"cases", rec}};
  return cfg.dump(2) + "\n";
}

// Progress on stderr once the search has run kProgressAfterS, every kProgressEveryS, with the ETA;
// false once `max_seconds` (> 0) have passed.
SearchControl progress_and_limit(double max_seconds) {
  constexpr double kProgressAfterS = 5, kProgressEveryS = 2;
  const auto start = std::chrono::steady_clock::now();
  auto next_line = std::make_shared<double>(kProgressAfterS);
  return [=](std::int64_t done, std::int64_t total) {
    const double s = seconds_since(start);
    if (s >= *next_line) {
      std::cerr << search_progress_line(done, total, s);
      *next_line = s + kProgressEveryS;
    }
    return max_seconds <= 0 || s < max_seconds;
  };
}

// `--check-shapes N`: one line on stdout; an internal error (exit 2) for a candidate that answers
// unlike its shape's first member.
void check_random_candidates(const SchedTopology& sched, const SearchOptions& opt, int n) {
  const ShapeCheck c = check_shapes(sched, opt, n, 55);
  if (c.differs >= 0)
    throw std::logic_error("search --check-shapes: candidate " + std::to_string(c.differs) +
                           " answers unlike the first member " + std::to_string(c.first) +
                           " of its shape (" + std::to_string(c.checked) + " checked)");
  std::cout << "search on " << sched.topology().source() << ": " << c.checked
            << " random candidates of " << c.candidates << " (" << c.moved
            << " not their shape's first member) answer as their shape's first member, " << c.shapes
            << " shapes\n";
}

void run_search(const SearchArgs& a) {
  if (a.per_pair < 1 || a.per_policy < 0 || a.max_cases < 1)
    throw std::invalid_argument(
        "search: --per-pair and --max-cases must be >= 1, --per-policy >= 0");
  const SearchControl control = progress_and_limit(a.max_seconds);  // counts from here
  const SchedTopology sched = load_sched_topology("search", a.topology, a.llc_level);
  SearchOptions opt = options_of(a);
  if (!a.out.empty()) check_output_writable("search --out", a.out);
  if (a.check_shapes > 0) {
    check_random_candidates(sched, opt, a.check_shapes);
    return;
  }
  const SearchResult r = search(sched, opt, control);
  if (r.cut && r.simulated == 0) {
    std::cout << "search on " << sched.topology().source() << ": INCOMPLETE, --max-seconds "
              << fmt("%g", a.max_seconds)
              << " reached while finding the shapes, before any was simulated: no case\n";
    throw ExitCode{1};
  }
  std::cout << "search on " << sched.topology().source() << ": "
            << (r.cut ? "--max-seconds " + fmt("%g", a.max_seconds) + " reached: " : "")
            << render_search_text(r, opt);
  if (r.chosen.empty()) {
    std::cout << "no case discriminates any pair: no config written\n";
    throw ExitCode{1};
  }
  if (a.out.empty()) {
    std::cout << "give --out FILE to write these cases as a `wakebench run` config\n";
    return;
  }
  write_file_atomic(a.out, config_text(r, opt, a, sched));
  std::cout << a.out << "\n";
}

// --duty (with --period-ms, --round-trip-us) and --objective.
void add_objective_options(CLI::App* cmd, SearchArgs& a) {
  auto* duty =
      cmd->add_option("--duty", a.duty,
                      "the busy CPUs busy only this percent of each period (1-99; default: "
                      "throughout): each policy's mix over the busy and idle phases "
                      "(docs/policy-model.md#intermittent); the config gets duty and period_ms")
          ->check(CLI::Range(1, 99));
  cmd->add_option("--period-ms", a.period_ms, "with --duty: the period (1-1000 ms, default 10)")
      ->check(CLI::Range(1, 1000))
      ->needs(duty);
  cmd->add_option("--round-trip-us", a.round_trip_us,
                  "with --duty: the pair's round trip on the target machine, which turns the "
                  "period into wakes (default 100 us)")
      ->check(finite_number)
      ->check(CLI::PositiveNumber)
      ->needs(duty);
  cmd->add_option("--objective", a.objective,
                  "what tells two policies apart: placement (their steady states, default) or "
                  "decisions (one decides otherwise on >= 5 % of the other's wakes)")
      ->check(CLI::IsMember({"placement", "decisions"}));
}

void add_search_command(CLI::App& app) {
  auto a = std::make_shared<SearchArgs>();
  auto* cmd = app.add_subcommand(
      "search",
      "Kernel-placed cases on which the policies' models disagree (start CPUs, cpuset, busy CPUs), "
      "written as a `wakebench run` config (docs/policy-model.md#search)");
  cmd->add_option("--topology", a->topology,
                  "hwloc XML file, e.g. configs/lab/topologies/<preset>.xml (default: the live "
                  "machine)");
  cmd->add_option("--llc-level", a->llc_level, "L3, L2 or cluster: what the scheduler's LLC spans");
  cmd->add_flag("--emulated", a->emulated,
                "the cases run in a qemu TCG guest (the lab): its emulation-only alternatives "
                "apply, as predict applies them to an emulated result set");
  cmd->add_option("--work-ns", a->work_ns,
                  "each side's work before it answers (the work_ns knob, 0-100000000); from " +
                      std::to_string(kSwitchOutWorkNs / 1000) +
                      " us on, the emulated switch-out alternatives no longer apply")
      ->check(CLI::Range(0LL, 100'000'000LL));
  cmd->add_option("--policies", a->policies,
                  "comma-separated policies to tell apart (default: those with a lab kernel: " +
                      join(registry().kernel_policy_ids(), ",") + ")")
      ->check([](const std::string& t) { return t.empty() ? "an empty list of policies" : ""; });
  cmd->add_option("--mechanism", a->mechanism,
                  "the mechanism the cases run (its wake flags decide the model; default pipe)");
  cmd->add_option("--per-pair", a->per_pair, "cases wanted per pair of policies (default 2)");
  cmd->add_option("--per-policy", a->per_policy,
                  "cases wanted per policy, each telling it from another (default 6)");
  cmd->add_option("--max-cases", a->max_cases, "at most this many cases (default 24)");
  cmd->add_option("--max-seconds", a->max_seconds,
                  "stop simulating after this many seconds and choose among the shapes simulated "
                  "so far; the output and the config's record say the search was cut")
      ->check(finite_number)
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--exhaustive", a->exhaustive,
                "simulate every candidate, not one per shape (the reference the shapes are "
                "checked against; slow on large machines)");
  add_objective_options(cmd, *a);
  cmd->add_option("--out", a->out, "write the config here");
  cmd->add_option("--check-shapes", a->check_shapes,
                  "instead of searching, simulate N random candidates directly and check each "
                  "answers as the first member of its shape (where --exhaustive cannot finish); "
                  "exit 2 if one does not")
      ->check(CLI::PositiveNumber);
  cmd->callback([a] { run_search(*a); });
}

}  // namespace

static CommandRegistrar search_reg("search", add_search_command);

}  // namespace wb
