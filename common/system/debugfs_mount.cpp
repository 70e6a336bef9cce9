#include "common/system/debugfs_mount.h"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "common/system/journal.h"
#include "common/system/kernel_files.h"
#include "common/util/sys.h"

namespace wb {
namespace {

constexpr const char* kDebug = "/sys/kernel/debug";
constexpr auto npos = std::string::npos;

}  // namespace

std::string mount_key(const std::string& dir) { return "mount:" + dir; }

std::string unmount_debugfs(const std::string& dir) {
  if (!dir.ends_with(kDebug) || dir[0] != '/') return "not a debugfs folder a run mounts";
  if (!debugfs_mounted_at(dir)) return "";
  if (::umount2(dir.c_str(), 0) == 0) return "";
  if (errno == EBUSY && ::umount2(dir.c_str(), MNT_DETACH) == 0) return "";
  return errno_text(errno);
}

DebugfsMount::DebugfsMount(RunJournal* journal, const std::string& root)
    : journal_(journal), dir_(under_root(root, kDebug)) {
  if (debugfs_mounted_at(dir_) || ::geteuid() != 0) return;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir_, ec)) {
    note_ = "debugfs not mounted: no " + dir_ + " (a kernel without debugfs)";
    return;
  }
  if (journal_) journal_->record(mount_key(dir_), "-");
  if (::mount("debugfs", dir_.c_str(), "debugfs", 0, nullptr) != 0) {
    const int e = errno;
    if (journal_) journal_->restored(mount_key(dir_));
    note_ = "debugfs not mounted: mounting it at " + dir_ + " failed: " + errno_text(e);
    return;
  }
  mounted_ = true;
  note_ = "debugfs mounted at " + dir_ +
          " for the run's sched domains and features, unmounted at " +
          "its end (--no-mount-debugfs: left unmounted)";
  std::string why;
  if (!read_text_file(dir_ + "/sched/features", &why) && why.find(std::strerror(EPERM)) != npos)
    note_ += "; kernel lockdown refuses their reads";
}

DebugfsMount::~DebugfsMount() {
  if (!mounted_) return;
  if (const std::string why = unmount_debugfs(dir_); !why.empty())
    std::fprintf(stderr, "wakebench: warning: could not unmount debugfs at %s: %s\n", dir_.c_str(),
                 why.c_str());
  else if (journal_)
    journal_->restored(mount_key(dir_));
}

}  // namespace wb
