#include "runners/run/schedule.h"

#include <cstdio>

#include "runners/run/ab.h"
#include "runners/run/progress.h"

namespace wb {
namespace {

// The progress lines and Google Benchmark's entries of a run over its sets.
class Reporter {
 public:
  explicit Reporter(std::vector<SetRun>& sets) : sets_(sets), progress_(records(sets)) {}
  void repetition_done(size_t k, size_t i, double cpu_ns) {
    const CaseRecord& rec = sets_[k].cases[i].record;
    progress_.repetition_done(rec.spec);
    sets_[k].gb.repetition(rec, i, cpu_ns);
  }
  void done(size_t k, size_t i) {
    const CaseRecord& rec = sets_[k].cases[i].record;
    std::fputs(progress_.case_done(rec, set_tag(sets_, k), seconds_since(start_)).c_str(), stderr);
    sets_[k].gb.done(rec, i);
  }

 private:
  static std::vector<const CaseRecord*> records(const std::vector<SetRun>& sets) {
    std::vector<const CaseRecord*> out;
    for (const auto& set : sets)
      for (const auto& c : set.cases) out.push_back(&c.record);
    return out;
  }
  std::vector<SetRun>& sets_;
  Progress progress_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

std::vector<AbStep> run_schedule(const RunPlan& plan) {
  return ab_schedule(plan.repetitions(), plan.ab.settings, plan.seed);
}

bool execute(std::vector<SetRun>& sets, const std::vector<AbStep>& steps, const RunOptions& opts,
             const CaseTracer& tracer, SettingsGuard* guard) {
  Reporter report(sets);
  for (size_t k = 0; k < sets.size(); ++k)
    for (size_t i = 0; i < sets[k].cases.size(); ++i)
      if (CaseRecord& rec = sets[k].cases[i].record;
          !rec.spec.skip_reason.empty() && rec.status == CaseStatus::kOk) {
        rec.status = CaseStatus::kSkipped;
        rec.reason = rec.spec.skip_reason;
        report.done(k, i);
      }
  for (const AbStep& step : steps) {
    if (g_interrupted.load()) break;
    const size_t k = static_cast<size_t>(step.setting), i = step.case_index;
    const CaseRecord& rec = sets[k].cases[i].record;
    if (rec.status != CaseStatus::kOk) continue;  // failed in an earlier repetition
    const double cpu_ns = run_step(sets[k].cases[i], step, opts, tracer, guard);
    if (rec.status == CaseStatus::kOk) report.repetition_done(k, i, cpu_ns);
    if (rec.status != CaseStatus::kOk ||
        static_cast<int>(rec.repetitions.size()) == rec.spec.repetitions)
      report.done(k, i);
  }
  const bool interrupted = g_interrupted.load();
  for (size_t k = 0; interrupted && k < sets.size(); ++k)
    for (size_t i = 0; i < sets[k].cases.size(); ++i) {
      const CaseRecord& rec = sets[k].cases[i].record;
      const auto kept = static_cast<int>(rec.repetitions.size());
      if (rec.status == CaseStatus::kOk && kept > 0 && kept < rec.spec.repetitions)
        report.done(k, i);  // what it finished
    }
  return interrupted;
}

}  // namespace wb
