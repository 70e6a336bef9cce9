// `wakebench run`: config -> cases -> driver, repetitions interleaved -> result set -> summary.
// wakebench owns the loop (docs/architecture.md#architecture): a repetition is one run_case, a
// fixed number of round trips between a fresh pair of tasks; the result set carries Google
// Benchmark's JSON shape (context, benchmarks) so that its tools/compare.py reads it.
//
// This file only wires the parts of runners/run/: the options (options.h), the plan built before
// the first case and const after (plan.h), the schedule (schedule.h) with --ab (ab.h) or
// --until-decided (until_decided.h), the repetitions (repetition.h) with their tracing
// (tracing.h) and progress (progress.h), and the result sets built after from the plan and what
// was measured (measured.h, result.h).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>

#include "common/system/environment_capture.h"
#include "common/system/idle_latency.h"
#include "common/system/kernel_files.h"
#include "common/util/text.h"
#include "runners/commands.h"
#include "runners/run/ab.h"
#include "runners/run/measured.h"
#include "runners/run/options.h"
#include "runners/run/plan.h"
#include "runners/run/progress.h"
#include "runners/run/result.h"
#include "runners/run/schedule.h"
#include "runners/run/tracing.h"
#include "runners/run/until_decided.h"

namespace wb {
namespace {

void on_signal(int) { g_interrupted.store(true); }

// SIGINT, SIGTERM, SIGHUP (the terminal gone) and SIGPIPE (stderr's reader gone) alike stop the
// run: the running case's tasks are killed, the set is written marked incomplete and the settings
// restored; a write to a gone reader then fails (EPIPE) instead of killing the run.
void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;  // no SA_RESTART: the supervisor's poll returns EINTR
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaction(sig, &sa, nullptr);
}

// This process's command line as it was given (NUL-separated in /proc/self/cmdline); empty when
// it cannot be read.
std::vector<std::string> own_command_line() {
  std::string why;
  const auto text = read_text_file("/proc/self/cmdline", &why);
  std::vector<std::string> out;
  if (!text) return out;
  for (std::size_t at = 0; at < text->size();) {
    const std::size_t end = std::min(text->find('\0', at), text->size());
    out.push_back(text->substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The moment the plan is made in: the command line, the UTC second, this process, and without
// --seed a random seed.
RunMoment now(const RunArgs& args) {
  return {own_command_line(), format_utc(std::time(nullptr), "%Y%m%dT%H%M%SZ"),
          static_cast<int>(getpid()), args.seed ? *args.seed : std::random_device{}()};
}

void run_command(const RunArgs& args) {
  ::signal(SIGPIPE, SIG_IGN);  // until install_signal_handlers: a gone stderr fails, never kills
  // Everything that can refuse the run does before it measures anything (one line, exit 2).
  check_options(args);
  AbPlan ab = parse_ab_plan(args.ab, args.ab_any_setting);
  const std::unique_ptr<RunJournal> journal = open_journal(args, ab);
  RunInputs inputs = load_inputs(args);
  const std::unique_ptr<WakeupTraceSession> session = open_trace_session(
      tracing_choice(args), journal.get(),
      parse_recorder_choice(args.decision_recorder).value_or(RecorderChoice::kAuto));
  if (session) inputs.decisions_unavailable = session->decisions_unavailable();
  const RunPlan plan = make_plan(args, std::move(inputs), std::move(ab), now(args));
  check_targets(plan, args);
  // debugfs mounted for the run, before --ab's debugfs files are checked and the environment read.
  const std::unique_ptr<DebugfsMount> debugfs = mount_debugfs(args, journal.get());
  install_signal_handlers();  // before the trial writes, so an interruption reaches the restore
  std::unique_ptr<SettingsGuard> guard = settings_guard(args, plan.ab, journal.get());
  // Held until the run returns: the CPUs stay out of idle states deeper than the limit.
  std::optional<IdleLatencyGuard> idle_guard;
  if (plan.idle_latency_us) idle_guard.emplace(*plan.idle_latency_us);

  Measured run;
  run.env = capture_environment({plan.measured_cpus(), plan.in.config.text, plan.idle_latency_us});
  run.sets = start_sets(plan, run.env);
  if (plan.in.until) check_comparable(plan, run.env, run.sets[0]);
  std::fputs(announcement(plan, run.env).c_str(), stderr);
  if (debugfs && !debugfs->note().empty())  // said once nothing refuses the run any more
    std::fputs(wrap("wakebench: note: " + debugfs->note(), "").c_str(), stderr);
  const CaseTracer tracer{session.get(), &plan.in.topo, plan.tracing == Tracing::kDecisions};
  if (plan.in.until)
    execute_until_decided(plan, run, tracer);
  else
    run.interrupted = execute(run.sets, run_schedule(plan), plan.in.opts, tracer, guard.get());
  guard.reset();
  if (const int status = write_and_print(plan, run)) throw ExitCode{status};
}

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* sub = app.add_subcommand("run", "run a suite and write a result set");
  add_run_options(*sub, *args);
  sub->allow_extras();
  sub->callback([args, sub] {
    args->extras = sub->remaining();
    run_command(*args);
  });
}

const CommandRegistrar run_reg("run", add_run_command);

}  // namespace
}  // namespace wb
