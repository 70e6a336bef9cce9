#include "common/driver.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "common/clock.h"
#include "common/cpulist.h"
#include "common/shm.h"
#include "common/sys.h"

namespace wb {

std::atomic<bool> g_interrupted{false};

namespace {

// Per task: written by the task, read by the supervisor after the task is gone (or on timeout).
struct alignas(kHotAlign) TaskSlot {
  std::atomic<int64_t> progress;  // round trips done (warm-up included)
  char error[256];
};

struct alignas(kHotAlign) Control {
  std::atomic<uint32_t> arrived;  // barrier: tasks that finished setup
  std::atomic<uint32_t> abort;    // a task failed: everyone leaves
};

// Where one pair's data lives in the shared region.
struct PairArea {
  int64_t* send_ts;
  int64_t* wake_ts;
  int64_t* rtt;
  int32_t* waker_cpu;
  int32_t* wakee_cpu;
  void* link_shared;
};

const char* role_name(Role r) { return r == Role::kWaker ? "waker" : "wakee"; }

class CaseRun {
 public:
  CaseRun(const CaseSpec& spec, const Mechanism& mech)
      : spec_(spec), mech_(mech), n_pairs_(spec.pairs.size()), n_(spec.round_trips) {
    if (n_pairs_ == 0) throw std::invalid_argument(spec.name + ": no CPU pair to run on");
    Layout layout;
    const size_t control_off = layout.add(sizeof(Control));
    const size_t slots_off = layout.add(sizeof(TaskSlot) * 2 * n_pairs_);
    struct Offsets { size_t send, wake, rtt, wcpu, ecpu, link; };
    std::vector<Offsets> offs;
    const size_t n = static_cast<size_t>(n_);
    for (size_t p = 0; p < n_pairs_; ++p)
      offs.push_back({layout.add(n * 8), layout.add(n * 8), layout.add(n * 8), layout.add(n * 4),
                      layout.add(n * 4), layout.add(mech.shared_bytes(spec))});
    region_ = std::make_unique<SharedRegion>(layout.size());
    ctl_ = new (region_->at<void>(control_off)) Control{};
    slots_ = region_->at<TaskSlot>(slots_off);
    for (size_t i = 0; i < 2 * n_pairs_; ++i) new (&slots_[i]) TaskSlot{};
    for (const auto& o : offs)
      areas_.push_back({region_->at<int64_t>(o.send), region_->at<int64_t>(o.wake),
                        region_->at<int64_t>(o.rtt), region_->at<int32_t>(o.wcpu),
                        region_->at<int32_t>(o.ecpu), region_->at<void>(o.link)});
    for (size_t p = 0; p < n_pairs_; ++p) links_.push_back(mech.make_link(spec, areas_[p].link_shared));
  }

  RunOutcome run(const RunOptions& opts);

 private:
  TaskSlot& slot(size_t pair, Role r) { return slots_[2 * pair + static_cast<int>(r)]; }
  uint32_t n_tasks() const { return static_cast<uint32_t>(2 * n_pairs_); }
  bool shared_futex() const { return spec_.mode == Mode::kProcesses; }

  // Body of one task. Returns 0 on success; on failure writes its slot's error first.
  int task_main(size_t pair, Role role) noexcept;
  void fail(size_t pair, Role role, const std::string& msg) noexcept {
    std::snprintf(slot(pair, role).error, sizeof slot(pair, role).error, "%s: %s", role_name(role),
                  msg.c_str());
    ctl_->abort.store(1);
    futex_wake(&ctl_->arrived, INT32_MAX, shared_futex());
  }
  bool barrier() noexcept;
  pid_t spawn(const std::function<int()>& body);
  RunOutcome collect();

  const CaseSpec& spec_;
  const Mechanism& mech_;
  const size_t n_pairs_;
  const int64_t n_;
  std::unique_ptr<SharedRegion> region_;
  Control* ctl_ = nullptr;
  TaskSlot* slots_ = nullptr;
  std::vector<PairArea> areas_;
  std::vector<std::unique_ptr<Link>> links_;
};

bool CaseRun::barrier() noexcept {
  uint32_t seen = ctl_->arrived.fetch_add(1) + 1;
  if (seen == n_tasks()) {
    futex_wake(&ctl_->arrived, INT32_MAX, shared_futex());
  } else {
    while (seen < n_tasks() && !ctl_->abort.load()) {
      futex_wait(&ctl_->arrived, seen, shared_futex());
      seen = ctl_->arrived.load();
    }
  }
  return !ctl_->abort.load();
}

int CaseRun::task_main(size_t pair, Role role) noexcept {
  Link& link = *links_[pair];
  PairArea& a = areas_[pair];
  TaskSlot& me = slot(pair, role);
  const int start_cpu = role == Role::kWaker ? spec_.pairs[pair].first : spec_.pairs[pair].second;
  try {
    set_affinity({start_cpu});
    const int got = sched_getcpu();
    if (got != start_cpu)
      throw std::runtime_error("pinning did not hold: pinned to CPU " + std::to_string(start_cpu) +
                               ", running on CPU " + std::to_string(got));
    link.attach(role);
  } catch (const std::exception& e) {
    fail(pair, role, e.what());
    barrier();
    return 1;
  }
  if (!barrier()) return 1;
  if (spec_.kernel) {
    // Kernel placement: start from the defined CPUs above, then let the scheduler place the task
    // anywhere in the cpuset. sched_setaffinity does not move a task whose CPU stays allowed.
    try {
      set_affinity(spec_.cpuset);
    } catch (const std::exception& e) {
      fail(pair, role, e.what());
      return 1;
    }
  }
  const int64_t total = spec_.warmup + n_;
  if (role == Role::kWaker) {
    for (int64_t i = 0; i < total; ++i) {
      const int64_t k = i - spec_.warmup;
      const int cpu = sched_getcpu();
      const int64_t t0 = now_ns();
      if (k >= 0) a.send_ts[k] = t0;
      int rc = link.send(role);
      if (rc == 0) rc = link.wait(role);
      const int64_t t1 = now_ns();
      if (rc != 0) {
        fail(pair, role, "round trip " + std::to_string(i) + ": " + errno_name(rc) + " (" +
                             std::strerror(rc) + ")");
        return 1;
      }
      if (k >= 0) {
        a.rtt[k] = t1 - t0;
        a.waker_cpu[k] = cpu;
      }
      me.progress.store(i + 1, std::memory_order_relaxed);
    }
  } else {
    for (int64_t i = 0; i < total; ++i) {
      const int64_t k = i - spec_.warmup;
      int rc = link.wait(role);
      const int64_t t = now_ns();
      if (rc == 0 && k >= 0) {
        a.wake_ts[k] = t;
        a.wakee_cpu[k] = sched_getcpu();
      }
      if (rc == 0) rc = link.send(role);
      if (rc != 0) {
        fail(pair, role, "round trip " + std::to_string(i) + ": " + errno_name(rc) + " (" +
                             std::strerror(rc) + ")");
        return 1;
      }
      me.progress.store(i + 1, std::memory_order_relaxed);
    }
  }
  return 0;
}

// Forks a task process. The child dies with the supervisor (PR_SET_PDEATHSIG) and does not inherit
// wakebench's SIGINT/SIGTERM handlers: a Ctrl-C kills it, the supervisor reaps it.
pid_t CaseRun::spawn(const std::function<int()>& body) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    _exit(body());
  }
  return pid;
}

// Owns forked tasks: kills and reaps whatever is still running when it goes away.
class Children {
 public:
  ~Children() {
    for (auto& c : kids_)
      if (!c.reaped) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, nullptr, 0);
      }
  }
  void add(pid_t pid, std::string who) {
    kids_.push_back({pid, pidfd_open(pid), std::move(who), 0, false});
  }
  struct Kid {
    pid_t pid;
    Fd pidfd;
    std::string who;
    int status;
    bool reaped;
  };
  std::vector<Kid>& kids() { return kids_; }
  void kill_all() {
    for (auto& c : kids_)
      if (!c.reaped) kill(c.pid, SIGKILL);
  }

 private:
  std::vector<Kid> kids_;
};

RunOutcome CaseRun::run(const RunOptions& opts) {
  Children children;
  if (spec_.mode == Mode::kProcesses) {
    for (size_t p = 0; p < n_pairs_; ++p)
      for (Role r : {Role::kWakee, Role::kWaker})
        children.add(spawn([this, p, r] { return task_main(p, r); }),
                     std::string(role_name(r)) + " of pair " + std::to_string(p));
    links_.clear();  // the tasks hold their own copies; ours would keep pipes from reporting EOF
  } else {
    children.add(spawn([this] {
                   std::vector<std::thread> threads;
                   for (size_t p = 0; p < n_pairs_; ++p)
                     for (Role r : {Role::kWakee, Role::kWaker})
                       threads.emplace_back([this, p, r] {
                         // A failed task ends the whole case process: its partner may be
                         // blocked in a wait that nothing else would end.
                         if (task_main(p, r) != 0) _exit(1);
                       });
                   for (auto& t : threads) t.join();
                   return 0;
                 }),
                 "threads case process");
  }

  std::string error;
  const int64_t deadline = now_ns() + static_cast<int64_t>(opts.timeout_s * 1e9);
  int64_t grace_deadline = -1;  // after a task failed: how long the others get to finish
  auto& kids = children.kids();
  size_t remaining = kids.size();
  while (remaining > 0) {
    if (g_interrupted.load()) {
      if (error.empty()) error = "interrupted";
      children.kill_all();
    }
    const int64_t now = now_ns();
    int64_t until = grace_deadline >= 0 ? std::min(deadline, grace_deadline) : deadline;
    if (now >= until) {
      if (now >= deadline && error.empty()) {
        error = "timeout after " + std::to_string(static_cast<int>(opts.timeout_s)) + " s:";
        for (size_t p = 0; p < n_pairs_; ++p)
          for (Role r : {Role::kWaker, Role::kWakee})
            error += std::string(" ") + role_name(r) + (n_pairs_ > 1 ? std::to_string(p) : "") +
                     " at round trip " + std::to_string(slot(p, r).progress.load()) + "/" +
                     std::to_string(spec_.warmup + n_);
      }
      children.kill_all();
      until = now + 1'000'000'000;  // SIGKILLed tasks exit promptly
      grace_deadline = -1;
    }
    std::vector<pollfd> fds;
    std::vector<size_t> idx;
    for (size_t i = 0; i < kids.size(); ++i)
      if (!kids[i].reaped) {
        fds.push_back({kids[i].pidfd.get(), POLLIN, 0});
        idx.push_back(i);
      }
    const int64_t wait_ms = std::max<int64_t>(1, (until - now_ns()) / 1'000'000 + 1);
    const int rc = poll(fds.data(), fds.size(), static_cast<int>(std::min<int64_t>(wait_ms, 1 << 30)));
    if (rc < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "poll");
    for (size_t j = 0; rc > 0 && j < fds.size(); ++j) {
      if (!(fds[j].revents & POLLIN)) continue;
      auto& k = kids[idx[j]];
      waitpid(k.pid, &k.status, 0);
      k.reaped = true;
      --remaining;
      if (!(WIFEXITED(k.status) && WEXITSTATUS(k.status) == 0) && grace_deadline < 0 &&
          error.empty())
        grace_deadline = now_ns() + 500'000'000;
    }
  }
  if (error.empty()) {
    for (size_t p = 0; p < n_pairs_ && error.empty(); ++p)
      for (Role r : {Role::kWaker, Role::kWakee})
        if (slot(p, r).error[0]) {
          error = slot(p, r).error;
          break;
        }
  }
  if (error.empty()) {
    for (auto& k : kids)
      if (!(WIFEXITED(k.status) && WEXITSTATUS(k.status) == 0)) {
        error = "partner exited: " + describe_wait_status(k.status) + " (" + k.who + ")";
        break;
      }
  }
  if (!error.empty()) return {false, error, {}};
  return collect();
}

RunOutcome CaseRun::collect() {
  RunOutcome out;
  out.ok = true;
  const size_t n = static_cast<size_t>(n_);
  for (size_t p = 0; p < n_pairs_; ++p) {
    const PairArea& a = areas_[p];
    PairSamples s;
    s.rtt_ns.assign(a.rtt, a.rtt + n);
    s.wakeup_ns.resize(n);
    for (size_t k = 0; k < n; ++k) s.wakeup_ns[k] = a.wake_ts[k] - a.send_ts[k];
    s.waker_cpu.assign(a.waker_cpu, a.waker_cpu + n);
    s.wakee_cpu.assign(a.wakee_cpu, a.wakee_cpu + n);
    if (!spec_.kernel) {
      // Pinning must hold for the whole run, not only at setup.
      for (size_t k = 0; k < n; ++k) {
        for (auto [cpu, want, who] : {std::tuple{s.waker_cpu[k], spec_.pairs[p].first, "waker"},
                                      std::tuple{s.wakee_cpu[k], spec_.pairs[p].second, "wakee"}})
          if (cpu != want)
            return {false,
                    std::string("pinning did not hold: ") + who + " ran on CPU " +
                        std::to_string(cpu) + " (pinned to " + std::to_string(want) +
                        ") in round trip " + std::to_string(k),
                    {}};
      }
    }
    out.pairs.push_back(std::move(s));
  }
  return out;
}

}  // namespace

RunOutcome run_case(const CaseSpec& spec, const Mechanism& mech, const RunOptions& opts) {
  try {
    CaseRun run(spec, mech);
    return run.run(opts);
  } catch (const std::system_error&) {
    throw;
  } catch (const std::exception& e) {
    return {false, e.what(), {}};
  }
}

}  // namespace wb
