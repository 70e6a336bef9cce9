#include "common/system/tracefs.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "common/schema/wakeup_trace.h"
#include "common/system/decision_recorder.h"
#include "common/system/journal.h"
#include "common/util/sys.h"
#include "common/util/text.h"

namespace wb {

std::vector<std::pair<std::string, std::string>> event_filters(const std::string& comm,
                                                               bool decisions) {
  if (comm.empty() || comm.find_first_of("\"\\") != std::string::npos)
    throw std::runtime_error("--trace-wakeups: cannot filter on the comm \"" + comm + "\"");
  const std::string is = " == \"" + comm + "\"";
  std::vector<std::pair<std::string, std::string>> out = {
      {"sched/sched_waking", "comm" + is},
      {"sched/sched_wakeup", "comm" + is},
      {"sched/sched_migrate_task", "comm" + is},
      {"sched/sched_switch", "prev_comm" + is + " || next_comm" + is},
      {"sched/sched_process_fork", "parent_comm" + is + " || child_comm" + is}};
  if (decisions) out.emplace_back(kDecisionEvent, "comm" + is);  // the wakee's comm
  return out;
}

namespace {

// This process's comm (what its threads and children inherit).
std::string own_comm() {
  std::ifstream in("/proc/thread-self/comm");
  std::string c;
  std::getline(in, c);
  if (c.empty()) throw std::runtime_error("--trace-wakeups: cannot read /proc/thread-self/comm");
  return c;
}

bool is_tracefs(const std::string& dir) {
  struct stat st {};
  return ::stat((dir + "/instances").c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         ::stat((dir + "/events/sched").c_str(), &st) == 0;
}

std::string find_or_mount_tracefs() {
  // A mounted tracefs, wherever it is.
  std::ifstream mounts("/proc/self/mounts");
  std::string dev, dir, type;
  std::string rest;
  std::string unusable;
  while (mounts >> dev >> dir >> type && std::getline(mounts, rest)) {
    if (type != "tracefs") continue;
    if (is_tracefs(dir)) return dir;
    if (unusable.empty()) {
      struct stat st {};
      const int e = ::stat((dir + "/instances").c_str(), &st) == 0 ? ENOENT : errno;
      unusable = "--trace-wakeups: tracefs at " + dir + " is not usable: " +
                 (e == ENOENT ? std::string("no instances/ or events/sched") : errno_text(e)) +
                 (e == EACCES || e == EPERM ? "; needs root" : "");
    }
  }
  if (!unusable.empty()) throw std::runtime_error(unusable);
  const std::string root = "/sys/kernel/tracing";
  if (is_tracefs(root)) return root;
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0)
    throw std::runtime_error("--trace-wakeups: no " + root + " (kernel without tracefs)");
  if (::mount("nodev", root.c_str(), "tracefs", 0, nullptr) != 0) {
    const int e = errno;
    throw std::runtime_error("--trace-wakeups: tracefs is not mounted and mounting it at " + root +
                             " failed: " + errno_text(e) + (e == EPERM ? "; needs root" : ""));
  }
  if (!is_tracefs(root))
    throw std::runtime_error("--trace-wakeups: tracefs at " + root +
                             " has no instances/ or events/sched (kernel without sched events)");
  return root;
}

// Removes instances a killed wakebench left (wakebench-<pid> whose process is gone).
void remove_stale_instances(const std::string& root) {
  DIR* d = ::opendir((root + "/instances").c_str());
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name.rfind("wakebench-", 0) != 0) continue;
    int64_t pid;
    if (!parse_int(name.substr(10), pid) || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      ::rmdir((root + "/instances/" + std::string(name)).c_str());
  }
  ::closedir(d);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + ": " + errno_text(errno));
  std::ostringstream o;
  o << in.rdbuf();
  return o.str();
}

}  // namespace

void WakeupTraceSession::write(const std::string& file, const std::string& value) const {
  const std::string path = dir_ + "/" + file;
  Fd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
  if (!fd) {
    const int e = errno;
    throw std::runtime_error("--trace-wakeups: cannot open " + path + ": " + errno_text(e));
  }
  if (::write(fd.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size())) {
    const int e = errno;
    throw std::runtime_error("--trace-wakeups: cannot write \"" + value + "\" to " + path + ": " +
                             errno_text(e));
  }
}

bool WakeupTraceSession::has_event(const std::string& event) const {
  struct stat st {};
  return ::stat((dir_ + "/events/" + event + "/enable").c_str(), &st) == 0;
}

// A kernel without the lab's decision event: a BPF recorder, or the one line why not.
void WakeupTraceSession::open_recorder(RecorderChoice choice) {
  decisions_ = false;
  try {
    recorder_ = std::make_unique<DecisionRecorder>(own_comm(), choice);
  } catch (const std::runtime_error& e) {
    decisions_unavailable_ =
        std::string("--trace-decisions records nothing: no lab decision event and ") + e.what();
  }
}

std::string WakeupTraceSession::recorder_note() const {
  if (!recorder_ || recorder_->source() != DecisionSource::kTpBtf) return "";
  const std::string& why = recorder_->fallback_reason();
  return "--trace-decisions: " + (why.empty() ? "" : why + "; ") +
         "recording at tp_btf/sched_waking, before the selection: the CPU is compared, not the "
         "rule, and the wake flags are each mechanism's documented wake "
         "(docs/policy-model.md#bpf-records)";
}

void WakeupTraceSession::set_case_wake(const CaseWake& wake) {
  if (recorder_) recorder_->set_case_wake(wake);
}

WakeupTraceSession::WakeupTraceSession(RunJournal* journal, bool decisions, RecorderChoice recorder)
    : journal_(journal), decisions_(decisions) {
  root_ = find_or_mount_tracefs();
  remove_stale_instances(root_);
  dir_ = root_ + "/instances/wakebench-" + std::to_string(::getpid());
  if (journal_) journal_->record(tracefs_key(dir_), "-");
  if (::mkdir(dir_.c_str(), 0700) != 0) {
    int e = errno;
    if (e == EEXIST && ::rmdir(dir_.c_str()) == 0 && ::mkdir(dir_.c_str(), 0700) == 0) {
      e = 0;
    }
    if (e != 0) {
      if (journal_) journal_->restored(tracefs_key(dir_));  // nothing made
      throw std::runtime_error("--trace-wakeups: cannot create tracefs instance " + dir_ + ": " +
                               errno_text(e) + (e == EACCES || e == EPERM ? "; needs root" : ""));
    }
  }
  try {
    write("tracing_on", "0");  // a new instance starts on
    if (decisions_ && !has_event(kDecisionEvent)) open_recorder(recorder);
    const auto filters = event_filters(own_comm(), decisions_);
    for (const auto& [ev, filter] : filters)
      if (!has_event(ev))
        throw std::runtime_error("--trace-wakeups: kernel without the " + ev + " trace event");
    try {
      write("trace_clock", "mono");
    } catch (const std::runtime_error&) {
      write("trace_clock", "global");
    }
    write("options/overwrite", "0");
    for (const auto& [ev, filter] : filters) write("events/" + ev + "/filter", filter);
    for (const auto& [ev, filter] : filters) write("events/" + ev + "/enable", "1");
  } catch (...) {
    if (::rmdir(dir_.c_str()) == 0 && journal_) journal_->restored(tracefs_key(dir_));
    throw;
  }
}

int remove_trace_instance(const std::string& dir) {
  const std::string on = dir + "/tracing_on";
  if (int fd = ::open(on.c_str(), O_WRONLY | O_CLOEXEC); fd >= 0) {
    (void)!::write(fd, "0", 1);
    ::close(fd);
  }
  // The kernel refuses while the instance is busy (EBUSY: a reader still has one of its files
  // open, or an event probe is being torn down); a short retry covers the latter.
  int err = 0;
  for (int attempt = 0; attempt < 50; ++attempt) {
    err = ::rmdir(dir.c_str()) == 0 ? 0 : errno;
    if (err != EBUSY) break;
    ::usleep(20'000);
  }
  return err;
}

WakeupTraceSession::~WakeupTraceSession() {
  const int err = remove_trace_instance(dir_);
  if (err != 0 && err != ENOENT)
    std::fprintf(stderr, "wakebench: warning: could not remove tracefs instance %s: %s\n",
                 dir_.c_str(), errno_text(err).c_str());
  else if (journal_)
    journal_->restored(tracefs_key(dir_));
}

int64_t WakeupTraceSession::buffer_kb_for(int64_t round_trips, int cpus_traced, bool decisions) {
  // About a dozen events per round trip (two wakings, two wakeups, switches, migrations) of 40
  // to 70 bytes in the ring buffer: 1 KiB per round trip, plus room for setup and teardown. Any
  // one CPU may carry them all (a stacked pair). Bounded to 256 MiB per CPU and 1 GiB over the
  // traced CPUs; beyond that the newest events are dropped and counted.
  // A decision record (about 200 bytes with its CPU masks) per wakeup: twice as much.
  const int64_t need = std::max<int64_t>(round_trips, 0) * (decisions ? 2 : 1) + 1024;
  const int64_t cap = std::min<int64_t>(
      256 * 1024, std::max<int64_t>(4096, 1024 * 1024 / std::max(cpus_traced, 1)));
  return std::min(need, cap);
}

void WakeupTraceSession::start(const std::vector<int>& cpus, int64_t buffer_kb) {
  write("tracing_on", "0");
  write("trace", "");  // O_TRUNC clears the buffers
  for (int c : cpus) {
    if (sizes_[c] == buffer_kb) continue;
    write("per_cpu/cpu" + std::to_string(c) + "/buffer_size_kb", std::to_string(buffer_kb));
    sizes_[c] = buffer_kb;
  }
  if (recorder_) recorder_->clear();
  write("tracing_on", "1");
  on_ = true;
}

std::string WakeupTraceSession::stop(int64_t* lost) {
  write("tracing_on", "0");
  on_ = false;
  std::string text = read_file(dir_ + "/trace");
  int64_t n = 0;
  DIR* d = ::opendir((dir_ + "/per_cpu").c_str());
  if (d) {
    while (dirent* e = ::readdir(d)) {
      if (std::string_view(e->d_name).rfind("cpu", 0) != 0) continue;
      std::istringstream st(read_file(dir_ + "/per_cpu/" + e->d_name + "/stats"));
      for (std::string line; std::getline(st, line);) {
        for (const char* key : {"overrun: ", "dropped events: "}) {
          if (line.rfind(key, 0) != 0) continue;
          int64_t v;
          if (parse_int(trim(std::string_view(line).substr(std::strlen(key))), v)) n += v;
        }
      }
    }
    ::closedir(d);
  }
  if (lost) *lost += n;
  if (recorder_) return merge_trace_lines(text, recorder_->drain(lost));
  return text;
}

}  // namespace wb
