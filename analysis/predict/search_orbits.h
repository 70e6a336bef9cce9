// The candidates of `wakebench search` as a numbered space, and its orbits under a group of
// renamings that keep the model's answer (analysis/model/symmetry.h): each orbit is one experiment,
// its members the same experiment on other CPU ids (docs/policy-model.md#search-symmetry). Pure.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "analysis/model/policy_model.h"
#include "analysis/model/symmetry.h"

namespace wb {

// A union-find over 0..n-1 whose roots are each class's least member (the candidate orbits,
// SearchShapes' orbits of pairs).
class LeastRoots {
 public:
  explicit LeastRoots(std::size_t n) : up_(n) {
    for (std::size_t i = 0; i < n; ++i) up_[i] = static_cast<std::uint32_t>(i);
  }
  std::uint32_t find(std::uint32_t x) {
    while (up_[x] != x) x = up_[x] = up_[up_[x]];
    return x;
  }
  void join(std::uint32_t x, std::uint32_t y) {
    x = find(x), y = find(y);
    if (x != y) up_[std::max(x, y)] = std::min(x, y);
  }
  // Every member's root: a parent is always a lesser index, so one pass upwards settles all.
  std::vector<std::uint32_t> take() {
    for (std::size_t i = 0; i < up_.size(); ++i) up_[i] = up_[up_[i]];
    return std::move(up_);
  }

 private:
  std::vector<std::uint32_t> up_;
};

struct SearchCandidate {
  std::vector<int> allowed;  // the cpuset; every CPU of the topology for `kernel`
  int start_a = -1, start_b = -1;
  std::vector<int> busy;
  bool operator==(const SearchCandidate&) const = default;
};

// Every CPU, then each distinct sched-domain span of two or more CPUs, widest first: the cpusets
// `search` tries.
std::vector<std::vector<int>> search_cpusets(const SchedTopology& sched);

// Every candidate in search's fixed order: cpusets (every CPU, then each distinct sched-domain
// span of two or more CPUs) widest first, then start pairs (a, b), then busy sets: none, each CPU
// of the cpuset but a, each whole core of the cpuset without a.
class CandidateSpace {
 public:
  explicit CandidateSpace(const SchedTopology& sched);
  std::int64_t size() const { return size_; }
  SearchCandidate at(std::int64_t index) const;
  // The index of the candidate `m` (a symmetry: it maps cpusets onto cpusets) renames `index` to.
  std::int64_t image(std::int64_t index, const CpuMap& m) const;

  // One candidate as indexes: the cpuset, the starts, and the busy set (kind 0 none, 1 the CPU
  // `busy`, 2 the cpuset's core of rank `busy`).
  struct Parts {
    int set = 0, a = -1, b = -1, kind = 0, busy = -1;
  };
  Parts parts(std::int64_t index) const;
  std::int64_t index(const Parts& p) const;
  // `set_image`: the index of the cpuset `m` maps p.set onto (-1: look it up).
  Parts image(const Parts& p, const CpuMap& m, int set_image = -1) const;
  int cpuset_count() const { return static_cast<int>(sets_.size()); }
  const std::vector<int>& cpuset(int set) const { return sets_[set].cpus; }
  const std::vector<int>& core(int set, int rank) const { return sets_[set].cores[rank]; }
  int core_count(int set) const { return static_cast<int>(sets_[set].cores.size()); }
  // The candidates of the cpuset `set` with its CPU at position `pos_a` as the waker's start: the
  // index of the first, and how many (contiguous).
  std::pair<std::int64_t, std::int64_t> block(int set, int pos_a) const {
    const Cpuset& s = sets_[set];
    return {s.first + s.from_a[pos_a], s.from_a[pos_a + 1] - s.from_a[pos_a]};
  }

 private:
  struct Cpuset {
    std::vector<int> cpus;
    std::vector<int> pos;                 // by CPU id: its position in `cpus`, -1 if absent
    std::vector<std::vector<int>> cores;  // its whole cores of two or more PUs, in order
    std::vector<int> core_rank;           // by CPU id: the rank of its core in `cores`, -1
    std::vector<std::int64_t> from_a;     // by position of a: the first index with that a
    std::int64_t first = 0;               // the index of its first candidate
    int busy_sets(int pos_a) const;
  };
  std::vector<Cpuset> sets_;
  std::map<std::vector<int>, int> set_index_;
  std::int64_t size_ = 0;

 public:
  // The index of the cpuset with these (sorted) CPUs; throws std::logic_error for none.
  int find_set(const std::vector<int>& cpus) const;
};

}  // namespace wb
