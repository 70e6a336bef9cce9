// Steady state (docs/policy-model.md#steady-state): iterate the model over alternating wakes
// of a pair until its state repeats, and report the placement classes of the repeating cycle.
// What the results become (words, groups, JSON, text): analysis/predict_steady_render.cpp.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "analysis/predict_results.h"

namespace wb {

namespace {

bool in_list(const std::vector<int>& list, int cpu) {
  return list.empty() || std::find(list.begin(), list.end(), cpu) != list.end();
}

// The has_idle_cores hint per LLC (by its first CPU), sorted.
using LlcHints = std::vector<std::pair<int, bool>>;

void set_hint(LlcHints& hints, int llc, bool set) {
  auto it = std::lower_bound(hints.begin(), hints.end(), std::pair{llc, false});
  if (it != hints.end() && it->first == llc) {
    it->second = set;
  } else {
    hints.insert(it, {llc, set});
  }
}

// The key of a pair's model state: whose turn, each task's CPU, recent_used_cpu, last_wakee (as
// "the other task" or not), wakee_flips and the number of its has_idle_cores hints. Equal states
// give equal futures, so the first repeat closes the cycle.
using State = std::array<int, 10>;

// A pair's model state between two wakes.
struct PairState {
  int turn = 0;  // the task that wakes the other next; A (task 0) wakes first
  std::array<int, 2> cpu{};
  std::array<int, 2> recent{};  // recent_used_cpu
  std::array<bool, 2> last_wakee_is_other = {false, false};
  std::array<int, 2> flips = {0, 0};
  // The has_idle_cores hint of each LLC, carried from wake to wake with the kernel's rules
  // (idle_cores_after): the number of its LlcHints in the walks (Walks::hints(); empty when
  // SteadyOptions::has_idle_cores overrides it or no core has two PUs).
  int hints = 0;

  State key() const {
    return {turn,
            cpu[0],
            cpu[1],
            recent[0],
            recent[1],
            last_wakee_is_other[0],
            last_wakee_is_other[1],
            std::min(flips[0], 1 << 20),
            std::min(flips[1], 1 << 20),
            hints};
  }
};

struct Wake {
  PlacementClass cls;
  int waker, prev, cpu;  // the waker's CPU, the wakee's previous and chosen CPU
};

// The CPUs the load balancer may move a task of a pair stacked on `cpu` to: per sched domain of
// `cpu`, the lowest allowed CPU it adds to the level below (that level's idle balance pulls it).
std::vector<int> balance_targets(const SchedTopology& sched, int cpu,
                                 const std::vector<int>& allowed) {
  std::vector<int> out;
  std::vector<int> below = {cpu};
  for (const auto& sd : sched.domains(cpu)) {
    for (int c : sd.span) {
      if (in_list(allowed, c) && std::find(below.begin(), below.end(), c) == below.end()) {
        out.push_back(c);
        break;
      }
    }
    below = sd.span;
  }
  return out;
}

}  // namespace

std::pair<int, int> default_start_pair(const SchedTopology& sched,
                                       const std::vector<int>& allowed) {
  std::vector<int> cpus;
  for (int c : sched.cpus()) {
    if (in_list(allowed, c)) cpus.push_back(c);
  }
  if (cpus.empty())
    throw std::invalid_argument("no allowed CPU in topology " + sched.topology().source());
  int a = cpus.front();
  const auto& core = sched.smt_mask(a);
  auto other_core = [&](int c) { return std::find(core.begin(), core.end(), c) == core.end(); };
  for (int c : cpus) {
    if (other_core(c) && sched.cpus_share_cache(a, c)) return {a, c};
  }
  for (int c : cpus) {
    if (c != a) return {a, c};
  }
  return {a, a};
}

namespace {

// Throws std::invalid_argument when one of `cpus` (the `what` CPUs) is not in the topology.
void check_in_topology(const SchedTopology& sched, const std::vector<int>& cpus,
                       const std::string& what) {
  for (int c : cpus) {
    if (!sched.has_cpu(c)) {
      throw std::invalid_argument(what + " CPU " + std::to_string(c) + " is not in topology " +
                                  sched.topology().source());
    }
  }
}

// The input of the wakes of one set of walks, refilled for each (no allocation once its vectors
// have grown): the WakeInput, nr_running by CPU for it, and the hints a step computes.
struct WakeBuffer {
  WakeBuffer(const SchedTopology& sched, const AllowedCpus& allowed)
      : nr_running(static_cast<std::size_t>(sched.max_cpu() + 1), 0) {
    in.nr_running_by_cpu = &nr_running;
    in.allowed_cpus = &allowed;  // SteadyOptions::allowed
  }
  WakeBuffer(const WakeBuffer&) = delete;
  WakeBuffer& operator=(const WakeBuffer&) = delete;
  WakeInput in;
  std::vector<int> nr_running;
  LlcHints hints;
};

// The wake from state `s` with its `hints`: its waker wakes the other task under the options'
// flags, hogs and cpuset; a disturbed wake finds one more runnable task on the wakee's previous
// CPU. Filled into `buf`.
WakeInput& next_wake(const PairState& s, std::span<const std::pair<int, bool>> hints,
                     const SteadyOptions& opt, bool disturbed, WakeBuffer& buf) {
  const int w = s.turn, e = 1 - s.turn;
  WakeInput& in = buf.in;
  in.waker = s.cpu[w];
  in.prev = s.cpu[e];
  in.sync = opt.sync;
  in.current_cpu = opt.current_cpu;
  in.reciprocal = s.last_wakee_is_other[e];
  in.waker_last_wakee_is_wakee = s.last_wakee_is_other[w];
  std::vector<int>& nr_running = buf.nr_running;
  std::fill(nr_running.begin(), nr_running.end(), 0);
  nr_running[s.cpu[w]] = 1;
  for (int b : opt.busy) nr_running[b] += 1;
  if (disturbed) nr_running[s.cpu[e]] += 1;
  in.sched_idle.clear();
  if (opt.sched_idle && nr_running[s.cpu[w]] == 1) in.sched_idle.push_back(s.cpu[w]);
  in.recent_used_cpu = s.recent[e];
  in.has_idle_cores = opt.has_idle_cores;
  in.llc_hints.clear();
  for (const auto& [llc, set] : hints) in.llc_hints.push_back({llc, set, std::nullopt});
  in.waker_flips = s.flips[w];
  in.wakee_flips = s.flips[e];
  in.features = opt.features;
  return in;
}

// The LLC hints before the first wake: every one set. Before a case the machine idled, and each
// CPU that went idle with its whole core idle set its LLC's hint (update_idle_core()); nothing
// but a scan that finds no idle core clears it, and the hogs started after.
LlcHints first_idle_cores(const SchedTopology& sched, const SteadyOptions& opt) {
  LlcHints out;
  if (opt.has_idle_cores || !sched.smt_active()) return out;
  for (int llc : sched.llc_ids()) out.emplace_back(llc, true);
  return out;
}

// The hints after the wake `in` decided `d` (kernel/sched/fair.c): the scan that found no idle
// core cleared its LLC's (select_idle_cpu()); then the waker blocks, and its CPU, unless the
// wakee or a hog runs there, goes idle and sets its LLC's hint when every sibling is idle too
// (__update_idle_core()); after a disturbed wake, prev's CPU does the same once its extra task
// is done.
void idle_cores_after(const SchedTopology& sched, const SteadyOptions& opt, const WakeInput& in,
                      const WakeDecision& d, bool disturbed, LlcHints& hints) {
  if (hints.empty()) return;
  if (d.idle_cores_cleared >= 0)
    set_hint(hints, sched.sd_llc(d.idle_cores_cleared)->span.front(), false);
  auto busy = [&](int c) {
    return c == d.cpu || std::find(opt.busy.begin(), opt.busy.end(), c) != opt.busy.end();
  };
  auto goes_idle = [&](int cpu) {
    const SchedDomain* sd = sched.sd_llc(cpu);
    const auto& core = sched.smt_mask(cpu);
    if (sd && !busy(cpu) && std::none_of(core.begin(), core.end(), busy))
      set_hint(hints, sd->span.front(), true);
  };
  goes_idle(in.waker);
  if (disturbed) goes_idle(in.prev);
}

// The state after the wake from `s` decided `d`: the wakee on its CPU, and its turn to wake (its
// hints apart: idle_cores_after()).
PairState after_wake(PairState s, const WakeDecision& d) {
  const int w = s.turn, e = 1 - s.turn;
  s.cpu[e] = d.cpu;
  s.recent[e] = d.wakee_recent_used_cpu;
  s.flips[w] = d.waker_flips;
  s.last_wakee_is_other[w] = true;
  s.turn = e;
  return s;
}

// One wake from a state: what it was, and the number of the state after it.
struct Step {
  Wake wake;
  std::string path;  // WakeDecision::path; empty unless computed with `explain`
  HookSites sites;   // WakeDecision::sites
  int next = -1;
  bool stacked = false;  // a disturbed wake put the wakee on the waker's CPU, away from prev
};

// The numbers of the states met, by their keys: open addressing into the states (no allocation
// per state), emptied by counting a clear.
class StateIndex {
 public:
  // The slot of `key` among `states`: its number, else -1, where the number goes.
  int& slot(const State& key, const std::vector<PairState>& states) {
    if (slots_.size() < 2 * (states.size() + 1)) rehash(states);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.clears != clears_) s = {clears_, -1};  // empty since the last clear
      if (s.number < 0 || states[static_cast<std::size_t>(s.number)].key() == key) return s.number;
    }
  }
  // Forgets every state, keeping the slots.
  void clear() { ++clears_; }

 private:
  struct Slot {
    std::uint64_t clears = 0;  // the clear it was filled after
    int number = -1;
  };
  void rehash(const std::vector<PairState>& states) {
    slots_.assign(std::bit_ceil(std::max<std::size_t>(64, 4 * (states.size() + 1))), {clears_, -1});
    for (std::size_t n = 0; n < states.size(); ++n)
      slot(states[n].key(), states) = static_cast<int>(n);
  }
  static std::size_t hash(const State& key) {
    std::uint64_t h = 0xcbf29ce484222325;  // FNV-1a over the values
    for (int v : key) h = (h ^ static_cast<std::uint32_t>(v)) * 0x100000001b3;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
  std::vector<Slot> slots_;  // a power of two of them, at most half in use
  std::uint64_t clears_ = 0;
};

// The sets of has_idle_cores hints the states carry, numbered: a walk meets few, and every set of
// one walk names the same LLCs, so they are stored end to end.
class HintSets {
 public:
  int number(const LlcHints& hints) {
    size_ = hints.size();
    for (int k = 0; k < count_; ++k)
      if (std::equal(hints.begin(), hints.end(), at(k).begin())) return k;
    sets_.insert(sets_.end(), hints.begin(), hints.end());
    return count_++;
  }
  std::span<const std::pair<int, bool>> at(int k) const {
    return {sets_.data() + static_cast<std::size_t>(k) * size_, size_};
  }
  void clear() {
    sets_.clear();
    count_ = 0;
  }

 private:
  LlcHints sets_;
  std::size_t size_ = 0;  // hints per set
  int count_ = 0;
};

// The states met so far and the wakes from them, per disturbed or not: within one steady state
// and its alternatives (one policy, one cpuset, one start up to reversal, the same busy CPUs and
// flags) the wake from a state depends on the state alone, and the alternatives' runs go through
// the same states again and again (docs/policy-model.md#steady-state). States are numbered once,
// so a run that meets them again follows numbers, and finds its repeat by number; so are their
// sets of hints. Cleared, they keep their storage for the next steady state's walks.
class Walks {
 public:
  void clear() {
    states_.clear();
    index_.clear();
    step_of_.clear();
    steps_.clear();
    seen_run_.clear();
    seen_at_.clear();
    run_ = 0;
    hint_sets_.clear();
    first_hints_.reset();
  }
  int number(const PairState& s) {
    int& n = index_.slot(s.key(), states_);
    if (n < 0) {
      n = static_cast<int>(states_.size());
      states_.push_back(s);
      step_of_.push_back({-1, -1});
      seen_run_.push_back(0);
      seen_at_.push_back(0);
    }
    return n;
  }
  const PairState& state(int n) const { return states_[static_cast<std::size_t>(n)]; }
  int hints_number(const LlcHints& hints) { return hint_sets_.number(hints); }
  std::span<const std::pair<int, bool>> hints(int n) const { return hint_sets_.at(n); }
  // The number of the hints every run starts with (first_idle_cores(), the same for every run of
  // these walks).
  int first_hints(const SchedTopology& sched, const SteadyOptions& opt) {
    if (!first_hints_) first_hints_ = hints_number(first_idle_cores(sched, opt));
    return *first_hints_;
  }
  // The wake from state `n`, disturbed or not, if met before.
  const Step* step(int n, bool disturbed) const {
    const int k = step_of_[static_cast<std::size_t>(n)][disturbed];
    return k < 0 ? nullptr : &steps_[static_cast<std::size_t>(k)];
  }
  const Step& add(int n, bool disturbed, Step st) {
    step_of_[static_cast<std::size_t>(n)][disturbed] = static_cast<int>(steps_.size());
    steps_.push_back(std::move(st));
    return steps_.back();
  }
  // Every wake met: fn(state, disturbed, step); false stops.
  template <typename Fn>
  bool all_steps(const Fn& fn) const {
    for (std::size_t n = 0; n < states_.size(); ++n)
      for (int d : {0, 1})
        if (const int k = step_of_[n][d]; k >= 0 && !fn(states_[n], d == 1, steps_[k]))
          return false;
    return true;
  }
  // A run's repeat detection: new_run() forgets what the last run saw; seen() gives the index of
  // the wake from state `n` in this run, else records `index` for it.
  void new_run() { ++run_; }
  std::optional<int> seen(int n, int index) {
    const auto k = static_cast<std::size_t>(n);
    if (seen_run_[k] == run_) return seen_at_[k];
    seen_run_[k] = run_;
    seen_at_[k] = index;
    return std::nullopt;
  }

 private:
  std::vector<PairState> states_;
  StateIndex index_;
  std::vector<std::array<int, 2>> step_of_;  // by state, per disturbed: into steps_, -1: not met
  std::vector<Step> steps_;
  std::vector<int> seen_run_, seen_at_;
  int run_ = 0;
  HintSets hint_sets_;
  std::optional<int> first_hints_;
};
// Per has_idle_cores override (none, false, true): the one option the alternatives change. And
// the cpuset every wake of them reads (SteadyOptions::allowed, which they share), and the buffer
// their wakes are computed in.
struct StepMemo {
  StepMemo(const SchedTopology& sched, const SteadyOptions& opt)
      : allowed(sched, opt.allowed), buffer(sched, allowed) {}
  // For another steady state, keeping the storage.
  void reset(const SchedTopology& sched, const SteadyOptions& opt) {
    allowed = AllowedCpus(sched, opt.allowed);
    buffer.nr_running.assign(static_cast<std::size_t>(sched.max_cpu() + 1), 0);
    for (Walks& w : walks) w.clear();
  }
  AllowedCpus allowed;
  WakeBuffer buffer;
  std::array<Walks, 3> walks;
};

Walks& walks_for(StepMemo& memo, const SteadyOptions& opt) {
  return memo.walks[opt.has_idle_cores ? static_cast<std::size_t>(*opt.has_idle_cores) + 1 : 0];
}

// A StepMemo from those of the steady states simulated before on this thread (search simulates
// hundreds of thousands in a row), given back when done: a memo reset keeps its storage, so the
// walks stop allocating once grown.
class PooledMemo {
 public:
  PooledMemo(const SchedTopology& sched, const SteadyOptions& opt) {
    if (spare_.empty()) {
      memo_ = std::make_unique<StepMemo>(sched, opt);
    } else {
      memo_ = std::move(spare_.back());
      spare_.pop_back();
      memo_->reset(sched, opt);
    }
  }
  ~PooledMemo() { spare_.push_back(std::move(memo_)); }
  PooledMemo(const PooledMemo&) = delete;
  PooledMemo& operator=(const PooledMemo&) = delete;
  StepMemo& operator*() const { return *memo_; }

 private:
  std::unique_ptr<StepMemo> memo_;
  static thread_local std::vector<std::unique_ptr<StepMemo>> spare_;
};
thread_local std::vector<std::unique_ptr<StepMemo>> PooledMemo::spare_;

// The wake from state `n`, with its path when `explain`. Only a memo's first run explains, its
// first wakes, and those are new to the memo or met earlier in that run: never met unexplained.
const Step& step(const SchedTopology& sched, const SteadyOptions& opt, const WakeupPolicy& policy,
                 int n, bool disturbed, bool explain, Walks& walks, WakeBuffer& buffer) {
  if (const Step* met = walks.step(n, disturbed)) return *met;
  const PairState s = walks.state(n);  // a copy: numbering the next state may move the states
  WakeInput& in = next_wake(s, walks.hints(s.hints), opt, disturbed, buffer);
  in.explain = explain;
  WakeDecision d = predict_wakeup(sched, in, policy);
  Step out;
  out.wake = {classify(sched.topology(), in.waker, d.cpu), in.waker, in.prev, d.cpu};
  out.path = std::move(d.path);
  out.sites = d.sites;
  out.stacked = disturbed && d.cpu == in.waker && in.prev != in.waker;
  PairState next = after_wake(s, d);
  const auto hints = walks.hints(s.hints);
  buffer.hints.assign(hints.begin(), hints.end());
  idle_cores_after(sched, opt, in, d, disturbed, buffer.hints);
  next.hints = walks.hints_number(buffer.hints);
  out.next = walks.number(next);
  return walks.add(n, disturbed, std::move(out));
}

// Wakes the pair from `start` until its state repeats or opt.max_wakes: the result up to its
// classes, cpus and alternatives (first_paths only with `paths`), and the wakes that count (those
// after the disturbed wake, if one is; res.transient_wakes and res.cycle_wakes index them).
std::pair<SteadyResult, std::vector<Wake>> run_pair(const SchedTopology& sched,
                                                    const SteadyOptions& opt,
                                                    const WakeupPolicy& policy,
                                                    const std::array<int, 2>& start, bool paths,
                                                    StepMemo& memo) {
  SteadyResult res;
  res.policy = std::string(policy.id());
  Walks& walks = walks_for(memo, opt);
  int s = walks.number({.cpu = start, .recent = start, .hints = walks.first_hints(sched, opt)});
  walks.new_run();
  std::vector<Wake> wakes;
  for (int step_no = 0; step_no < opt.max_wakes; ++step_no) {
    const int index = static_cast<int>(wakes.size());
    if (const std::optional<int> from = walks.seen(s, index)) {
      res.settled = true;
      res.transient_wakes = *from;
      res.cycle_wakes = index - *from;
      break;
    }
    const bool disturbed = step_no == opt.disturb_wake;
    const bool explain = paths && res.first_paths.size() < 4;
    const Step& st = step(sched, opt, policy, s, disturbed, explain, walks, memo.buffer);
    if (explain) res.first_paths.push_back(st.path);
    wakes.push_back(st.wake);
    if (st.stacked) res.disturbed_stacked_on = st.wake.cpu;
    s = st.next;
    if (disturbed) {  // only what follows the disturbed wake counts
      walks.new_run();
      wakes.clear();
    }
  }
  if (!res.settled) {
    // No repeat within the budget: report the last half of the run as the tendency.
    res.transient_wakes = static_cast<int>(wakes.size() / 2);
    res.cycle_wakes = static_cast<int>(wakes.size()) - res.transient_wakes;
  }
  return {std::move(res), std::move(wakes)};
}

// The share of each placement class among the `count` wakes of the cycle from wakes[first], and
// the CPUs the pair occupies in it.
std::pair<std::map<PlacementClass, double>, std::vector<int>> cycle_placement(
    const std::vector<Wake>& wakes, int first, int count) {
  std::map<PlacementClass, double> classes;
  std::set<int> cpus;
  for (int i = first; i < first + count; ++i) {
    classes[wakes[i].cls] += 1.0 / count;
    cpus.insert(wakes[i].waker);
    cpus.insert(wakes[i].cpu);
  }
  return {std::move(classes), std::vector<int>(cpus.begin(), cpus.end())};
}

// simulate_steady_state() with the wakes met so far (the public one starts a memo); first_paths
// only with `paths` (the alternatives' runs keep none).
SteadyResult steady_state(const SchedTopology& sched, const SteadyOptions& opt,
                          const WakeupPolicy& policy, StepMemo& memo, bool paths = false);

// A disturbed wake at each wake of the settled cycle (`wakes`, from res.transient_wakes on):
// where the pair settles after it, and where it stays stacked when the wake stacks it.
std::vector<SteadyAlternative> after_disturbances(const SchedTopology& sched,
                                                  const SteadyOptions& opt,
                                                  const WakeupPolicy& policy,
                                                  const std::vector<Wake>& wakes,
                                                  const SteadyResult& res, StepMemo& memo) {
  using K = AltCause::Kind;
  std::vector<SteadyAlternative> found;
  SteadyOptions d = opt;
  d.try_disturbances = false;
  for (int k = 0; k < res.cycle_wakes; ++k) {
    d.disturb_wake = res.transient_wakes + k;
    const Wake& at = wakes[res.transient_wakes + k];
    const SteadyResult after = steady_state(sched, d, policy, memo);
    if (after.settled) {
      found.push_back(
          {{.kind = K::kBusyPrev, .waker = at.waker, .busy = at.prev}, after.classes, after.cpus});
    }
    // A wake that stacks the pair can leave it stacked for good: the wakee preempts the waker
    // at every wake, so the waker never blocks and needs no wake, and the wakee, blocking while
    // the waker is still queued, stays on that runqueue (EEVDF's delayed dequeue) and is woken
    // there (ttwu_runnable, docs/policy-model.md#bypasses): no selection ever splits them again.
    if (after.disturbed_stacked_on) {
      const int on = *after.disturbed_stacked_on;
      found.push_back({{.kind = K::kBusyPrevStays, .waker = at.waker, .busy = at.prev, .to = on},
                       {{PlacementClass::kSameCpu, 1.0}},
                       {on}});
    }
  }
  return found;
}

// With the LLC's has_idle_cores hint stale (false): it is set when a CPU goes idle with its whole
// core idle and cleared by a scan that found no idle core; stale, the scan takes an idle sibling
// where an idle core waits.
std::vector<SteadyAlternative> with_stale_idle_cores(const SchedTopology& sched,
                                                     const SteadyOptions& opt,
                                                     const WakeupPolicy& policy, StepMemo& memo) {
  SteadyOptions h = opt;
  h.has_idle_cores = false;
  h.try_disturbances = false;
  const SteadyResult stale = steady_state(sched, h, policy, memo);
  if (!stale.settled) return {};
  return {{{.kind = AltCause::Kind::kStaleIdleCores}, stale.classes, stale.cpus}};
}

// With a slow switch-out (SteadyOptions::slow_switch_out) every wake is queued on the partner's
// own CPU (p->on_cpu), so no selection ever moves the pair from CPUs `a` and `b`.
SteadyAlternative held(const Topology& topo, int a, int b, const AltCause& cause) {
  return {cause,
          {{classify(topo, a, b), 1.0}},
          a == b ? std::vector<int>{a} : std::vector<int>{std::min(a, b), std::max(a, b)}};
}

// A pair stacked on one CPU (`cpus` of the steady state, or of an alternative `kept` so far) has
// two runnable tasks there at every wake: the load balancer pulls one to an idle allowed CPU
// (which domain's balance gets there first is timing), and with a slow switch-out the wakes then
// keep it there (held()).
std::vector<SteadyAlternative> balancer_pulls(const SchedTopology& sched,
                                              const std::vector<int>& allowed,
                                              const std::vector<int>& cpus,
                                              const std::vector<SteadyAlternative>& kept) {
  std::set<int> stacked;
  if (cpus.size() == 1) stacked.insert(cpus.front());
  for (const auto& a : kept)
    if (a.cpus.size() == 1) stacked.insert(a.cpus.front());
  std::vector<SteadyAlternative> found;
  for (int from : stacked) {
    for (int to : balance_targets(sched, from, allowed)) {
      found.push_back(held(sched.topology(), from, to,
                           {.kind = AltCause::Kind::kBalancerPull, .from = from, .to = to}));
    }
  }
  return found;
}

// The other task wakes first: that start's steady state, and its own alternatives. Where the
// reversed start settles on the steady state's classes on other CPUs (a pair stacked elsewhere),
// what follows from there still counts.
std::vector<SteadyAlternative> after_reversed_start(const SchedTopology& sched,
                                                    const SteadyOptions& opt,
                                                    const WakeupPolicy& policy,
                                                    const std::array<int, 2>& start,
                                                    StepMemo& memo) {
  SteadyOptions r = opt;
  r.start_a = start[1];
  r.start_b = start[0];
  r.try_reverse = false;
  const SteadyResult reversed = steady_state(sched, r, policy, memo);
  std::vector<SteadyAlternative> found;
  if (reversed.settled) {
    found.push_back({{.kind = AltCause::Kind::kReversedStart, .from = start[1], .to = start[0]},
                     reversed.classes,
                     reversed.cpus});
  }
  for (const auto& a : reversed.alternatives) {
    AltCause then = a.cause;
    then.after_reversed = std::pair{start[1], start[0]};
    found.push_back({then, a.classes, a.cpus});
  }
  return found;
}

// The other steady states the pair can settle in (SteadyResult::alternatives,
// docs/policy-model.md#steady-state), each with its cause: after a disturbed wake of the settled
// cycle (`wakes`, from res.transient_wakes on), with a stale has_idle_cores hint, with a slow
// switch-out, and from the reversed start. Each distribution of classes counts once, under the
// first cause found, and never the steady state's own.
std::vector<SteadyAlternative> alternatives(const SchedTopology& sched, const SteadyOptions& opt,
                                            const WakeupPolicy& policy,
                                            const std::array<int, 2>& start,
                                            const std::vector<Wake>& wakes, const SteadyResult& res,
                                            StepMemo& memo) {
  std::vector<SteadyAlternative> kept;
  auto keep = [&](std::vector<SteadyAlternative> found) {
    for (auto& a : found) {
      auto same = [&](const SteadyAlternative& k) { return k.classes == a.classes; };
      if (a.classes != res.classes && std::none_of(kept.begin(), kept.end(), same))
        kept.push_back(std::move(a));
    }
  };
  keep(after_disturbances(sched, opt, policy, wakes, res, memo));
  if (sched.smt_active() && !opt.has_idle_cores)
    keep(with_stale_idle_cores(sched, opt, policy, memo));
  if (opt.slow_switch_out && opt.features.ttwu_queue) {  // no queueing by IPI without TTWU_QUEUE
    if (start[0] != start[1]) {
      keep({held(sched.topology(), start[0], start[1],
                 {.kind = AltCause::Kind::kHeldAtStart, .from = start[0], .to = start[1]})});
    }
    keep(balancer_pulls(sched, opt.allowed, res.cpus, kept));
  }
  if (opt.try_reverse) keep(after_reversed_start(sched, opt, policy, start, memo));
  return kept;
}

}  // namespace

bool slow_switch_out_applies(bool emulated, long long work_ns) {
  return emulated && work_ns < kSwitchOutWorkNs;
}

namespace {

SteadyResult steady_state(const SchedTopology& sched, const SteadyOptions& opt,
                          const WakeupPolicy& policy, StepMemo& memo, bool paths) {
  std::array<int, 2> start = {opt.start_a.value_or(-1), opt.start_b.value_or(-1)};
  if (!opt.start_a || !opt.start_b) {  // a quadratic walk: only when a start is missing
    auto [def_a, def_b] = default_start_pair(sched, opt.allowed);
    start = {opt.start_a.value_or(def_a), opt.start_b.value_or(def_b)};
  }
  check_in_topology(sched, {start[0], start[1]}, "start");
  check_in_topology(sched, opt.busy, "busy");
  auto [res, wakes] = run_pair(sched, opt, policy, start, paths, memo);
  std::tie(res.classes, res.cpus) = cycle_placement(wakes, res.transient_wakes, res.cycle_wakes);
  if (opt.try_disturbances && res.settled)
    res.alternatives = alternatives(sched, opt, policy, start, wakes, res, memo);
  return std::move(res);
}

}  // namespace

SteadyResult simulate_steady_state(const SchedTopology& sched, const SteadyOptions& opt,
                                   const WakeupPolicy& policy) {
  PooledMemo memo(sched, opt);
  return steady_state(sched, opt, policy, *memo, true);
}

namespace {

// Whether `policy` decides every wake of mainline's walks (`memo`, under `opt`) as mainline did:
// then its own walks are mainline's.
bool walks_as_mainline(const SchedTopology& sched, const SteadyOptions& opt,
                       const WakeupPolicy& policy, StepMemo& memo) {
  for (std::size_t k = 0; k < memo.walks.size(); ++k) {  // walks_for()'s order
    const Walks& walks = memo.walks[k];
    SteadyOptions o = opt;
    o.has_idle_cores = k == 0 ? std::nullopt : std::optional<bool>(k == 2);
    const bool alike = walks.all_steps([&](const PairState& s, bool disturbed, const Step& st) {
      const WakeInput& in = next_wake(s, walks.hints(s.hints), o, disturbed, memo.buffer);
      return decides_as(policy, WakeContext(sched, in), st.sites);
    });
    if (!alike) return false;
  }
  return true;
}

}  // namespace

std::vector<SteadyResult> simulate_steady_states(const SchedTopology& sched,
                                                 const SteadyOptions& opt,
                                                 const std::vector<const WakeupPolicy*>& policies) {
  const WakeupPolicy& mainline = policy_by_id("mainline");
  PooledMemo memo(sched, opt);
  const SteadyResult base = steady_state(sched, opt, mainline, *memo, false);
  std::vector<SteadyResult> out;
  for (const WakeupPolicy* p : policies) {
    if (p == &mainline || !p->acts_on(sched) || walks_as_mainline(sched, opt, *p, *memo)) {
      out.push_back(base);
      out.back().policy = std::string(p->id());
    } else {
      PooledMemo own(sched, opt);
      out.push_back(steady_state(sched, opt, *p, *own, false));
    }
  }
  return out;
}

std::vector<SteadyResult> simulate_steady_state(const SchedTopology& sched,
                                                const SteadyOptions& opt) {
  std::vector<SteadyResult> out;
  for (const auto* p : all_policies()) out.push_back(simulate_steady_state(sched, opt, *p));
  return out;
}

}  // namespace wb
