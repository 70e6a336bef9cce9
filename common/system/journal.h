// The journal of the settings a run changes (docs/cli.md#ab-runs, "The journal"). Before a run
// writes a sysctl, sched feature or debugfs file (--ab), creates its tracefs instance
// (--trace-wakeups) or mounts debugfs (common/system/debugfs_mount.h), it writes down what it will
// change and how to undo it (the value read before, the instance to remove) in a journal of the
// state folder, /run/wakebench (a tmpfs: gone at reboot), named and stamped with the boot id, and
// holds it under a lock (flock) while it lives; it removes the journal once it has restored
// everything. A run killed before that (SIGKILL, a crash) leaves it: the next run, or `wakebench
// restore`, restores it before anything else when its boot id is this boot's and no live run holds
// its lock. Each setting has a lock of its own there too: a second run that would change a setting
// a live run holds is refused.
//
// The folder's own lock (flock on the folder) serializes what runs do there: a run takes the
// locks of its settings, then restores what dead runs left, then creates its journal, all under
// it. So whoever next takes a setting a dead run held restores it first.
//
// A journal is text, one record a line; a torn last line (a crash mid-write) is left out:
//   wakebench-journal 1
//   boot 2c1a...          (/proc/sys/kernel/random/boot_id)
//   pid 1234
//   root /                (the root of the settings' files: --ab-root in tests)
//   change sysctl:kernel.sched_rr_timeslice_ms 100     (key, the value to write back)
//   change tracefs:/sys/kernel/tracing/instances/wakebench-1234 -
//   change mount:/sys/kernel/debug -                    (a debugfs mount to undo)
//   restored sysctl:kernel.sched_rr_timeslice_ms
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "common/util/sys.h"

namespace wb {

struct AbPlan;

// Where the journals and locks are (`--state-dir`, hidden, points tests elsewhere).
inline constexpr const char* kStateDir = "/run/wakebench";

// The key of a tracefs instance's entry: "tracefs:" + its folder.
std::string tracefs_key(const std::string& instance_dir);

// What recover_journals did: journals restored and removed, and journals kept because something
// in them could not be restored (or they could not be read).
struct Recovered {
  int removed = 0, kept = 0;
};
// Restores every journal in `dir` that no live run holds (under the folder's lock) and says on
// stderr what it restored or removed, or why it kept one. A journal is read as any input: a
// regular file, its settings the scheduler's (any setting with `any_setting`, as a run's
// --ab-any-setting), its values those a run writes; a setting that already holds its value is
// not written. A folder that does not exist holds none. Throws std::runtime_error when the folder
// exists but cannot be opened or locked.
Recovered recover_journals(const std::string& dir, bool any_setting = false);

// One run's journal, created with the locks of the run's --ab settings (none without --ab).
class RunJournal {
 public:
  // Creates `dir` (0700) when it is missing; throws std::runtime_error naming it when it cannot,
  // std::invalid_argument("--ab SPEC: ...") when a live run holds one of the settings.
  RunJournal(const std::string& dir, const std::string& root, const AbPlan& plan);
  // Removes the journal when every change has been restored (else keeps it, and says so), and
  // releases the locks. Only the process that made it does.
  ~RunJournal();
  RunJournal(const RunJournal&) = delete;
  RunJournal& operator=(const RunJournal&) = delete;

  // Writes down (synced) that `key` is about to change and `value` restores it. Throws
  // std::runtime_error naming the journal.
  void record(const std::string& key, const std::string& value);
  // Writes down that `key` holds its value from before again (a key never recorded: nothing).
  void restored(const std::string& key) noexcept;
  const std::string& path() const { return path_; }

 private:
  void open(const std::string& root, const AbPlan& plan);  // under the folder's lock
  void lock_settings(const AbPlan& plan);
  void create(const std::string& root);
  void append(const std::string& line);
  // Removes and unlocks the settings' lock files, then the folder if nothing is left in it.
  void release() noexcept;
  std::string dir_, path_;
  Fd fd_;                                           // the journal, locked
  std::vector<std::pair<std::string, Fd>> locks_;   // each setting's lock file, locked
  std::vector<std::pair<std::string, bool>> keys_;  // recorded: key, restored
  pid_t owner_;
};

}  // namespace wb
