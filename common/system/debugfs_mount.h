// debugfs for a run (docs/cli.md#ab-runs, "The journal"): where nothing is mounted at
// /sys/kernel/debug and the run is root, `run` mounts debugfs there for the run, so the set
// records the sched domains, sched features and preemption model read there, and unmounts it at
// the end (`run --no-mount-debugfs` leaves it unmounted). Journalled like every setting: the
// journal says "change mount:/sys/kernel/debug -" before the mount, so a run killed before its
// unmount has it unmounted by the next run or `wakebench restore`. A kernel in lockdown
// (confidentiality) mounts debugfs but refuses most reads of it: the set then says so per item.
// A second run that finds debugfs mounted leaves it as it is; the run that mounted it unmounts it
// at its own end.
#pragma once

#include <string>

namespace wb {

class RunJournal;

// The journal's key of a mount a run made: "mount:" + its folder.
std::string mount_key(const std::string& dir);
// Unmounts the debugfs at `dir` (a folder ending in /sys/kernel/debug: what a run mounts; detached
// when busy). "" when done or nothing was mounted there, else why not.
std::string unmount_debugfs(const std::string& dir);

class DebugfsMount {
 public:
  // Mounts debugfs at `root`/sys/kernel/debug when none is mounted there and this process is
  // root, writing it down in `journal` (may be null) first; otherwise does nothing. Never throws
  // for a mount that fails: note() says why.
  explicit DebugfsMount(RunJournal* journal, const std::string& root = "/");
  // Unmounts what it mounted, and writes down the restore; says on stderr when it cannot.
  ~DebugfsMount();
  DebugfsMount(const DebugfsMount&) = delete;
  DebugfsMount& operator=(const DebugfsMount&) = delete;

  bool mounted() const { return mounted_; }
  // One line: what it did, or why it could not ("" when debugfs was mounted already, or the run
  // is not root: the set's items say how to mount it).
  const std::string& note() const { return note_; }

 private:
  RunJournal* journal_;
  std::string dir_, note_;
  bool mounted_ = false;
};

}  // namespace wb
