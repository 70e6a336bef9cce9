#include "common/measure/knobs.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <set>
#include <stdexcept>
#include <thread>

#include "common/measure/shm.h"
#include "common/system/clock.h"
#include "common/system/kernel_files.h"
#include "common/util/cpulist.h"
#include "common/util/sys.h"

namespace wb {

// --- work ---------------------------------------------------------------------------------------

uint64_t busy_loop(uint64_t iterations) noexcept {
  // Knuth's MMIX LCG: each step depends on the previous one, so the loop cannot be vectorized or
  // shortened, and it touches no memory.
  uint64_t x = iterations | 1;
  for (uint64_t i = 0; i < iterations; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

double busy_loop_iterations_per_ns() {
  static const double ipn = [] {
    constexpr uint64_t kIterations = 1 << 18;
    int64_t best = INT64_MAX;
    volatile uint64_t sink = 0;
    for (int run = 0; run < 9; ++run) {
      const int64_t t0 = now_ns();
      sink = sink + busy_loop(kIterations);
      best = std::min(best, now_ns() - t0);
    }
    return static_cast<double>(kIterations) / static_cast<double>(std::max<int64_t>(best, 1));
  }();
  return ipn;
}

uint64_t busy_loop_iterations(int64_t work_ns) {
  if (work_ns <= 0) return 0;
  return static_cast<uint64_t>(static_cast<double>(work_ns) * busy_loop_iterations_per_ns()) + 1;
}

namespace {

bool plausible_line(long bytes) {
  return bytes >= 16 && bytes <= 1024 && (bytes & (bytes - 1)) == 0;
}

struct LineSize {
  size_t bytes;
  std::string source;
};

// The largest coherency_line_size among cpu<cpu>'s caches (0 and `why` set when none is readable):
// the granularity at which two CPUs can share or contend for a line, whatever the level.
long sysfs_line_size(int cpu, std::string* where, std::string* why) {
  const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache";
  long best = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string file = dir + "/index" + std::to_string(index) + "/coherency_line_size";
    std::string why_not;
    const std::optional<std::string> read = read_text_file(file, &why_not);
    if (!read) {
      if (index == 0) *why = why_not;
      break;
    }
    const std::string& text = *read;
    char* end = nullptr;
    const long bytes = std::strtol(text.c_str(), &end, 10);
    if (end == text.c_str() || !plausible_line(bytes)) {
      *why = file + " says \"" + text.substr(0, text.find('\n')) + "\"";
      continue;
    }
    if (bytes > best) {
      best = bytes;
      *where = "sysfs cpu" + std::to_string(cpu) + "/cache/index" + std::to_string(index) +
               "/coherency_line_size";
    }
  }
  return best;
}

const LineSize& line_size() {
  static const LineSize size = [] {
    std::string where, why;
    const int here = sched_getcpu();
    long bytes = sysfs_line_size(here >= 0 ? here : 0, &where, &why);
    if (bytes == 0 && here > 0) bytes = sysfs_line_size(0, &where, &why);
    if (bytes > 0) return LineSize{static_cast<size_t>(bytes), where};
#ifdef _SC_LEVEL1_DCACHE_LINESIZE
    const long conf = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
    if (plausible_line(conf))
      return LineSize{static_cast<size_t>(conf), "sysconf(_SC_LEVEL1_DCACHE_LINESIZE)"};
    why += "; sysconf(_SC_LEVEL1_DCACHE_LINESIZE) = " + std::to_string(conf);
#endif
    return LineSize{kCacheLine, "compile-time default (" + why + ")"};
  }();
  return size;
}

}  // namespace

size_t cache_line_size() { return line_size().bytes; }
const std::string& cache_line_source() { return line_size().source; }

size_t work_lines_bytes(int lines) {
  return lines <= 0 ? 0 : static_cast<size_t>(lines) * cache_line_size();
}

void touch_lines(char* buf, int lines) noexcept {
  volatile char* p = buf;
  const size_t stride = cache_line_size();
  for (int i = 0; i < lines; ++i) {
    volatile char& line = p[static_cast<size_t>(i) * stride];
    line = static_cast<char>(line + 1);
  }
}

// --- background ---------------------------------------------------------------------------------

std::vector<int> background_cpus(const CaseSpec& spec, const Topology& topo, std::string* why) {
  const std::string& bg = spec.params.background;
  why->clear();
  if (bg == "none") return {};
  std::set<int> in_pairs, wakers, wakees, out;
  for (auto [w, e] : concurrent_pairs(spec)) {
    in_pairs.insert({w, e});
    wakers.insert(w);
    wakees.insert(e);
  }
  std::string detail;
  // Every CPU of `topo` outside the pairs that shares group `field` with a waker CPU.
  auto near_wakers = [&](int Pu::*field) {
    for (const Pu& pu : topo.pus())
      for (int w : wakers) {
        const Pu* wp = topo.find(w);
        if (wp && wp->*field >= 0 && pu.*field == wp->*field && !in_pairs.count(pu.os))
          out.insert(pu.os);
      }
  };
  if (bg == "prev-cpu") {
    out = wakees;
    detail = "the case has no CPU pair";
  } else if (bg == "waker-sibling") {
    near_wakers(&Pu::core);
    detail = topo.smt().width == 1 ? "no SMT: 1 PU per core" : "the waker's siblings are in a pair";
  } else if (bg == "llc-others") {
    near_wakers(&Pu::llc);
    detail = "every CPU of the waker's LLC is in a pair";
  } else if (bg == "all-others") {
    for (int c : topo.cpus())
      if (!in_pairs.count(c)) out.insert(c);
    detail = "every usable CPU (" + format_cpu_list(topo.cpus()) + ") is in a pair";
  } else {
    for (int c : parse_cpu_list(bg)) {
      if (!topo.find(c)) {
        *why = "unavailable: background CPU " + std::to_string(c) +
               " is offline or not allowed here (usable: " + format_cpu_list(topo.cpus()) + ")";
        return {};
      }
      out.insert(c);
    }
  }
  if (out.empty()) {
    *why = "unavailable: background " + bg + " selects no CPU (" + detail + ")";
    return {};
  }
  return {out.begin(), out.end()};
}

namespace {

// A background task's loop: busy throughout (busy_ns >= period_ns, or 0), else busy_ns of each
// period_ns from its start, asleep until the next period begins.
[[noreturn]] void spin(int64_t busy_ns, int64_t period_ns) {
  volatile uint64_t sink = 0;
  if (busy_ns <= 0 || busy_ns >= period_ns)
    for (;;) sink = sink + busy_loop(1 << 20);
  for (int64_t start = now_ns();; start += period_ns) {
    while (now_ns() < start + busy_ns) sink = sink + busy_loop(1 << 10);
    const timespec next{static_cast<time_t>((start + period_ns) / 1'000'000'000),
                        static_cast<long>((start + period_ns) % 1'000'000'000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) == EINTR) {
    }
  }
}

}  // namespace

BusyTasks::BusyTasks(const std::vector<int>& cpus, int64_t busy_ns, int64_t period_ns) {
  if (cpus.empty()) return;
  SharedRegion shared(sizeof(std::atomic<uint32_t>));
  auto* ready = new (shared.data()) std::atomic<uint32_t>{0};
  const pid_t parent = getpid();
  for (int cpu : cpus) {
    const pid_t pid = fork();
    if (pid < 0) {
      stop();
      throw std::system_error(errno, std::generic_category(), "fork (background task)");
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      if (sched_setaffinity(0, sizeof set, &set) != 0 || sched_getcpu() != cpu) _exit(3);
      ready->fetch_add(1);
      futex_wake(ready, 1, true);
      spin(busy_ns, period_ns);
    }
    pids_.push_back(pid);
  }
  // Wait until every task runs on its CPU; a task that exits could not pin itself.
  const int64_t deadline = now_ns() + 5'000'000'000;
  for (uint32_t seen = ready->load(); seen < cpus.size(); seen = ready->load()) {
    for (size_t i = 0; i < pids_.size(); ++i) {
      int status = 0;
      if (waitpid(pids_[i], &status, WNOHANG) == pids_[i]) {
        pids_.erase(pids_.begin() + static_cast<long>(i));
        stop();
        throw std::runtime_error("background task for CPU " + std::to_string(cpus[i]) +
                                 " could not run there (" + describe_wait_status(status) + ")");
      }
    }
    if (now_ns() > deadline) {
      stop();
      throw std::runtime_error("background tasks did not start within 5 s on CPUs " +
                               format_cpu_list(cpus));
    }
    futex_wait(ready, seen, true, 10'000'000);
  }
}

BusyTasks::~BusyTasks() { stop(); }

void BusyTasks::stop() noexcept {
  for (pid_t pid : pids_) kill(pid, SIGKILL);
  for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  pids_.clear();
}

std::vector<pid_t> BusyTasks::running() const { return pids_; }

// --- sched --------------------------------------------------------------------------------------

std::string apply_sched(const std::optional<SchedPolicy>& policy, const std::optional<int>& nice) {
  if (policy) {
    int pol = SCHED_OTHER;
    switch (policy->kind) {
      case SchedPolicy::kOther:
        pol = SCHED_OTHER;
        break;
      case SchedPolicy::kBatch:
        pol = SCHED_BATCH;
        break;
      case SchedPolicy::kIdle:
        pol = SCHED_IDLE;
        break;
      case SchedPolicy::kFifo:
        pol = SCHED_FIFO;
        break;
    }
    sched_param sp{};
    sp.sched_priority = policy->kind == SchedPolicy::kFifo ? policy->priority : 0;
    if (sched_setscheduler(0, pol, &sp) != 0) {
      const int err = errno;
      std::string hint;
      if (err == EPERM && policy->kind == SchedPolicy::kFifo)
        hint = " (needs CAP_SYS_NICE or RLIMIT_RTPRIO >= " + std::to_string(policy->priority) +
               ", and RT runtime for the cgroup where RT group scheduling is on)";
      return "sched " + sched_policy_id(*policy) + ": sched_setscheduler: " + errno_name(err) +
             hint;
    }
  }
  if (nice) {
    // PRIO_PROCESS with a thread id sets that thread's nice only (setpriority(2), NOTES).
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), *nice) != 0) {
      const int err = errno;
      std::string hint;
      if (err == EACCES || err == EPERM)
        hint = " (needs CAP_SYS_NICE or RLIMIT_NICE >= " + std::to_string(20 - *nice) + ")";
      return "nice " + std::to_string(*nice) + ": setpriority: " + errno_name(err) + hint;
    }
  }
  return "";
}

std::optional<std::string> knob_skip_reason(const CaseSpec& spec, const Topology& topo,
                                            bool client_service) {
  const Params& p = spec.params;
  if (!client_service && (p.w || p.s))
    return "unsupported: knobs w and s set binder-like's W clients x S services and fanout's "
           "N senders x M receivers; " +
           spec.mechanism + " runs pairs";
  if (client_service && p.pairs > 1)
    return "unsupported: pairs > 1 with W clients x S services (set w and s instead)";
  if (p.background != "none" && !spec.cpu_pairs.empty()) {
    std::string why;
    background_cpus(spec, topo, &why);
    if (!why.empty()) return why;
  }
  static constexpr const char* kSides[2] = {"waker", "wakee"};
  for (int side = 0; side < 2; ++side) {
    if (!p.sched[side] && !p.nice[side]) continue;
    // A throwaway thread: the setting stays with it and goes when it ends.
    std::string refused;
    std::thread([&] { refused = apply_sched(p.sched[side], p.nice[side]); }).join();
    if (!refused.empty()) return std::string("refused: ") + kSides[side] + " " + refused;
  }
  return std::nullopt;
}

}  // namespace wb
