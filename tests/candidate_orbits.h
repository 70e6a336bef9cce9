// The search's reference orbits, for the tests (tests/search_shape_test.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/predict/search_orbits.h"

namespace wb::test {

// The orbits of the candidates under the group `generators` generate, numbered by their first
// member (ascending), by a union-find over every candidate: the reference SearchShapes
// (analysis/predict/search_shapes.h), which `search` uses, is tested against; 4 bytes per
// candidate. Tests only: `search` never visits every candidate.
class CandidateOrbits {
 public:
  CandidateOrbits(const CandidateSpace& space, const std::vector<CpuMap>& generators);
  std::size_t count() const { return first_.size(); }
  std::int64_t first(std::size_t orbit) const { return first_[orbit]; }
  std::int64_t size(std::size_t orbit) const { return size_[orbit]; }
  std::size_t orbit_of(std::int64_t index) const;
  // The orbit's members, ascending (a pass over every candidate).
  std::vector<std::int64_t> members(std::size_t orbit) const;

 private:
  std::vector<std::uint32_t> root_;  // per candidate, its orbit's first member
  std::vector<std::int64_t> first_, size_;
};

// Which generators move what: per CPU, and per cpuset (onto another); with each generator's image
// of every cpuset.
struct GeneratorMoves {
  std::vector<std::vector<int>> of_cpu, of_set;
  std::vector<std::vector<int>> set_image;  // [generator][cpuset]

  GeneratorMoves(const CandidateSpace& space, const std::vector<CpuMap>& gens) {
    of_cpu.resize(gens.empty() ? 0 : gens.front().size());
    of_set.resize(static_cast<std::size_t>(space.cpuset_count()));
    for (std::size_t g = 0; g < gens.size(); ++g) {
      for (std::size_t c = 0; c < gens[g].size(); ++c)
        if (gens[g][c] >= 0 && gens[g][c] != static_cast<int>(c))
          of_cpu[c].push_back(static_cast<int>(g));
      std::vector<int> images;
      for (int s = 0; s < space.cpuset_count(); ++s) {
        std::vector<int> to;
        for (int c : space.cpuset(s)) to.push_back(gens[g][c]);
        std::sort(to.begin(), to.end());
        images.push_back(space.find_set(to));
        if (images.back() != s) of_set[s].push_back(static_cast<int>(g));
      }
      set_image.push_back(std::move(images));
    }
  }
};

inline CandidateOrbits::CandidateOrbits(const CandidateSpace& space,
                                        const std::vector<CpuMap>& generators) {
  if (space.size() >= std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("search: " + std::to_string(space.size()) +
                                " candidates on this topology, more than this search numbers");
  LeastRoots classes(static_cast<std::size_t>(space.size()));
  if (!generators.empty()) {
    const GeneratorMoves moves(space, generators);
    std::vector<std::int64_t> seen(generators.size(), -1);
    for (std::int64_t i = 0; i < space.size(); ++i) {
      const CandidateSpace::Parts p = space.parts(i);
      auto apply = [&](const std::vector<int>& gens) {
        for (int g : gens) {
          if (seen[g] == i) continue;
          seen[g] = i;
          const CandidateSpace::Parts q = space.image(p, generators[g], moves.set_image[g][p.set]);
          classes.join(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(space.index(q)));
        }
      };
      apply(moves.of_set[p.set]);
      apply(moves.of_cpu[p.a]);
      apply(moves.of_cpu[p.b]);
      if (p.kind == 1) apply(moves.of_cpu[p.busy]);
      if (p.kind == 2)
        for (int c : space.core(p.set, p.busy)) apply(moves.of_cpu[c]);
    }
  }
  root_ = classes.take();
  for (std::size_t i = 0; i < root_.size(); ++i) {
    const std::int64_t r = root_[i];
    if (r == static_cast<std::int64_t>(i)) {
      first_.push_back(r);
      size_.push_back(0);
    }
    ++size_[std::lower_bound(first_.begin(), first_.end(), r) - first_.begin()];
  }
}

inline std::size_t CandidateOrbits::orbit_of(std::int64_t index) const {
  const std::int64_t r = root_[static_cast<std::size_t>(index)];
  return static_cast<std::size_t>(std::lower_bound(first_.begin(), first_.end(), r) -
                                  first_.begin());
}

inline std::vector<std::int64_t> CandidateOrbits::members(std::size_t orbit) const {
  std::vector<std::int64_t> out;
  const std::uint32_t r = static_cast<std::uint32_t>(first_[orbit]);
  for (std::size_t i = 0; i < root_.size(); ++i)
    if (root_[i] == r) out.push_back(static_cast<std::int64_t>(i));
  return out;
}

}  // namespace wb::test
