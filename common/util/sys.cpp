#include "common/util/sys.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <system_error>

#include "common/util/cpulist.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434  // same number on every architecture (asm-generic unified table)
#endif

namespace wb {

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

long check(long rc, const char* what) {
  if (rc < 0) throw std::system_error(errno, std::generic_category(), what);
  return rc;
}

std::string errno_name(int err) {
  const char* name = strerrorname_np(err);
  return name ? name : "errno " + std::to_string(err);
}

std::string errno_text(int err) { return errno_name(err) + " (" + std::strerror(err) + ")"; }

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symlink";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  check(sched_getaffinity(0, sizeof set, &set), "sched_getaffinity");
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::vector<int> online_cpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string line;
  if (in && std::getline(in, line)) return parse_cpu_list(line);
  std::vector<int> cpus;
  for (long c = 0; c < sysconf(_SC_NPROCESSORS_CONF); ++c) cpus.push_back(static_cast<int>(c));
  return cpus;
}

void set_affinity(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE)
      throw std::system_error(EINVAL, std::generic_category(), "CPU " + std::to_string(c));
    CPU_SET(c, &set);
  }
  check(sched_setaffinity(0, sizeof set, &set),
        ("sched_setaffinity(" + format_cpu_list(cpus) + ")").c_str());
}

CreatorCpu::CreatorCpu() { have_ = sched_getaffinity(0, sizeof saved_, &saved_) == 0; }

CreatorCpu::~CreatorCpu() {
  if (have_ && moved_) sched_setaffinity(0, sizeof saved_, &saved_);
}

void CreatorCpu::stand_on(int cpu) {
  if (!have_) return;
  try {
    set_affinity({cpu});
    moved_ = true;
  } catch (const std::system_error&) {
  }
}

int futex_wait(std::atomic<uint32_t>* word, uint32_t expected, bool shared, int64_t timeout_ns) {
  timespec ts{}, *tp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = timeout_ns / 1'000'000'000;
    ts.tv_nsec = timeout_ns % 1'000'000'000;
    tp = &ts;
  }
  int op = shared ? FUTEX_WAIT : (FUTEX_WAIT | FUTEX_PRIVATE_FLAG);
  if (syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, expected, tp, nullptr, 0) == 0)
    return 0;
  return errno;
}

int futex_wake(std::atomic<uint32_t>* word, int count, bool shared) {
  int op = shared ? FUTEX_WAKE : (FUTEX_WAKE | FUTEX_PRIVATE_FLAG);
  if (syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, count, nullptr, nullptr, 0) >= 0)
    return 0;
  return errno;
}

Fd pidfd_open(pid_t pid) {
  return Fd(static_cast<int>(check(syscall(__NR_pidfd_open, pid, 0), "pidfd_open")));
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) +
           (abbrev ? std::string(" (SIG") + abbrev + ")" : std::string());
  }
  return "stopped (status " + std::to_string(status) + ")";
}

char task_state(pid_t tid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(tid));
  Fd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return '\0';
  char buf[512];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return '\0';
  buf[n] = '\0';
  const char* paren = std::strrchr(buf, ')');  // the comm may hold spaces and parentheses
  return paren && paren[1] == ' ' ? paren[2] : '\0';
}

}  // namespace wb
