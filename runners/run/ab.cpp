#include "runners/run/ab.h"

#include <unistd.h>

#include "common/system/kernel_files.h"
#include "runners/run/repetition.h"

namespace wb {
namespace {

std::string ab_root(const RunArgs& args) { return args.ab_root.empty() ? "/" : args.ab_root; }

// The run would mount debugfs (mount_debugfs).
bool mounts_debugfs(const RunArgs& args) {
  return !args.no_mount_debugfs && args.ab_root.empty() && geteuid() == 0 &&
         !debugfs_mounted_at("/sys/kernel/debug");
}

}  // namespace

std::unique_ptr<DebugfsMount> mount_debugfs(const RunArgs& args, RunJournal* journal) {
  if (args.no_mount_debugfs || !args.ab_root.empty()) return nullptr;
  return std::make_unique<DebugfsMount>(journal);
}

std::unique_ptr<RunJournal> open_journal(const RunArgs& args, const AbPlan& ab) {
  if (ab.specs.empty() && !args.trace_wakeups && !args.trace_decisions && !mounts_debugfs(args)) {
    try {
      recover_journals(args.state_dir, args.ab_any_setting);
    } catch (const std::runtime_error&) {
      // A folder this user cannot open holds nothing this user's run could restore.
    }
    return nullptr;
  }
  try {
    return std::make_unique<RunJournal>(args.state_dir, ab_root(args), ab);
  } catch (const std::runtime_error& e) {  // a setting a live run holds: std::invalid_argument
    const bool tracing = args.trace_wakeups || args.trace_decisions;
    throw std::runtime_error(std::string(!ab.specs.empty() ? "--ab"
                                         : tracing         ? "--trace-wakeups"
                                                           : "mounting debugfs") +
                             ": the journal of the settings it changes: " + e.what() +
                             (geteuid() != 0 ? " (needs root)" : ""));
  }
}

std::unique_ptr<SettingsGuard> settings_guard(const RunArgs& args, const AbPlan& ab,
                                              RunJournal* journal) {
  if (ab.specs.empty()) return nullptr;
  return std::make_unique<SettingsGuard>(ab, ab_root(args), journal);
}

double run_step(CaseState& cs, const AbStep& step, const RunOptions& opts, const CaseTracer& tracer,
                SettingsGuard* guard) {
  if (!guard) return run_repetition(cs, opts, tracer);
  SettingValues read_back;
  if (const std::string why = guard->apply(step.setting, &read_back); !why.empty()) {
    fail_case(cs.record, why);
    return 0.0;
  }
  const size_t before = cs.record.repetitions.size();
  const double cpu_ns = run_repetition(cs, opts, tracer);
  if (cs.record.repetitions.size() > before)
    cs.record.ab.push_back({step.round, std::move(read_back)});
  return cpu_ns;
}

std::optional<AbSet> ab_set(const RunPlan& plan, int k) {
  if (plan.ab.specs.empty()) return std::nullopt;
  return AbSet{plan.ab_id, k, plan.ab.settings, plan.ab.label(k), plan.ab.values(k), plan.seed};
}

}  // namespace wb
