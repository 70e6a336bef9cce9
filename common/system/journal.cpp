#include "common/system/journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "common/system/debugfs_mount.h"
#include "common/system/kernel_files.h"
#include "common/system/settings.h"
#include "common/system/tracefs.h"
#include "common/util/input.h"
#include "common/util/text.h"

namespace wb {

namespace {

constexpr std::string_view kMagic = "wakebench-journal 1";
constexpr std::string_view kTracefs = "tracefs:";
constexpr std::string_view kMount = "mount:";
constexpr std::string_view kSuffix = ".journal";

std::string sys_error(const std::string& what, int err) { return what + ": " + std::strerror(err); }

std::string boot_id() {
  const std::string path = "/proc/sys/kernel/random/boot_id";
  std::string why;
  const auto text = read_text_file(path, &why);
  const std::string id = text ? std::string(trim(*text)) : "";
  if (id.empty()) throw std::runtime_error("the journal needs the boot id: " + why);
  return id;
}

// flock(fd, op), retried when a signal interrupts it; 0 or the errno.
int lock(int fd, int op) {
  while (::flock(fd, op) != 0)
    if (errno != EINTR) return errno;
  return 0;
}

// The pid a lock's holder wrote (a lock file's text; a journal's name, "<boot id>-<pid>.journal"),
// 0 when none reads.
pid_t holder_pid(std::string_view text) {
  int64_t pid = 0;
  return parse_int(trim(text), pid) && pid > 0 ? static_cast<pid_t>(pid) : 0;
}

// A lock file's text (its holder's pid), "" when it does not read as one.
std::string lock_text(const std::string& path) {
  try {
    return read_input_file("lock", path);
  } catch (const std::exception&) {
    return "";
  }
}

// `fd`, just opened, is a regular file (a FIFO, device or folder named like ours is not ours).
bool regular(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

// flock(fd, LOCK_EX | LOCK_NB), retried for up to 2 s while the run `holder` that held it has
// ended: its task processes, forked with the lock's open file, hold it until they die a moment
// after the run (PR_SET_PDEATHSIG). 0 or the errno.
int lock_unless_live(int fd, pid_t holder) {
  for (int attempt = 0;; ++attempt) {
    const int e = lock(fd, LOCK_EX | LOCK_NB);
    const bool ended = holder > 0 && ::kill(holder, 0) != 0 && errno == ESRCH;
    if (e != EWOULDBLOCK || !ended || attempt == 100) return e;
    ::usleep(20'000);
  }
}

// Whether the open file `fd` is still the one at `path` (a lock file, journal or folder removed
// and made anew by another run since this one opened it is not).
bool still_at(int fd, const std::string& path) {
  struct stat a {};
  struct stat b {};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

// The folder `dir`, open and locked (blocking: runs hold it only briefly), made (0700) when
// missing and `create`; an empty Fd when it is missing and not `create`. A folder another run
// removed (it was empty) as this one locked it is made again. Throws std::runtime_error naming it.
Fd locked_folder(const std::string& dir, bool create) {
  for (;;) {
    if (create && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      throw std::runtime_error(sys_error("state folder " + dir + ": cannot create it", errno));
    Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd && errno == ENOENT && !create) return fd;
    if (!fd) throw std::runtime_error(sys_error("state folder " + dir, errno));
    if (const int e = lock(fd.get(), LOCK_EX))
      throw std::runtime_error(sys_error("lock " + dir, e));
    if (still_at(fd.get(), dir)) return fd;
  }
}

// Removes the folder `dir` when nothing is left in it, under its lock (see locked_folder).
void remove_if_empty(const std::string& dir) {
  const Fd fd = locked_folder(dir, false);
  if (fd) ::rmdir(dir.c_str());  // ENOTEMPTY: another run's files
}

// Writes all of `text` at the end of `fd` (O_APPEND). Returns 0 or the errno.
int write_whole(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// The lock file of setting `key` in `dir`: the key with '/' made '%' (which no key holds).
std::string lock_path(const std::string& dir, const std::string& key) {
  std::string name = key;
  std::replace(name.begin(), name.end(), '/', '%');
  return dir + "/" + name + ".lock";
}

// Takes the lock at `path` (the file created when missing, holding this pid), or leaves `holder`
// with the pid the file names when a live run holds it. Throws std::runtime_error naming it.
Fd take_lock(const std::string& path, std::string* holder) {
  for (;;) {
    Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600));
    if (!fd) throw std::runtime_error(sys_error("lock " + path, errno));
    if (!regular(fd.get())) throw std::runtime_error("lock " + path + ": not a regular file");
    const std::string text = lock_text(path);
    if (const int e = lock_unless_live(fd.get(), holder_pid(text))) {
      if (e != EWOULDBLOCK) throw std::runtime_error(sys_error("lock " + path, e));
      *holder = std::string(trim(text));
      return Fd();
    }
    if (!still_at(fd.get(), path)) continue;  // its holder removed it as this one opened it
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd.get(), 0) != 0 || write_whole(fd.get(), pid) != 0)
      throw std::runtime_error(sys_error("lock " + path, errno));
    return fd;
  }
}

// A journal as read: its header and each change with whether it was restored.
struct JournalText {
  std::string boot, pid, root;
  std::vector<std::pair<std::string, std::string>> changes;  // key, value to write back
  std::vector<std::string> restored;
};

// Throws std::runtime_error("line N: ...").
JournalText parse_journal(std::string_view text) {
  JournalText j;
  const auto end = text.rfind('\n');
  text = end == std::string_view::npos ? "" : text.substr(0, end + 1);  // a torn last line: out
  ktext::for_each_line(text, [&](std::string_view line, int number) {
    check_text("line " + std::to_string(number), std::string(line));
    const auto sp = line.find(' ');
    const std::string_view word = line.substr(0, sp);
    const std::string rest(sp == std::string_view::npos ? "" : line.substr(sp + 1));
    std::string* header[] = {&j.boot, &j.pid, &j.root};
    const char* const names[] = {"boot", "pid", "root"};
    if (number == 1 && line == kMagic) return;
    if (number >= 2 && number <= 4 && word == names[number - 2] && !rest.empty()) {
      *header[number - 2] = rest;
    } else if (number > 4 && word == "change" && rest.find(' ') != std::string::npos) {
      j.changes.emplace_back(rest.substr(0, rest.find(' ')), rest.substr(rest.find(' ') + 1));
    } else if (number > 4 && word == "restored") {
      j.restored.push_back(rest);
    } else {
      throw std::runtime_error("line " + std::to_string(number) + ": unexpected \"" +
                               std::string(line.substr(0, 40)) + "\"");
    }
  });
  if (!j.pid.empty() && holder_pid(j.pid) == 0)
    throw std::runtime_error("pid " + json_text(j.pid) + " is not a process id");
  return j;  // a torn header holds no change: its run changed nothing yet
}

// A tracefs instance of wakebench: ".../instances/wakebench-<pid>".
bool is_instance(const std::string& dir) {
  const auto slash = dir.rfind('/');
  int64_t pid = 0;
  return slash != std::string::npos && dir.rfind("/instances/wakebench-") == slash - 10 &&
         parse_int(std::string_view(dir).substr(slash + 11), pid) && pid > 0;
}

// Puts one change back: "" or why not. A journal is input like any other: its setting must be
// one of the scheduler's (unless `any_setting`), its value one a run reads back, its root a
// path; a knob that already holds the value (the kernel refused the change) is not written.
std::string undo(const std::string& key, const std::string& value, const std::string& root,
                 bool any_setting) {
  try {
    if (key.rfind(kTracefs, 0) == 0) {
      const std::string dir = key.substr(kTracefs.size());
      if (!is_instance(dir)) return "not a wakebench tracefs instance";
      const int e = remove_trace_instance(dir);
      return e == 0 || e == ENOENT ? "" : std::strerror(e);
    }
    if (key.rfind(kMount, 0) == 0) return unmount_debugfs(key.substr(kMount.size()));
    const SettingSpec s = setting_of_key(key);
    if (!any_setting && !is_scheduler_setting(s))
      return "not one of the scheduler's settings (wakebench restore --ab-any-setting restores it)";
    if (!restorable_token(s, value) || root.empty() || root[0] != '/')
      return "refused: " + json_text(value) + " under root " + json_text(root) +
             " is not what a run writes";
    if (read_setting(s, root) != value) write_setting(s, value, root);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

// How a change reads once undone: "sysctl:kernel.sched_x to 7", "tracefs instance DIR removed".
std::string undone(const std::string& key, const std::string& value) {
  if (key.rfind(kTracefs, 0) == 0)
    return "tracefs instance " + key.substr(kTracefs.size()) + " removed";
  if (key.rfind(kMount, 0) == 0) return "debugfs at " + key.substr(kMount.size()) + " unmounted";
  return key + " to " + value;
}

// The journal at `path` as read (a regular file only, never waited on, up to the input limit),
// or nullopt when it cannot be (said so).
std::optional<JournalText> read_journal(const std::string& path) {
  try {
    return parse_journal(read_input_file("journal", path));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wakebench: warning: journal %s is unreadable (%s): kept\n", path.c_str(),
                 e.what());
    return std::nullopt;
  }
}

// Undoes each change of the journal at `path` (open and locked as `fd`) not restored yet: returns
// whether every one is, after saying what it restored and what it could not.
bool restore_changes(int fd, const std::string& path, const JournalText& j, bool any_setting) {
  std::vector<std::string> done, failed;
  for (const auto& [key, value] : j.changes) {
    if (std::find(j.restored.begin(), j.restored.end(), key) != j.restored.end()) continue;
    const std::string error = undo(key, value, j.root, any_setting);
    if (error.empty()) write_whole(fd, "restored " + key + "\n");
    (error.empty() ? done : failed)
        .push_back(undone(key, value) + (error.empty() ? "" : ": ") + error);
  }
  if (!done.empty())
    std::fprintf(stderr, "wakebench: restored what run %s left changed: %s\n", j.pid.c_str(),
                 join(done, ", ").c_str());
  if (!failed.empty())
    std::fprintf(stderr,
                 "wakebench: warning: could not restore what run %s left changed: %s (journal %s "
                 "kept)\n",
                 j.pid.c_str(), join(failed, "; ").c_str(), path.c_str());
  return failed.empty();
}

// Restores the journal at `path` when no live run holds it, and removes it once nothing in it is
// left to restore (one of another boot at once: what it changed ended with that boot).
void recover_one(const std::string& path, const std::string& this_boot, bool any_setting,
                 Recovered& count) {
  Fd fd(::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  const std::string_view name = std::string_view(path).substr(path.rfind('-') + 1);
  const pid_t pid = holder_pid(name.substr(0, name.size() - kSuffix.size()));
  if (fd && !regular(fd.get())) {
    std::fprintf(stderr,
                 "wakebench: warning: %s is not a regular file: not a journal, left alone\n",
                 path.c_str());
    return;
  }
  if (!fd || lock_unless_live(fd.get(), pid) != 0 || !still_at(fd.get(), path)) return;
  const std::optional<JournalText> j = read_journal(path);
  const bool other_boot = j && !j->changes.empty() && j->boot != this_boot;
  if (other_boot)
    std::fprintf(stderr, "wakebench: removed journal %s of another boot (nothing to restore)\n",
                 path.c_str());
  const bool all =
      j && (j->changes.empty() || other_boot || restore_changes(fd.get(), path, *j, any_setting));
  ++(all ? count.removed : count.kept);
  if (all) ::unlink(path.c_str());
}

// Removes the lock file at `path` when no live run holds it (its run ended without removing it).
void remove_stale_lock(const std::string& path) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd || !regular(fd.get())) return;
  const pid_t pid = holder_pid(lock_text(path));
  if (lock_unless_live(fd.get(), pid) == 0 && still_at(fd.get(), path)) ::unlink(path.c_str());
}

// The names in `dir` that end in `suffix`, sorted.
std::vector<std::string> names_in(const std::string& dir, std::string_view suffix) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string_view n = e->d_name;
      if (n.size() > suffix.size() && n.substr(n.size() - suffix.size()) == suffix)
        names.emplace_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Each journal of `dir`, then each lock file no live run holds, under the folder's lock.
Recovered recover_in(const std::string& dir, bool any_setting) {
  const std::string this_boot = boot_id();
  Recovered count;
  for (const std::string& n : names_in(dir, kSuffix))
    recover_one(dir + "/" + n, this_boot, any_setting, count);
  for (const std::string& n : names_in(dir, ".lock")) remove_stale_lock(dir + "/" + n);
  return count;
}

}  // namespace

std::string tracefs_key(const std::string& instance_dir) {
  return std::string(kTracefs) + instance_dir;
}

Recovered recover_journals(const std::string& dir, bool any_setting) {
  Recovered count;
  if (const Fd folder = locked_folder(dir, false)) count = recover_in(dir, any_setting);
  remove_if_empty(dir);  // what ended runs left there is gone now
  return count;
}

RunJournal::RunJournal(const std::string& dir, const std::string& root, const AbPlan& plan)
    : dir_(dir), owner_(::getpid()) {
  try {
    open(root, plan);
  } catch (...) {
    if (fd_) ::unlink(path_.c_str());  // this run's own, made before the error
    release();
    throw;
  }
}

void RunJournal::open(const std::string& root, const AbPlan& plan) {
  const Fd folder = locked_folder(dir_, true);
  lock_settings(plan);
  recover_in(dir_, plan.any_setting);
  create(root);
}

void RunJournal::release() noexcept {
  for (const auto& [path, fd] : locks_) ::unlink(path.c_str());  // then closed, unlocked
  locks_.clear();
  try {
    remove_if_empty(dir_);
  } catch (const std::exception&) {
    // Left as it is: the next run uses it.
  }
}

void RunJournal::lock_settings(const AbPlan& plan) {
  for (const SettingSpec& s : plan.specs) {
    const std::string path = lock_path(dir_, s.key());
    std::string holder;
    Fd fd = take_lock(path, &holder);
    if (!fd)
      throw std::invalid_argument("--ab " + s.text + ": run " + holder +
                                  " is switching this setting (lock " + path + ")");
    locks_.emplace_back(path, std::move(fd));
  }
}

void RunJournal::create(const std::string& root) {
  const std::string boot = boot_id();
  path_ = dir_ + "/" + boot + "-" + std::to_string(owner_) + std::string(kSuffix);
  fd_ = Fd(::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600));
  if (!fd_) throw std::runtime_error(sys_error("journal " + path_, errno));
  if (const int e = lock(fd_.get(), LOCK_EX | LOCK_NB))
    throw std::runtime_error(sys_error("lock " + path_, e));
  std::string header(kMagic);
  header.append("\nboot ").append(boot).append("\npid ").append(std::to_string(owner_));
  // Absolute: `wakebench restore` may run from another folder.
  const std::string abs_root = std::filesystem::absolute(root).lexically_normal().string();
  append(header.append("\nroot ").append(abs_root).append("\n"));
}

void RunJournal::append(const std::string& line) {
  if (const int e = write_whole(fd_.get(), line); e != 0 || ::fsync(fd_.get()) != 0)
    throw std::runtime_error(sys_error("journal " + path_, e ? e : errno));
}

void RunJournal::record(const std::string& key, const std::string& value) {
  if (value.empty() || value.find('\n') != std::string::npos)
    throw std::runtime_error("journal " + path_ + ": " + key + ": value \"" + value +
                             "\" is not one line");
  append("change " + key + " " + value + "\n");
  keys_.emplace_back(key, false);
}

void RunJournal::restored(const std::string& key) noexcept {
  for (auto& [k, done] : keys_)
    if (k == key && !done) done = write_whole(fd_.get(), "restored " + key + "\n") == 0;
}

RunJournal::~RunJournal() {
  if (::getpid() != owner_) return;
  std::string left;
  for (const auto& [key, done] : keys_)
    if (!done) left += (left.empty() ? "" : ", ") + key;
  if (!path_.empty() && left.empty()) ::unlink(path_.c_str());
  if (!left.empty())
    std::fprintf(stderr,
                 "wakebench: warning: %s not restored: journal %s kept for the next run "
                 "(or wakebench restore)\n",
                 left.c_str(), path_.c_str());
  release();
}

}  // namespace wb
