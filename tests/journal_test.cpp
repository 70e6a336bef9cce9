// The journal of the settings a run changes (common/system/journal.h), against a fake root tree
// and a state folder of the test's own: what a run writes down before it changes a setting, what
// a later run restores from a run that ended without restoring, the lock per setting, and what is
// left alone (a live run's journal) or removed without a word of restoring (another boot's).
#include "common/system/journal.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/system/debugfs_mount.h"
#include "common/system/kernel_files.h"
#include "common/system/settings.h"
#include "common/system/tracefs.h"
#include "tests/support.h"

namespace {

namespace fs = std::filesystem;
using wb::test::slurp;

class Journal : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = wb::test::fresh_test_dir("wb-journal");
    fs::create_directories(dir_ / "root/proc/sys/kernel");
    put("root/proc/sys/kernel/sched_fake", "7\n");
    state_ = (dir_ / "state").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void put(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  std::string sysctl() { return slurp(dir_ / "root/proc/sys/kernel/sched_fake"); }
  std::string root() { return (dir_ / "root").string(); }
  wb::AbPlan plan() { return wb::parse_ab_plan({"sysctl:kernel.sched_fake=1,2"}); }
  // The names in the state folder, sorted.
  std::vector<std::string> state_files() {
    std::vector<std::string> out;
    if (fs::exists(state_))
      for (const auto& e : fs::directory_iterator(state_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
  // A run that switches the sysctl to 1 and ends without restoring (as SIGKILL ends it: no
  // destructor runs). Returns its pid, reaped.
  pid_t dead_run() {
    const pid_t pid = fork();
    if (pid == 0) {
      auto* j = new wb::RunJournal(state_, root(), plan());
      auto* g = new wb::SettingsGuard(plan(), root(), j);
      wb::SettingValues rb;
      _exit(g->apply(0, &rb).empty() ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return pid;
  }
  fs::path dir_;
  std::string state_;
};

std::string boot_id() {
  std::string id = slurp("/proc/sys/kernel/random/boot_id");
  while (!id.empty() && id.back() == '\n') id.pop_back();
  return id;
}

// Written before the first change (the trial writes included), removed with the locks after the
// restore: nothing is left in the folder.
TEST_F(Journal, IsWrittenBeforeTheChangeAndRemovedAfterTheRestore) {
  {
    wb::RunJournal j(state_, root(), plan());
    const std::string name = boot_id() + "-" + std::to_string(getpid()) + ".journal";
    EXPECT_EQ(state_files(), (std::vector<std::string>{name, "sysctl:kernel.sched_fake.lock"}));
    wb::SettingsGuard g(plan(), root(), &j);
    EXPECT_EQ(slurp(j.path()), "wakebench-journal 1\nboot " + boot_id() + "\npid " +
                                   std::to_string(getpid()) + "\nroot " + root() +
                                   "\nchange sysctl:kernel.sched_fake 7\n");
    wb::SettingValues rb;
    ASSERT_EQ(g.apply(1, &rb), "");
    EXPECT_EQ(sysctl(), "2\n");
  }
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_TRUE(state_files().empty());
}

// A run that ended without restoring: the next one restores its journal first, and removes it.
TEST_F(Journal, ALaterRunRestoresWhatAnEndedRunLeft) {
  const pid_t pid = dead_run();
  EXPECT_EQ(sysctl(), "1\n");
  EXPECT_EQ(state_files(),
            (std::vector<std::string>{boot_id() + "-" + std::to_string(pid) + ".journal",
                                      "sysctl:kernel.sched_fake.lock"}))
      << "the journal stays, and the lock file, unlocked with its run";
  {
    testing::internal::CaptureStderr();
    wb::RunJournal next(state_, root(), plan());
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err, "wakebench: restored what run " + std::to_string(pid) +
                       " left changed: sysctl:kernel.sched_fake to 7\n");
    EXPECT_EQ(sysctl(), "7\n") << "restored before this run reads its own originals";
  }
  EXPECT_TRUE(state_files().empty());
}

TEST_F(Journal, RecoverRestoresAndCounts) {
  dead_run();
  testing::internal::CaptureStderr();
  const wb::Recovered r = wb::recover_journals(state_);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.removed, 1);
  EXPECT_EQ(r.kept, 0);
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_TRUE(state_files().empty());
  const wb::Recovered none = wb::recover_journals((dir_ / "no-such-folder").string());
  EXPECT_EQ(none.removed + none.kept, 0);
}

// A live run's journal is its own: nobody restores it under it. Its settings are locked.
TEST_F(Journal, ALiveRunsJournalAndSettingsAreLeftAlone) {
  wb::RunJournal live(state_, root(), plan());
  wb::SettingsGuard g(plan(), root(), &live);
  wb::SettingValues rb;
  ASSERT_EQ(g.apply(0, &rb), "");
  const wb::Recovered r = wb::recover_journals(state_);
  EXPECT_EQ(r.removed + r.kept, 0);
  EXPECT_EQ(sysctl(), "1\n");
  try {
    wb::RunJournal second(state_, root(), plan());
    FAIL() << "a second run took the same setting";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "--ab sysctl:kernel.sched_fake=1,2: run " + std::to_string(getpid()) +
                  " is switching this setting (lock " + state_ + "/sysctl:kernel.sched_fake.lock)");
  }
  // Another setting is free (for another process: one journal a process).
  const pid_t other = fork();
  if (other == 0) {
    wb::RunJournal j(state_, root(), wb::parse_ab_plan({"sysctl:kernel.sched_other=1,2"}));
    _exit(0);
  }
  int status = 0;
  waitpid(other, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// Another boot's journal: what it changed ended with that boot; nothing is written.
TEST_F(Journal, AnotherBootsJournalIsRemovedUnrestored) {
  fs::create_directories(state_);
  put("state/x.journal", "wakebench-journal 1\nboot 00000000-0000\npid 12\nroot " + root() +
                             "\nchange sysctl:kernel.sched_fake 3\n");
  testing::internal::CaptureStderr();
  const wb::Recovered r = wb::recover_journals(state_);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.removed, 1);
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_NE(err.find("of another boot (nothing to restore)"), std::string::npos) << err;
  EXPECT_TRUE(state_files().empty());
}

// A torn last line is left out (the change it began was never made); restored changes are not
// written again; a journal that does not read, or names no wakebench instance, is kept.
TEST_F(Journal, ReadsWhatWasWholeAndKeepsWhatItCannotRestore) {
  fs::create_directories(state_);
  const std::string head =
      "wakebench-journal 1\nboot " + boot_id() + "\npid 12\nroot " + root() + "\n";
  put("state/a.journal", head +
                             "change sysctl:kernel.sched_fake 5\nchange sysctl:kernel.sched_x 4\n"
                             "restored sysctl:kernel.sched_x\nchange sysctl:kernel.sched_y 9");
  put("state/b.journal", "wakebench-journal 1\nbogus\n");
  put("state/c.journal", head + "change tracefs:/etc -\n");
  put("state/d.journal", head + "change tracefs:/no/instances/wakebench-99999999 -\n");
  testing::internal::CaptureStderr();
  const wb::Recovered r = wb::recover_journals(state_);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.removed, 2) << err;
  EXPECT_EQ(r.kept, 2) << err;
  EXPECT_EQ(sysctl(), "5\n");
  EXPECT_FALSE(fs::exists(dir_ / "root/proc/sys/kernel/sched_x"));
  EXPECT_EQ(state_files(), (std::vector<std::string>{"b.journal", "c.journal"}));
  EXPECT_NE(err.find("journal " + state_ +
                     "/b.journal is unreadable (line 2: unexpected "
                     "\"bogus\"): kept"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("tracefs instance /etc removed: not a wakebench tracefs instance"),
            std::string::npos)
      << err;
}

// A setting the kernel refuses to write at all (here /proc/self/setgroups, which refuses every
// write in the first user namespace with EPERM, behind the fake sysctl): the run is refused with
// the kernel's reason and leaves no journal. Before, the write-back of the unchanged value failed
// too and the journal stayed for every later run.
TEST_F(Journal, ASettingTheKernelRefusesLeavesNoJournal) {
  fs::remove(dir_ / "root/proc/sys/kernel/sched_fake");
  fs::create_symlink("/proc/self/setgroups", dir_ / "root/proc/sys/kernel/sched_fake");
  if (geteuid() != 0 || sysctl() != "allow\n") GTEST_SKIP() << "needs root and setgroups";
  {
    const wb::AbPlan refused = wb::parse_ab_plan({"sysctl:kernel.sched_fake=deny,deny"});
    wb::RunJournal j(state_, root(), refused);
    try {
      wb::SettingsGuard g(refused, root(), &j);
      FAIL() << "the kernel took the value";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("the kernel refuses deny (write "), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(sysctl(), "allow\n");
  EXPECT_TRUE(state_files().empty());
}

// A journal is input like any other: a setting that is not the scheduler's is left (and said)
// unless restore is told --ab-any-setting; a value no run writes, a control character or a FIFO
// named like a journal is refused, and nothing hangs or is written.
TEST_F(Journal, ACraftedJournalIsNotTrusted) {
  fs::create_directories(state_);
  put("root/proc/sys/kernel/core_pattern", "core\n");
  const std::string head =
      "wakebench-journal 1\nboot " + boot_id() + "\npid 12\nroot " + root() + "\n";
  put("state/a.journal", head + "change sysctl:kernel.core_pattern safe\n");
  put("state/b.journal", head + "change sysctl:kernel.sched_fake |/tmp/x\n");
  put("state/c.journal", "wakebench-journal 1\nboot " + boot_id() + "\npid 1\x1b[2J\n");
  ASSERT_EQ(mkfifo((dir_ / "state/d.journal").c_str(), 0600), 0);
  testing::internal::CaptureStderr();
  const wb::Recovered r = wb::recover_journals(state_);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.kept, 3) << err;
  EXPECT_EQ(slurp(dir_ / "root/proc/sys/kernel/core_pattern"), "core\n");
  EXPECT_EQ(sysctl(), "7\n");
  EXPECT_NE(err.find("sysctl:kernel.core_pattern to safe: not one of the scheduler's settings"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("refused: \"|/tmp/x\""), std::string::npos) << err;
  EXPECT_NE(err.find("c.journal is unreadable (line 3"), std::string::npos) << err;
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << err;
  EXPECT_NE(err.find("d.journal is not a regular file"), std::string::npos) << err;
  testing::internal::CaptureStderr();
  const wb::Recovered any = wb::recover_journals(state_, true);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(any.removed, 1);
  EXPECT_EQ(slurp(dir_ / "root/proc/sys/kernel/core_pattern"), "safe\n");
}

// A state folder that cannot be made: one line naming it.
TEST_F(Journal, AFolderThatCannotBeMadeIsOneLine) {
  put("file", "");
  try {
    wb::RunJournal j((dir_ / "file/state").string(), root(), plan());
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "state folder " + (dir_ / "file/state").string() +
                                         ": cannot create it: Not a directory");
  }
}

// A SIGKILLed --trace-wakeups run leaves its tracefs instance: its journal names it, and the next
// `wakebench restore` (as the next run) removes it. Before, it stayed enabled until the next
// traced run.
TEST_F(Journal, AKilledTracedRunsInstanceIsRemovedByRestore) {
  std::string instances;
  try {
    wb::WakeupTraceSession probe;  // removed at the end of this scope
    instances = fs::path(probe.instance_dir()).parent_path().string();
  } catch (const std::exception& e) {
    GTEST_SKIP() << "no tracing here: " << e.what();
  }
  put("k.json", R"({"schema_version": 1, "name": "k",
    "defaults": {"round_trips": 30000000, "warmup": 20, "repetitions": 1, "timeout_s": 120},
    "cases": [{"mechanisms": ["pipe"], "modes": ["threads"], "placements": ["kernel"]}]})");
  const pid_t pid = fork();
  if (pid == 0) {
    freopen((dir_ / "stderr").c_str(), "w", stderr);
    freopen("/dev/null", "w", stdout);
    execl(WB_BINARY, WB_BINARY, "run", "--config", (dir_ / "k.json").c_str(), "--out",
          (dir_ / "r.json").c_str(), "--events", "none", "--trace-wakeups", "--no-mount-debugfs",
          "--state-dir", state_.c_str(), nullptr);
    _exit(127);
  }
  const fs::path instance = instances + "/wakebench-" + std::to_string(pid);
  for (int i = 0; i < 3000 && wb::test::children_of(pid).empty(); ++i) usleep(10'000);
  ASSERT_FALSE(wb::test::children_of(pid).empty()) << "no case started: " << slurp(dir_ / "stderr");
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(fs::exists(instance)) << "the kill left the instance";
  const std::string restore = std::string(WB_BINARY) + " restore --state-dir " + state_ + " 2>" +
                              (dir_ / "stderr").string();
  EXPECT_EQ(std::system(restore.c_str()), 0);
  EXPECT_EQ(slurp(dir_ / "stderr"), "wakebench: restored what run " + std::to_string(pid) +
                                        " left changed: tracefs instance " + instance.string() +
                                        " removed\n");
  EXPECT_FALSE(fs::exists(instance));
  EXPECT_TRUE(state_files().empty());
}

// debugfs mounted for a run at the fake root's sys/kernel/debug, in a mount namespace of this
// test's own (its mounts are seen by no other process, and end with it). Skipped where the test
// cannot mount (not root, no CAP_SYS_ADMIN).
class DebugfsJournal : public Journal {
 protected:
  void SetUp() override {
    Journal::SetUp();
    if (geteuid() != 0) GTEST_SKIP() << "mounting debugfs needs root";
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr))
      GTEST_SKIP() << "no mount namespace of its own: " << std::strerror(errno);
    fs::create_directories(debug());
  }
  void TearDown() override {
    while (wb::debugfs_mounted_at(debug())) umount2(debug().c_str(), MNT_DETACH);
    Journal::TearDown();
  }
  std::string debug() { return (dir_ / "root/sys/kernel/debug").string(); }
};

TEST_F(DebugfsJournal, IsMountedForTheRunAndUnmountedAfterJournalled) {
  wb::RunJournal j(state_, root(), wb::AbPlan{});
  {
    wb::DebugfsMount m(&j, root());
    ASSERT_TRUE(m.mounted()) << m.note();
    EXPECT_TRUE(wb::debugfs_mounted_at(debug()));
    EXPECT_NE(m.note().find("debugfs mounted at " + debug() + " for the run"), std::string::npos);
    EXPECT_NE(slurp(j.path()).find("\nchange mount:" + debug() + " -\n"), std::string::npos);
  }
  EXPECT_FALSE(wb::debugfs_mounted_at(debug()));
  EXPECT_NE(slurp(j.path()).find("\nrestored mount:" + debug() + "\n"), std::string::npos);
}

// A run killed before its unmount: the next run (or wakebench restore) unmounts it.
TEST_F(DebugfsJournal, AKilledRunsMountIsUndoneByTheNextRun) {
  const pid_t pid = fork();
  if (pid == 0) {
    auto* j = new wb::RunJournal(state_, root(), wb::AbPlan{});
    auto* m = new wb::DebugfsMount(j, root());
    _exit(m->mounted() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(wb::debugfs_mounted_at(debug()));
  testing::internal::CaptureStderr();
  const wb::Recovered r = wb::recover_journals(state_);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "wakebench: restored what run " + std::to_string(pid) + " left changed: debugfs at " +
                debug() + " unmounted\n");
  EXPECT_EQ(r.removed, 1);
  EXPECT_FALSE(wb::debugfs_mounted_at(debug()));
  EXPECT_TRUE(state_files().empty());
}

// A debugfs already mounted is left as it is, mounted, and nothing is written down.
TEST_F(DebugfsJournal, AMountedDebugfsIsLeftAsItIs) {
  ASSERT_EQ(mount("debugfs", debug().c_str(), "debugfs", 0, nullptr), 0) << std::strerror(errno);
  wb::RunJournal j(state_, root(), wb::AbPlan{});
  {
    wb::DebugfsMount m(&j, root());
    EXPECT_FALSE(m.mounted());
    EXPECT_EQ(m.note(), "");
  }
  EXPECT_TRUE(wb::debugfs_mounted_at(debug()));
  EXPECT_EQ(slurp(j.path()).find("mount:"), std::string::npos);
  EXPECT_EQ(wb::unmount_debugfs("/etc"), "not a debugfs folder a run mounts");
}

}  // namespace
