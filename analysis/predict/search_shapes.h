// The shapes of `wakebench search` (the orbits of its candidates under a group of renamings that
// keep the model's answer, analysis/predict/search_orbits.h) found without visiting every
// candidate: the orbits of the cpusets, then per cpuset the orbits of its stabilizer on the waker's
// start, then per (cpuset, start) the orbits of their stabilizer on the rest of a candidate
// (docs/policy-model.md#search-symmetry). The same orbits as the union-find over every
// candidate (tests/candidate_orbits.h), numbered alike (by first member), on a fraction of the
// candidates. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "analysis/model/symmetry.h"
#include "analysis/predict/perm_group.h"
#include "analysis/predict/search_orbits.h"

namespace wb {

class SearchShapes {
 public:
  // Throws OutOfTime when `in_time` says so (asked once per cpuset and start).
  SearchShapes(const CandidateSpace& space, const std::vector<CpuMap>& generators,
               const InTime& in_time = {});
  std::size_t count() const { return first_.size(); }
  std::int64_t first(std::size_t shape) const { return first_[shape]; }
  std::int64_t size(std::size_t shape) const { return size_[shape]; }
  // The shape of any candidate (its canonical member found by renaming, not by a table).
  std::size_t shape_of(std::int64_t index) const;
  // The shape's least `n` members (or all, if fewer), ascending.
  std::vector<std::int64_t> first_members(std::size_t shape, std::size_t n) const;
  // How many candidates were visited to find the shapes (those of each (cpuset, start) kept).
  std::int64_t visited() const { return visited_; }

 private:
  // The points renamings act on: CPU ids, then the cpusets, then the whole cores (busy sets).
  int set_point(int set) const { return cpu_ids_ + set; }
  Perm extended(const CpuMap& m) const;
  // One (cpuset, start) kept, with what its candidates need.
  struct Block {
    int set = 0, a = -1;
    std::int64_t base = 0;    // the index of its first candidate
    std::int64_t weight = 0;  // |orbit of the cpuset| x |orbit of the start under its stabilizer|
    std::vector<Perm> stab;   // generators of the stabilizer of the cpuset and the start
    std::size_t first_shape = 0;
  };
  void add_set(int set, const StabChain& group, const InTime& in_time);
  void add_block(Block b);
  // Per candidate of the block (local index): the least local index of its orbit under b.stab.
  std::vector<std::uint32_t> roots(const Block& b) const;
  const std::vector<std::uint32_t>& cached_roots(std::size_t block) const;
  // g with g(from) = to, a product of `gens` (from and to in one orbit), found breadth first.
  Perm carrying(const std::vector<Perm>& gens, int from, int to) const;
  CandidateSpace::Parts renamed(const CandidateSpace::Parts& p, const Perm& g) const;

  const CandidateSpace& space_;
  int cpu_ids_ = 0, degree_ = 0;
  std::map<std::vector<int>, int> core_point_;
  std::vector<Perm> gens_;                   // on every point
  std::vector<int> set_rep_;                 // per cpuset: the least of its orbit
  std::vector<std::vector<Perm>> set_stab_;  // per kept cpuset: its stabilizer's generators
  std::vector<Block> blocks_;
  std::vector<std::int64_t> first_, size_;
  std::int64_t visited_ = 0;
  mutable std::map<std::size_t, std::vector<std::uint32_t>> roots_;  // by block, when asked
};

}  // namespace wb
