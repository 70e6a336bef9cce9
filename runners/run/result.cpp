#include "runners/run/result.h"

#include <cstdio>
#include <filesystem>

#include "analysis/predict/replay_io.h"
#include "analysis/report/summary.h"
#include "common/schema/placement.h"
#include "common/schema/result_set.h"
#include "common/system/schedstat.h"
#include "common/util/output_file.h"
#include "runners/run/ab.h"
#include "runners/run/gb_output.h"
#include "runners/run/repetition.h"

namespace wb {
namespace {

// A case as the set records it: its schedstat windows added up and, traced, its trace.
CaseRecord case_record(const RunPlan& plan, const CaseState& cs) {
  CaseRecord rec = cs.record;
  if (!cs.schedstat_window.empty()) rec.schedstat = sum_schedstat(cs.schedstat_window);
  if (plan.tracing != Tracing::kNone && rec.spec.by_kernel() && rec.status == CaseStatus::kOk)
    rec.trace = case_trace(cs.trace, cs.trace_error);
  return rec;
}

nlohmann::ordered_json cases_json(const RunPlan& plan, const SetRun& set) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& cs : set.cases) {
    if (cs.record.status == CaseStatus::kOk && cs.record.repetitions.empty()) continue;
    out.push_back(case_json(case_record(plan, cs), plan.in.topo));
  }
  return out;
}

// Set k's parts known before its first case: the machine, its topology, its A/B setting.
ResultSetDoc set_frame(const RunPlan& plan, const nlohmann::json& env, size_t k) {
  ResultSetDoc d;
  d.schema = kResultSchema;
  d.schema_version = kResultSchemaVersion;
  d.environment = env;
  d.cases = nlohmann::ordered_json::array();
  d.ab = ab_set(plan, static_cast<int>(k));
  const Topology& topo = plan.in.topo;
  d.topology =
      TopologyRecord{topology_json(topo, choose_pairs(topo, plan.pairs_per_class)), topo.xml()};
  return d;
}

// Set k as written: its frame, its cases and the run's description.
ResultSetDoc whole_doc(const RunPlan& plan, const Measured& run, size_t k) {
  ResultSetDoc d = set_frame(plan, run.env, k);
  d.cases = cases_json(plan, run.sets[k]);
  d.complete = !run.interrupted;
  d.context = gb_context(std::filesystem::read_symlink("/proc/self/exe").string());
  d.benchmarks = run.sets[k].gb.json();
  d.run = RunOrder{"interleaved", plan.seed, plan.command};
  d.until_decided = run.until_decided;
  d.config = ConfigRecord{plan.in.config_path, plan.in.config.name, plan.in.config.json, {}};
  if (plan.in.noise) {  // compare holds this set's cases to it when the set is the baseline
    d.noise = noise_json(*plan.in.noise);
    (*d.noise)["from"] = plan.noise_path;
  }
  return d;
}

}  // namespace

ResultSetDoc run_doc(const RunPlan& plan, const nlohmann::json& env, const SetRun& set) {
  ResultSetDoc d = set_frame(plan, env, 0);  // --until-decided, its one user, takes no --ab
  d.cases = cases_json(plan, set);
  return d;
}

RunReplayer replayer_of(const RunPlan& plan, const nlohmann::json& env, size_t k) {
  const ResultSet frame = typed_result_set(set_frame(plan, env, k), "this run");
  return RunReplayer(sched_topology_of(frame), policy_by_id(kernel_policy(frame)),
                     set_features(frame).model);
}

namespace {

// Each kernel case's recorded decisions, replayed as they came, on its line of the predictions.
void add_replays(ResultsPrediction& p, const DecisionSide& side) {
  try {
    attach_replays(p, side.replays());
  } catch (const std::exception& e) {
    p.replay_unavailable = e.what();
  }
}

// A run in which no case was measured says so. When some failed it exits 1 (the set still written,
// with each case's reason), so that a script never takes it for a measurement; when all were
// skipped (this machine lacks what they need) that is its answer, exit 0.
bool nothing_measured(const Measured& run) {
  std::size_t failed = 0, skipped = 0;
  for (const SetRun& set : run.sets)
    for (const CaseState& cs : set.cases) {
      if (cs.record.status == CaseStatus::kOk && !cs.record.repetitions.empty()) return false;
      failed += cs.record.status == CaseStatus::kFailed;
      skipped += cs.record.status == CaseStatus::kSkipped;
    }
  std::fprintf(stderr, "wakebench: no case was measured (%zu failed, %zu skipped)\n", failed,
               skipped);
  return failed > 0;
}

}  // namespace

SetOut result_set(const RunPlan& plan, const Measured& run, size_t k,
                  std::optional<DecisionsRecord> decisions) {
  ResultSetDoc d = whole_doc(plan, run, k);
  d.decisions = std::move(decisions);
  // The predictor reads only the result set (data flows one way); its answer goes into the set.
  SetOut out;
  try {
    out.rs = typed_result_set(std::move(d), "this run");
    out.predictions = predict_for_results(out.rs);
    if (out.rs.set.decisions && run.sets[k].decisions)
      add_replays(*out.predictions, *run.sets[k].decisions);
    out.predictions_text = render_results_text(*out.predictions);
    out.rs.set.predictions = to_json(*out.predictions);
  } catch (const std::exception& e) {
    if (out.rs.set.schema.empty()) out.rs.set = std::move(d);  // a case did not parse: no views
    out.rs.set.predictions = {{"unavailable", e.what()}};
    out.predictions_text = std::string("predictions unavailable: ") + e.what() + "\n";
  }
  return out;
}

int write_and_print(const RunPlan& plan, Measured& run) {
  std::string paths, warnings;
  for (size_t k = 0; k < run.sets.size(); ++k) {
    // The side file is published first: the set names it, and its replays join the predictions.
    std::optional<DecisionsRecord> decisions;
    if (run.sets[k].decisions) decisions = run.sets[k].decisions->publish();
    SetOut out = result_set(plan, run, k, std::move(decisions));
    const std::string text = result_set_json(out.rs.set).dump(1) + "\n";
    const Saved saved =
        write_or_fallback(plan.targets[k].path, plan.targets[k].stem, ".json", text);
    if (!plan.ab.specs.empty())
      std::fprintf(stderr, "\nA/B setting %zu of %d: %s (%s)", k, plan.ab.settings,
                   plan.ab.label(static_cast<int>(k)).c_str(),
                   saved.path.empty() ? "standard output" : saved.path.c_str());
    std::fprintf(stderr, "\n%s\n%s\n%s", summary_table(out.rs, plan.show).c_str(),
                 out.predictions_text.c_str(),
                 claims_table(out.rs, out.predictions ? &*out.predictions : nullptr).c_str());
    if (!saved.warning.empty()) warnings += "wakebench: warning: " + saved.warning + "\n";
    paths += (saved.path.empty() ? text : saved.path + "\n");
  }
  std::fputs(warnings.c_str(), stderr);
  std::fputs(paths.c_str(), stdout);
  if (!warnings.empty()) return 2;
  if (run.interrupted) {
    std::fprintf(stderr, "wakebench: interrupted; the result set is marked incomplete\n");
    return 130;
  }
  return nothing_measured(run) ? 1 : 0;
}

}  // namespace wb
