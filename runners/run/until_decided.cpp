#include "runners/run/until_decided.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "analysis/compare/compare.h"
#include "runners/run/progress.h"
#include "runners/run/result.h"
#include "runners/run/schedule.h"

namespace wb {
namespace {

// The level the looks spend in all: compare's. A function, not a namespace-scope constant: a
// CompareOptions built during static initialization would read parse_metric's tables before they
// exist (ASan's initialization-order check caught it).
double looks_alpha() { return CompareOptions{}.alpha; }

// What compare reads of this run so far: its cases and environment (no predictions, no benchmark
// entries: those are for the set written at the end).
ResultSet so_far(const RunPlan& plan, const nlohmann::json& env, const SetRun& set) {
  return typed_result_set(run_doc(plan, env, set), "this run");
}

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

// The procedure's state while the run goes.
struct Looks {
  const RunPlan& plan;
  const nlohmann::json& env;
  SequentialRun seq;
  size_t batches = 0;  // case batches run so far (one case's repetitions of one look)
};

// One look: this run so far against the baseline at the look's level. Returns the cases that go
// on and prints where the run stands.
std::vector<size_t> take_look(Looks& ud, const SetRun& set, size_t look, double elapsed_s) {
  const ResultSet partial = so_far(ud.plan, ud.env, set);
  CompareOptions options;
  options.level = ud.seq.level(look);
  const Comparison cmp = compare_result_sets({ud.plan.in.until->base, partial}, options);
  const std::vector<size_t> go_on = cases_of(set, partial, ud.seq.look(cmp, look));
  const auto n = ud.seq.counts();
  // The next look's ETA: its cases at the mean time of a case batch so far.
  const double next_s = go_on.empty() || look == ud.seq.looks()
                            ? -1
                            : elapsed_s / static_cast<double>(std::max<size_t>(ud.batches, 1)) *
                                  static_cast<double>(go_on.size());
  const LookCounts counts{look,
                          ud.seq.looks(),
                          *options.level,
                          n.at(CompareVerdict::kDifferent),
                          n.at(CompareVerdict::kSame),
                          n.at(CompareVerdict::kUnknown),
                          go_on.size()};
  std::fputs(look_line(counts, elapsed_s, ud.plan.in.until->budget_s, next_s).c_str(), stderr);
  return go_on;
}

}  // namespace

// Every planned case as the set will name it, each marked skipped (nothing measured yet).
ResultSet planned(const RunPlan& plan, const nlohmann::json& env, const SetRun& set) {
  SetRun all;
  all.cases = set.cases;
  for (CaseState& cs : all.cases)
    if (cs.record.status == CaseStatus::kOk) {
      cs.record.status = CaseStatus::kSkipped;
      cs.record.reason = "not run yet";
    }
  return typed_result_set(run_doc(plan, env, all), "this run");
}

void check_comparable(const RunPlan& plan, const nlohmann::json& env, const SetRun& set) {
  const ResultSet& base = plan.in.until->base;
  try {
    compare_result_sets({base, so_far(plan, env, set)}, CompareOptions{});
    compare_result_sets({base, planned(plan, env, set)}, CompareOptions{});
  } catch (const std::exception& e) {
    throw std::invalid_argument("--until-decided " + base.path + ": cannot be compared with " +
                                "this run: " + e.what());
  }
}

void execute_until_decided(const RunPlan& plan, Measured& run, const CaseTracer& tracer) {
  const UntilDecidedPlan& until = *plan.in.until;
  Looks ud{plan, run.env, SequentialRun(until.looks, looks_alpha())};
  const auto start = std::chrono::steady_clock::now();
  SetRun& set = run.sets[0];
  const std::vector<int> batch = plan.repetitions();
  std::vector<size_t> active;
  for (size_t i = 0; i < plan.cases.size(); ++i)
    if (plan.cases[i].spec.skip_reason.empty()) active.push_back(i);
  size_t look = 0;
  double elapsed = 0;
  while (!active.empty() && look < ud.seq.looks() && elapsed < until.budget_s && !run.interrupted) {
    std::vector<int> reps(set.cases.size(), 0);
    for (size_t i : active) {
      reps[i] = batch[i];
      if (look > 0) set.cases[i].record.spec.repetitions += batch[i];
    }
    run.interrupted =
        execute(run.sets, ab_schedule(reps, 1, plan.seed + look), plan.in.opts, tracer, nullptr);
    ud.batches += active.size();
    elapsed = seconds_since(start);
    if (!run.interrupted) active = take_look(ud, set, ++look, elapsed);
  }
  run.until_decided = until_decided_record(until, ud.seq, look, elapsed);
}

UntilDecidedRecord until_decided_record(const UntilDecidedPlan& until, const SequentialRun& seq,
                                        size_t looks, double elapsed_s) {
  const auto n = seq.counts();
  return UntilDecidedRecord{until.base.path,
                            static_cast<int64_t>(looks),
                            static_cast<int64_t>(seq.looks()),
                            until.budget_s,
                            elapsed_s,
                            looks_alpha(),
                            {{"DIFFERENT", n.at(CompareVerdict::kDifferent)},
                             {"SAME", n.at(CompareVerdict::kSame)},
                             {"UNKNOWN", n.at(CompareVerdict::kUnknown)}},
                            seq.json()};
}

}  // namespace wb
