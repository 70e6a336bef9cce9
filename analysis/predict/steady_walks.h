// The steady state's walks (analysis/predict/predict_steady.cpp): a pair's model state, the wakes
// met from each state, numbered once, and the storage they reuse from one steady state to the next
// (search simulates hundreds of thousands in a row). Internal to predict_steady.cpp and
// intermittent.cpp.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analysis/predict/predict_results.h"

namespace wb::steady {

// The has_idle_cores hint per LLC (by its first CPU), sorted.
using LlcHints = std::vector<std::pair<int, bool>>;

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
  // The number of the hints every run starts with, the same for every run of these walks: `first()`
  // gives them the first time.
  template <typename Fn>
  int first_hints(const Fn& first) {
    if (!first_hints_) first_hints_ = hints_number(first());
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

// Sets the has_idle_cores hint of the LLC whose first CPU is `llc`.
inline void set_hint(LlcHints& hints, int llc, bool set) {
  auto it = std::lower_bound(hints.begin(), hints.end(), std::pair{llc, false});
  if (it != hints.end() && it->first == llc) {
    it->second = set;
  } else {
    hints.insert(it, {llc, set});
  }
}

// The wakes themselves, defined (and described) in predict_steady.cpp; intermittent.cpp walks them
// too: the input of the wake from a state, the hints before the first wake, and the wake from state
// `n` of `walks` (computed once, then followed).
WakeInput& next_wake(const PairState& s, std::span<const std::pair<int, bool>> hints,
                     const SteadyOptions& opt, bool disturbed, WakeBuffer& buf);
LlcHints first_idle_cores(const SchedTopology& sched, const SteadyOptions& opt);
const Step& step(const SchedTopology& sched, const SteadyOptions& opt, const WakeupPolicy& policy,
                 int n, bool disturbed, bool explain, Walks& walks, WakeBuffer& buffer);

inline Walks& walks_for(StepMemo& memo, const SteadyOptions& opt) {
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
  inline static thread_local std::vector<std::unique_ptr<StepMemo>> spare_;
};

}  // namespace wb::steady
