// `wakebench restore`: puts back what runs that ended without restoring (SIGKILL, a crash) left
// changed, from their journals (common/system/journal.h), as the next `wakebench run` would.
#include <cstdio>
#include <memory>
#include <string>

#include "common/system/journal.h"
#include "runners/commands.h"

namespace wb {
namespace {

void add_restore_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>(kStateDir);
  auto any_setting = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "restore",
      "restore the settings (--ab) and tracefs instances (--trace-wakeups) that runs which ended "
      "without restoring them left changed, from their journals in " +
          std::string(kStateDir) + " (a run does this first, too)");
  // Hidden (no group), for tests: the folder of the journals (docs/cli.md#ab-runs).
  cmd->add_option("--state-dir", *dir, "")->group("");
  cmd->add_flag("--ab-any-setting", *any_setting,
                "also restore settings that are not the scheduler's (a run's --ab-any-setting "
                "changed them; without this flag they are left, and said)");
  cmd->callback([dir, any_setting] {
    const Recovered r = recover_journals(*dir, *any_setting);
    if (r.removed == 0 && r.kept == 0)
      std::fprintf(stderr, "wakebench: nothing to restore (no journal of an ended run in %s)\n",
                   dir->c_str());
    if (r.kept > 0) throw ExitCode{2};  // each said why
  });
}

const CommandRegistrar restore_reg("restore", add_restore_command);

}  // namespace
}  // namespace wb
