#include "common/measure/driver.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "common/measure/knobs.h"
#include "common/measure/perf.h"
#include "common/measure/shm.h"
#include "common/measure/stream.h"
#include "common/system/clock.h"
#include "common/util/cpulist.h"
#include "common/util/sys.h"

namespace wb {

std::atomic<bool> g_interrupted{false};

namespace {

// "0.5", "60": seconds as given, not rounded down to a whole second.
std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// A task process's wait status says it exited with status 0.
bool exited_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

// Per task: written by the task, read by the supervisor after the task is gone (or on timeout).
struct alignas(kHotAlign) TaskSlot {
  std::atomic<int64_t> progress;  // round trips done (warm-up included)
  char error[1024];
  // Its context switches while it counted (stop_counting), voluntary and involuntary; -1: none.
  int64_t blocked = -1, preempted = -1;
};

struct alignas(kHotAlign) Control {
  std::atomic<uint32_t> arrived;  // barrier: tasks that finished setup
  std::atomic<uint32_t> abort;    // a task failed: everyone leaves
};

#ifdef MADV_POPULATE_WRITE
constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kPopulateWrite = 23;  // Linux 5.14 uapi; older glibc headers lack it
#endif

// The calling thread's context switches so far, or nullopt when they cannot be read.
// docs/result-set.md#blocked
std::optional<Switches> thread_switches() noexcept {
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) != 0) return std::nullopt;
  return Switches{ru.ru_nvcsw, ru.ru_nivcsw};
}

// Owns forked tasks: kills and reaps whatever is still running when it goes away.
class Children {
 public:
  Children() = default;
  Children(Children&&) = default;  // the moved-from one is empty: nothing for it to kill
  Children& operator=(Children&&) = delete;
  ~Children() {
    for (auto& c : kids_)
      if (!c.reaped) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, nullptr, 0);
      }
  }
  // Takes task process `pid` in; when that fails (pidfd_open refused: out of descriptors), the
  // task is killed and reaped before the error goes on, so no task of a failed case is left.
  void add(pid_t pid, std::string who) {
    try {
      kids_.push_back({.pid = pid,
                       .pidfd = pidfd_open(pid),
                       .who = std::move(who),
                       .status = 0,
                       .reaped = false});
    } catch (...) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      throw;
    }
  }
  struct Kid {
    pid_t pid;
    Fd pidfd;
    std::string who;
    int status;
    bool reaped;
  };
  const std::vector<Kid>& kids() const { return kids_; }
  void kill_all() {
    for (auto& c : kids_)
      if (!c.reaped) kill(c.pid, SIGKILL);
  }
  // Waits up to `timeout_ms` for a task process to exit: the indexes (in kids()) of those not
  // reaped yet whose pidfd became readable, i.e. that exited. Interrupted by a signal: none.
  std::vector<size_t> poll_exited(int64_t timeout_ms) {
    std::vector<pollfd> fds;
    std::vector<size_t> idx;
    for (size_t i = 0; i < kids_.size(); ++i)
      if (!kids_[i].reaped) {
        fds.push_back({kids_[i].pidfd.get(), POLLIN, 0});
        idx.push_back(i);
      }
    const int rc =
        poll(fds.data(), fds.size(), static_cast<int>(std::min<int64_t>(timeout_ms, 1 << 30)));
    if (rc < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "poll");
    size_t exited = 0;
    for (size_t j = 0; rc > 0 && j < fds.size(); ++j)
      if (fds[j].revents & POLLIN) idx[exited++] = idx[j];
    idx.resize(exited);
    return idx;
  }
  // Reaps task process `i`, which exited (poll_exited).
  Kid& reap(size_t i) {
    Kid& k = kids_[i];
    waitpid(k.pid, &k.status, 0);
    k.reaped = true;
    return k;
  }
  // Stops waiting for the killed tasks that are still there (stuck in uninterruptible sleep): the
  // destructor does not block on them; they stay zombies of this process until it exits.
  std::string abandon() {
    std::string who;
    for (auto& c : kids_)
      if (!c.reaped) {
        const char state = task_state(c.pid);
        who += (who.empty() ? "" : ", ") + c.who + " (pid " + std::to_string(c.pid) + ", state " +
               std::string(1, state ? state : '?') + ")";
        c.reaped = true;
      }
    return who;
  }

 private:
  std::vector<Kid> kids_;
};

}  // namespace

std::optional<std::string> Mechanism::skip_reason(const CaseSpec& spec,
                                                  const Topology& topo) const {
  if (auto why = knob_skip_reason(spec, topo, client_service())) return why;
  return mechanism_skip_reason(spec);
}

class CaseRun {
 public:
  CaseRun(const CaseSpec& spec, const Mechanism& mech, const Topology& topo)
      : spec_(spec), pairs_(concurrent_pairs(spec)), n_(spec.round_trips), sleeps_(mech.blocks()) {
    if (pairs_.empty()) throw std::invalid_argument(spec.name + ": no CPU pair to run on");
    if (spec.params.background != "none") {
      std::string why;
      background_ = background_cpus(spec, topo, &why);
      if (!why.empty()) throw std::invalid_argument(why);
    }
    stamp_clock();  // calibrated here, once, before any task stamps
    busy_loop_iterations_ = busy_loop_iterations(spec.params.work_ns);
    workload_ = mech.make_workload(spec, pairs_);
    tasks_ = workload_->tasks();
    // The driver's own blocks first, then the streams (common/measure/stream.h).
    Layout layout;
    const size_t control_off = layout.add(sizeof(Control));
    const size_t slots_off = layout.add(sizeof(TaskSlot) * tasks_.size());
    const size_t blocks_off = layout.add(sizeof(CounterBlock) * tasks_.size());
    const StreamLayout streams(layout, workload_->streams(), static_cast<size_t>(n_),
                               spec.params.work_lines);
    region_ = std::make_unique<SharedRegion>(layout.size());
    ctl_ = new (region_->at<void>(control_off)) Control{};
    slots_ = region_->at<TaskSlot>(slots_off);
    for (size_t i = 0; i < tasks_.size(); ++i) new (&slots_[i]) TaskSlot{};
    blocks_ = region_->at<CounterBlock>(blocks_off);  // zeroed: no counters
    streams_ = streams.place(*region_);
  }

  RunOutcome run(const RunOptions& opts);

 private:
  friend class TaskContext;

  bool shared_futex() const { return spec_.mode == Mode::kProcesses; }
  int start_cpu(size_t t) const;  // task t's CPU before anything runs (its pair's side)
  int task_main(size_t t, const RunOptions& opts) noexcept;
  int group_main(const std::vector<size_t>& group, const RunOptions& opts) noexcept;
  void fail(size_t t, const std::string& msg) noexcept {
    std::snprintf(slots_[t].error, sizeof slots_[t].error, "%s: %s", tasks_[t].name.c_str(),
                  msg.c_str());
    ctl_->abort.store(1);
    futex_wake(&ctl_->arrived, INT32_MAX, shared_futex());
  }
  bool barrier() noexcept;
  pid_t spawn(const std::function<int()>& body);
  Children start_tasks(const RunOptions& opts);
  std::string supervise(Children& children, const RunOptions& opts);
  std::string timeout_error(double timeout_s) const;
  std::string task_error(const Children& children) const;
  RunOutcome collect();

  const CaseSpec& spec_;
  const std::vector<CpuPair> pairs_;
  const int64_t n_;
  const bool sleeps_;  // Mechanism::blocks(): its waits sleep, so blocked waits are counted
  std::vector<int> background_;
  uint64_t busy_loop_iterations_ = 0;
  std::unique_ptr<Workload> workload_;
  std::vector<TaskSpec> tasks_;
  std::unique_ptr<SharedRegion> region_;
  Control* ctl_ = nullptr;
  TaskSlot* slots_ = nullptr;
  CounterBlock* blocks_ = nullptr;
  std::vector<StreamArea> streams_;
};

void TaskContext::work(size_t s) const noexcept {
  if (busy_loop_iterations_ > 0) {
    volatile uint64_t sink = busy_loop(busy_loop_iterations_);
    (void)sink;
  }
  touch_lines(streams_[s].lines, spec_.params.work_lines);
}

void TaskContext::start_counting() noexcept {
  switches_at_start_ = thread_switches();  // before the counters, so they do not count it
  if (counters_) counters_->enable();
}

void TaskContext::stop_counting() noexcept {
  if (counters_) counters_->disable();
  const std::optional<Switches> now = switches_at_start_ ? thread_switches() : std::nullopt;
  if (!now) return;
  run_->slots_[task_].blocked = now->voluntary - switches_at_start_->voluntary;
  run_->slots_[task_].preempted = now->involuntary - switches_at_start_->involuntary;
}

void TaskContext::progress(int64_t done) noexcept {
  run_->slots_[task_].progress.store(done, std::memory_order_relaxed);
}

void TaskContext::fail(const std::string& what) noexcept { run_->fail(task_, what); }

bool CaseRun::barrier() noexcept {
  const uint32_t n_tasks = static_cast<uint32_t>(tasks_.size());
  uint32_t seen = ctl_->arrived.fetch_add(1) + 1;
  if (seen == n_tasks) {
    futex_wake(&ctl_->arrived, INT32_MAX, shared_futex());
  } else {
    while (seen < n_tasks && !ctl_->abort.load()) {
      futex_wait(&ctl_->arrived, seen, shared_futex());
      seen = ctl_->arrived.load();
    }
  }
  return !ctl_->abort.load();
}

int CaseRun::task_main(size_t t, const RunOptions& opts) noexcept {
  const TaskSpec& ts = tasks_[t];
  const int start = start_cpu(t);
  const int side = static_cast<int>(ts.side);
  TaskContext ctx(spec_, streams_.data(), busy_loop_iterations_);
  ctx.run_ = this;
  ctx.task_ = t;
  std::optional<PerfCounters> counters;
  try {
    set_affinity({start});
    const int got = sched_getcpu();
    if (got != start)
      throw std::runtime_error("pinning did not hold: pinned to CPU " + std::to_string(start) +
                               ", running on CPU " + std::to_string(got));
    // The sample arrays' pages, mapped now rather than faulted in one by one inside the timed
    // round trips (a kernel without MADV_POPULATE_WRITE, before 5.14, faults them in as it goes).
    madvise(region_->data(), region_->size(), kPopulateWrite);
    const std::string refused = apply_sched(spec_.params.sched[side], spec_.params.nice[side]);
    if (!refused.empty()) throw std::runtime_error("refused: " + refused);
    // Opened after pinning, so that the counters count this task where it is measured.
    if (!opts.events.empty()) {
      counters.emplace(opts.events);
      if (opts.require_events) require_events(counters->unavailable(), "");
      ctx.counters_ = &*counters;
    }
    workload_->attach(t);
  } catch (const std::exception& e) {
    fail(t, e.what());
    barrier();
    return 1;
  }
  if (!barrier()) return 1;
  if (spec_.by_kernel()) {
    // Kernel placement: start from the defined CPUs above, then let the scheduler place the task
    // anywhere in the cpuset. sched_setaffinity does not move a task whose CPU stays allowed.
    try {
      set_affinity(spec_.cpuset);
    } catch (const std::exception& e) {
      fail(t, e.what());
      return 1;
    }
  }
  if (const int rc = workload_->run(t, ctx); rc != 0) return rc;
  if (counters) {
    try {
      blocks_[t] = to_counter_block(counters->read(), counters->unavailable());
    } catch (const std::exception& e) {
      fail(t, e.what());
      return 1;
    }
  }
  return 0;
}

// Every task is created by a thread standing on that task's start CPU (CreatorCpu), so the
// kernel's state of a new task is the same on every machine and run: its first recent_used_cpu is
// its start CPU (docs/policy-model.md#first-wake).
int CaseRun::start_cpu(size_t t) const {
  const CpuPair pair = pairs_[tasks_[t].pair];
  return tasks_[t].side == Role::kWaker ? pair.first : pair.second;
}

// The tasks of one group in the calling process: the only one on this thread, or one thread each,
// each created from its start CPU.
int CaseRun::group_main(const std::vector<size_t>& group, const RunOptions& opts) noexcept {
  if (group.size() == 1) return task_main(group[0], opts);
  std::vector<std::thread> threads;
  bool started = true;
  {
    CreatorCpu creator;  // restored before the joins: the creator sleeps where it was
    for (size_t t : group) {
      creator.stand_on(start_cpu(t));
      try {
        threads.emplace_back([this, t, &opts] {
          // A failed task ends its whole process: a partner may be blocked in a wait that nothing
          // else would end.
          if (task_main(t, opts) != 0) _exit(1);
        });
      } catch (const std::system_error& e) {  // e.g. EAGAIN under RLIMIT_NPROC
        fail(t, std::string("cannot start its thread: ") + e.what());  // releases the started
        started = false;
        break;
      }
    }
  }
  for (auto& th : threads) th.join();
  return started ? 0 : 1;
}

// Forks a task process. The child dies with the supervisor (PR_SET_PDEATHSIG) and does not inherit
// wakebench's signal handlers: a Ctrl-C or a hangup kills it, the supervisor reaps it. It ignores
// SIGPIPE: a write to a pipe whose reader died fails with EPIPE, which the task reports, instead of
// killing the writer, whose signal death the supervisor could reap first and take for the case's
// reason in place of the partner's (a SIGKILLed wakee would show up as "killed by signal 13
// (SIGPIPE) (waker)").
pid_t CaseRun::spawn(const std::function<int()>& body) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    _exit(body());
  }
  return pid;
}

RunOutcome CaseRun::run(const RunOptions& opts) {
  // Busy before any task exists, so the tasks start (and are timed) under the load.
  BusyTasks background(background_, duty_busy_ns(spec_.params), duty_period_ns(spec_.params));
  Children children = start_tasks(opts);
  std::string error = supervise(children, opts);
  background.stop();
  if (error.empty()) error = task_error(children);
  if (!error.empty()) return {false, error, {}, {}, background_};
  return collect();
}

// Processes mode: one process per task group (its tasks as threads), entering the workload's
// process first. Threads mode: one process for every task.
Children CaseRun::start_tasks(const RunOptions& opts) {
  Children children;
  if (spec_.mode == Mode::kProcesses) {
    std::map<size_t, std::vector<size_t>> groups;
    for (size_t t = 0; t < tasks_.size(); ++t) groups[tasks_[t].group].push_back(t);
    CreatorCpu creator;  // a one-task group's process is that task (group_main)
    for (const auto& [g, members] : groups) {
      std::string who;
      for (size_t t : members) who += (who.empty() ? "" : ", ") + tasks_[t].name;
      if (members.size() == 1) creator.stand_on(start_cpu(members.front()));
      children.add(spawn([this, g = g, members = members, &opts] {
                     try {
                       workload_->enter_process(g);
                     } catch (const std::exception& e) {
                       fail(members.front(), e.what());
                       return 1;
                     }
                     return group_main(members, opts);
                   }),
                   who);
    }
    workload_->release();
  } else {
    std::vector<size_t> all;
    for (size_t t = 0; t < tasks_.size(); ++t) all.push_back(t);
    children.add(spawn([this, &all, &opts] { return group_main(all, opts); }),
                 "threads case process");
  }
  return children;
}

// Waits, in poll() on the task processes' pidfds, until every one is reaped: it kills them all
// on an interrupt, on the timeout and once the failure grace is over (Deadlines), and leaves
// behind those that do not die. Returns why the case failed as the supervisor saw it: interrupted,
// timed out, tasks left behind, or else a task killed by a signal the supervisor did not send;
// "" otherwise.
std::string CaseRun::supervise(Children& children, const RunOptions& opts) {
  std::string error;
  // A task that a signal killed before the supervisor killed anything died from outside (e.g. a
  // SIGKILL): that is the case's reason, ahead of its partner's consequent EPIPE.
  std::string external_death;
  bool we_killed = false;
  Deadlines deadlines(now_ns(), static_cast<int64_t>(opts.timeout_s * 1e9));
  size_t remaining = children.kids().size();
  while (remaining > 0) {
    const int64_t now = now_ns();
    if (g_interrupted.load() && !we_killed) {
      if (error.empty()) error = "interrupted";
      we_killed = true;
      children.kill_all();
      deadlines.killed(now);
    }
    if (deadlines.kill_due(now)) {
      if (deadlines.timed_out(now) && error.empty()) error = timeout_error(opts.timeout_s);
      we_killed = true;
      children.kill_all();
      deadlines.killed(now);
    }
    if (deadlines.give_up(now)) {
      const std::string stuck = children.abandon();
      error = (error.empty() ? "" : error + "; ") + "did not exit within " +
              std::to_string(Deadlines::kKillGraceNs / 1'000'000'000) +
              " s of SIGKILL, left behind: " + stuck;
      break;
    }
    const int64_t wait_ms = std::max<int64_t>(1, (deadlines.next() - now_ns()) / 1'000'000 + 1);
    for (size_t i : children.poll_exited(wait_ms)) {
      const Children::Kid& k = children.reap(i);
      if (WIFSIGNALED(k.status) && !we_killed && external_death.empty())
        external_death = "partner exited: " + describe_wait_status(k.status) + " (" + k.who + ")";
      --remaining;
      if (!exited_ok(k.status) && error.empty()) deadlines.task_failed(now_ns());
    }
  }
  return error.empty() ? external_death : error;
}

// "timeout after 60 s: waker at round trip 812/21000 wakee at round trip 812/21000".
std::string CaseRun::timeout_error(double timeout_s) const {
  std::string error = "timeout after " + format_seconds(timeout_s) + " s:";
  for (size_t t = 0; t < tasks_.size(); ++t)
    error += " " + tasks_[t].name + " at round trip " + std::to_string(slots_[t].progress.load()) +
             "/" + std::to_string(workload_->task_round_trips(t));
  return error;
}

// Once every task process is reaped: the first task's own error (TaskContext::fail), else the
// first task process that did not exit 0; "" when all went well.
std::string CaseRun::task_error(const Children& children) const {
  for (size_t t = 0; t < tasks_.size(); ++t)
    if (slots_[t].error[0]) return slots_[t].error;
  for (const auto& k : children.kids())
    if (!exited_ok(k.status))
      return "partner exited: " + describe_wait_status(k.status) + " (" + k.who + ")";
  return "";
}

RunOutcome CaseRun::collect() {
  RunOutcome out;
  out.ok = true;
  out.background_cpus = background_;
  for (size_t st = 0; st < streams_.size(); ++st) {
    PairSamples s = read_stream(streams_[st], static_cast<size_t>(n_));
    // Pinning must hold for the whole run, not only at setup.
    if (!spec_.by_kernel())
      if (std::string breach = pinning_breach(s, workload_->stream_cpus(st)); !breach.empty())
        return {false, breach, {}, {}, background_};
    out.pairs.push_back(std::move(s));
  }
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const CounterResults r = from_counter_block(blocks_[t]);
    PairSamples& s = out.pairs[tasks_[t].stream];
    const int side = static_cast<int>(tasks_[t].side);
    for (const CounterValue& v : r.values) s.counters[side][v.event] += v.value;
    s.unavailable.insert(r.unavailable.begin(), r.unavailable.end());
    if (sleeps_ && slots_[t].blocked >= 0) {
      s.blocked[side] = s.blocked[side].value_or(0) + slots_[t].blocked;
      s.preempted[side] = s.preempted[side].value_or(0) + slots_[t].preempted;
    }
  }
  out.counters = sum_counters({out.pairs});
  return out;
}

RunOutcome run_case(const CaseSpec& spec, const Mechanism& mech, const Topology& topo,
                    const RunOptions& opts) {
  // Building the case (its workload: sockets, listeners, shared memory) fails only this case,
  // whatever the error, e.g. a refused connect() on a machine whose loopback is down.
  std::optional<CaseRun> run;
  try {
    run.emplace(spec, mech, topo);
  } catch (const std::exception& e) {
    return {false, std::string("setup: ") + e.what(), {}, {}, {}};
  }
  try {
    return run->run(opts);
  } catch (const std::exception& e) {  // a fork, pidfd or memory shortage fails this case only
    return {false, e.what(), {}, {}, {}};
  }
}

}  // namespace wb
