// Thin syscall wrappers. Setup paths throw std::system_error naming the call; hot-loop helpers
// return 0 or an errno and never throw (a Link returns it, common/measure/mechanism.h; the driver
// reports it per case).
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace wb {

// An owned file descriptor, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Throws std::system_error(errno, what) if rc < 0; returns rc.
long check(long rc, const char* what);

// "ENOENT" for ENOENT, etc. (strerrorname_np where available).
std::string errno_name(int err);
// "EPERM (Operation not permitted)": errno_name and strerror.
std::string errno_text(int err);

// What a file of this st_mode is, for a refusal: "a directory", "a symlink", "a FIFO", ...
const char* file_kind(mode_t mode);

// CPUs this process may run on (sched_getaffinity), sorted.
std::vector<int> allowed_cpus();
// Online CPUs from /sys/devices/system/cpu/online (all CPUs up to nprocs if unreadable).
std::vector<int> online_cpus();
// Restricts the calling thread to `cpus`. Throws std::system_error.
void set_affinity(const std::vector<int>& cpus);

// Moves the calling thread to one CPU at a time (stand_on), so that a thread or process it creates
// there starts there: the kernel gives a new task its creator's CPU as its first CPU and its first
// recent_used_cpu (wake_up_new_task()). Restores the thread's affinity when destroyed. Best
// effort: a CPU the thread may not use leaves it where it is.
class CreatorCpu {
 public:
  CreatorCpu();
  ~CreatorCpu();
  CreatorCpu(const CreatorCpu&) = delete;
  CreatorCpu& operator=(const CreatorCpu&) = delete;
  void stand_on(int cpu);

 private:
  cpu_set_t saved_{};
  bool have_ = false, moved_ = false;
};

// futex on a 32-bit word shared by threads (private) or processes (shared mapping).
// wait: returns 0, or an errno (EAGAIN: value changed; ETIMEDOUT; EINTR). timeout_ns < 0: forever.
int futex_wait(std::atomic<uint32_t>* word, uint32_t expected, bool shared,
               int64_t timeout_ns = -1);
int futex_wake(std::atomic<uint32_t>* word, int count, bool shared);

// pidfd_open(2) (Linux >= 5.3): lets a supervisor poll(2) for a child's exit without waking up
// periodically on the measured CPUs.
Fd pidfd_open(pid_t pid);

// The scheduler state letter of thread `tid` (any process) from /proc/<tid>/stat: 'R' running or
// runnable, 'S' sleeping, 'D' uninterruptible, ...; '\0' when it cannot be read (gone).
char task_state(pid_t tid);

// Describes a wait(2) status: "exited with status 1", "killed by signal 9 (SIGKILL)".
std::string describe_wait_status(int status);

}  // namespace wb
