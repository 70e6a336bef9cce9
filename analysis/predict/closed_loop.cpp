#include "analysis/predict/closed_loop.h"

#include <algorithm>
#include <optional>

#include "analysis/model/replay.h"
#include "common/schema/placement.h"

namespace wb {
namespace {

// What ran on each CPU at a record besides the pair (by CPU id): the record's busy CPUs, the
// waker's CPU less the waker, prev's as the record read it (the wakee already dequeued); and the
// delayed tasks on the waker's CPU.
struct Background {
  std::vector<int> running, delayed;
};

Background background_of(const DecisionRecord& d, const SchedTopology& sched) {
  Background b{std::vector<int>(sched.max_cpu() + 1, 0), std::vector<int>(sched.max_cpu() + 1, 0)};
  for (int c : sched.cpus())
    if (!listed_idle(d, c)) b.running[c] = 1;
  if (d.prev >= 0 && d.prev != d.waker_cpu && !listed_idle(d, d.prev))
    b.running[d.prev] = std::max(1, d.prev_nr_running);
  b.running[d.waker_cpu] = std::max(0, d.waker_nr_running - 1);
  b.delayed[d.waker_cpu] = std::min(d.waker_delayed, b.running[d.waker_cpu]);
  return b;
}

// One policy's state: per task, where the loop put it, and whether that is not where the kernel
// put it (`own`; until then the task is where the records say, moved by whatever moved it there:
// an affinity set at the start, a balancer); each LLC's has_idle_cores hint (set at the start, as
// in the steady state: the machine idled before the case).
struct Task {
  int cpu = -1, recent = -1;
  bool own = false;
  int kernel_cpu = -1;  // where the kernel put it at its last record
};
struct Loop {
  std::map<int, Task> task;  // by pid
  std::map<int, bool> hint;  // by sd_llc_id
};

void set_hint(Loop& s, const SchedTopology& sched, int cpu, bool value) {
  if (const SchedDomain* sd = sched.sd_llc(cpu)) s.hint[sd->span.front()] = value;
}

void set_hint_if_core_idle(Loop& s, const SchedTopology& sched, const Background& bg, int cpu,
                           int running) {
  const SchedDomain* sd = sched.sd_llc(cpu);
  if (!sd) return;
  const auto& core = sched.smt_mask(cpu);
  const bool idle = std::none_of(core.begin(), core.end(),
                                 [&](int c) { return c == running || bg.running[c] > 0; });
  if (idle) set_hint(s, sched, cpu, true);
}

bool hint_of(const Loop& s, const SchedTopology& sched, int cpu) {
  const SchedDomain* sd = sched.sd_llc(cpu);
  if (!sd) return false;
  const auto it = s.hint.find(sd->span.front());
  return it != s.hint.end() && it->second;
}

// The record as it would read with the pair where the loop put it: waker W on its CPU, the wakee
// on its prev, everything else as recorded.
DecisionRecord moved(const DecisionRecord& d, const SchedTopology& sched, const Background& bg,
                     const Loop& s, int waker_cpu, int prev, int recent) {
  DecisionRecord m = d;
  m.waker_cpu = waker_cpu;
  m.prev = prev;
  m.recent_used_cpu = recent;
  m.idle.clear();
  for (int c : sched.cpus())
    if (c != waker_cpu && bg.running[c] == 0) m.idle.push_back(c);
  m.waker_nr_running = 1 + bg.running[waker_cpu];
  m.waker_delayed = bg.delayed[waker_cpu];
  m.prev_nr_running = bg.running[prev] + (prev == waker_cpu);
  // The SIS budget the record read in the LLC of `cpu` (prev's where only prev's is that LLC).
  const auto scan_for = [&](int cpu) {
    return sched.cpus_share_cache(cpu, d.prev) && !sched.cpus_share_cache(cpu, d.waker_cpu)
               ? d.prev_nr_idle_scan
               : d.nr_idle_scan;
  };
  m.nr_idle_scan = scan_for(waker_cpu);
  m.prev_nr_idle_scan = scan_for(prev);
  m.has_idle_cores = hint_of(s, sched, waker_cpu);
  m.prev_has_idle_cores = hint_of(s, sched, prev);
  return m;
}

// The record's background with every other told task that runs where the kernel put it (that CPU
// busy in the record) moved to where the loop put it: a fan-out's first wakee stacked by the loop
// on the waker's CPU is still there at the next wake. nullopt when no task was moved.
std::optional<Background> displaced(const Background& bg, const Loop& s, int wakee, int waker) {
  std::optional<Background> out;
  for (const auto& [pid, t] : s.task) {
    if (pid == wakee || pid == waker || !t.own || t.kernel_cpu < 0) continue;
    const Background& now = out ? *out : bg;
    if (now.running[t.kernel_cpu] == 0) continue;  // asleep (or never ran there)
    if (!out) out = bg;
    --out->running[t.kernel_cpu];
    ++out->running[t.cpu];
  }
  return out;
}

// One record given to one policy's loop: where its model puts the wakee against the waker's CPU
// (a class id), the loop moved on. `recorded` and `before`: the record's background and the last
// one's.
std::string loop_step(Loop& s, const DecisionRecord& d, int waker_pid, const Background& recorded,
                      const Background& before, const SchedTopology& sched,
                      const WakeupPolicy& policy, const ModelFeatures& features) {
  const Task& by = s.task[waker_pid];
  Task& e = s.task[d.pid];
  const int waker = by.own ? by.cpu : d.waker_cpu;
  const std::optional<Background> moved_bg = displaced(recorded, s, d.pid, waker_pid);
  const Background& bg = moved_bg ? *moved_bg : recorded;
  // Where every task is the kernel's, the record is the state (its hints too, which the loop then
  // carries); elsewhere the record moved onto the loop's tasks.
  const bool kernels = !by.own && !e.own && !moved_bg;
  if (kernels) {
    set_hint(s, sched, d.waker_cpu, d.has_idle_cores);
    set_hint(s, sched, d.prev, d.prev_has_idle_cores);
  } else {
    // A CPU whose background stopped since the last record went idle: its LLC's hint is set when
    // its core is idle (the waker running aside).
    for (int c = 0; c < static_cast<int>(before.running.size()); ++c)
      if (before.running[c] > 0 && recorded.running[c] == 0 && c != waker)
        set_hint_if_core_idle(s, sched, bg, c, waker);
  }
  WakeInput in = wake_input_of(kernels ? d
                                       : moved(d, sched, bg, s, waker, e.own ? e.cpu : d.prev,
                                               e.own ? e.recent : d.recent_used_cpu),
                               sched);
  in.features = features;
  in.explain = false;
  const WakeDecision got = predict_wakeup(sched, in, policy);
  e = {got.cpu, got.wakee_recent_used_cpu, got.cpu != d.cpu, d.cpu};
  if (got.idle_cores_cleared >= 0) set_hint(s, sched, got.idle_cores_cleared, false);
  // The waker blocks: its CPU goes idle unless the wakee or the background runs there.
  if (got.cpu != waker && bg.running[waker] == 0)
    set_hint_if_core_idle(s, sched, bg, waker, got.cpu);
  return std::string(class_id(classify(sched.topology(), waker, got.cpu)));
}

}  // namespace

std::map<int, int> infer_partners(const std::vector<DecisionRecord>& records) {
  std::map<int, std::pair<int, std::size_t>> placed;  // pid -> (CPU, record index)
  std::map<int, std::map<int, int64_t>> votes;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const DecisionRecord& d = records[i];
    int waker = -1;
    std::size_t latest = 0;
    for (const auto& [pid, at] : placed)
      if (pid != d.pid && at.first == d.waker_cpu && (waker < 0 || at.second > latest))
        waker = pid, latest = at.second;
    if (waker >= 0) ++votes[d.pid][waker];
    placed[d.pid] = {d.cpu, i};
  }
  std::map<int, int> out;
  for (const auto& [pid, by] : votes)
    out[pid] = std::max_element(by.begin(), by.end(), [](const auto& a, const auto& b) {
                 return a.second < b.second;
               })->first;
  return out;
}

ClosedLoop closed_loop_mixes(const std::vector<DecisionRecord>& records, const SchedTopology& sched,
                             const std::vector<const WakeupPolicy*>& policies,
                             const ModelFeatures& features,
                             const std::map<std::string, double>& pinned) {
  ClosedLoop out;
  for (const WakeupPolicy* p : policies) out.mixes.push_back({std::string(p->id())});
  const std::map<int, int> partner = infer_partners(records);
  std::vector<Loop> loops(policies.size());
  for (Loop& s : loops)
    for (int llc : sched.llc_ids()) s.hint[llc] = sched.smt_active();
  Background before;
  for (const DecisionRecord& d : records) {
    const auto w = partner.find(d.pid);
    if (w == partner.end()) {
      ++out.no_waker;
      continue;
    }
    const Background recorded = background_of(d, sched);
    for (std::size_t i = 0; i < policies.size(); ++i)
      out.mixes[i].count(
          loop_step(loops[i], d, w->second, recorded, before, sched, *policies[i], features),
          pinned);
    before = recorded;
  }
  return out;
}

}  // namespace wb
