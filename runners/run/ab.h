// --ab (docs/cli.md#ab-runs): the journal of the settings a run changes, the guard that writes each
// setting before its repetitions and restores every one, one step of the A/B schedule, and what
// set k records of its setting (docs/result-set.md#ab).
#pragma once

#include <memory>

#include "common/schema/result_set_doc.h"
#include "common/system/debugfs_mount.h"
#include "common/system/journal.h"
#include "common/system/settings.h"
#include "runners/run/measured.h"
#include "runners/run/options.h"
#include "runners/run/plan.h"
#include "runners/run/tracing.h"

namespace wb {

// Before anything else: what a run that ended without restoring left changed is restored
// (common/system/journal.h); with --ab or --trace-wakeups, or a debugfs to mount, this run's own
// journal is made, holding the locks of its settings. Null without.
std::unique_ptr<RunJournal> open_journal(const RunArgs& args, const AbPlan& ab);

// debugfs mounted for the run where it is not and the run is root (common/system/debugfs_mount.h;
// its note() is the line to say); null with --no-mount-debugfs or --ab-root (a test's fake tree).
std::unique_ptr<DebugfsMount> mount_debugfs(const RunArgs& args, RunJournal* journal);

// --ab: the SPECs checked against the files (one line, exit 2, before anything runs); it restores
// every knob it changed when it is reset or unwinds. Null without --ab.
std::unique_ptr<SettingsGuard> settings_guard(const RunArgs& args, const AbPlan& ab,
                                              RunJournal* journal);

// One repetition of the schedule. With --ab (`guard`) its setting is written and read back first
// (a read-back that differs from what was written fails the case), and its round and read-back
// are kept beside it. Returns run_repetition's CPU time.
double run_step(CaseState& cs, const AbStep& step, const RunOptions& opts, const CaseTracer& tracer,
                SettingsGuard* guard);

// Set k's `ab` block: nullopt without --ab.
std::optional<AbSet> ab_set(const RunPlan& plan, int k);

}  // namespace wb
