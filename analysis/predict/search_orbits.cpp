#include "analysis/predict/search_orbits.h"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

namespace wb {

std::vector<std::vector<int>> search_cpusets(const SchedTopology& sched) {
  std::set<std::vector<int>> spans = {sched.cpus()};
  for (int cpu : sched.cpus())
    for (const SchedDomain& d : sched.domains(cpu))
      if (d.span.size() >= 2) spans.insert(d.span);
  std::vector<std::vector<int>> out(spans.begin(), spans.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.size() > y.size(); });
  return out;
}

int CandidateSpace::Cpuset::busy_sets(int pos_a) const {
  const int n = static_cast<int>(cpus.size());
  const bool own_core = core_rank[cpus[pos_a]] >= 0;
  return 1 + (n - 1) + static_cast<int>(cores.size()) - (own_core ? 1 : 0);
}

CandidateSpace::CandidateSpace(const SchedTopology& sched) {
  const std::size_t ids = static_cast<std::size_t>(sched.max_cpu() + 1);
  for (std::vector<int>& cpus : search_cpusets(sched)) {
    Cpuset s;
    s.pos.assign(ids, -1);
    s.core_rank.assign(ids, -1);
    for (std::size_t i = 0; i < cpus.size(); ++i) s.pos[cpus[i]] = static_cast<int>(i);
    std::set<std::vector<int>> cores;
    for (int c : cpus) {
      const std::vector<int>& core = sched.smt_mask(c);
      if (core.size() >= 2 &&
          std::all_of(core.begin(), core.end(), [&](int x) { return s.pos[x] >= 0; }))
        cores.insert(core);
    }
    s.cores.assign(cores.begin(), cores.end());
    for (std::size_t r = 0; r < s.cores.size(); ++r)
      for (int c : s.cores[r]) s.core_rank[c] = static_cast<int>(r);
    s.cpus = std::move(cpus);
    s.first = size_;
    std::int64_t at = 0;
    const int n = static_cast<int>(s.cpus.size());
    for (int a = 0; a < n; ++a) {
      s.from_a.push_back(at);
      at += static_cast<std::int64_t>(n - 1) * s.busy_sets(a);
    }
    s.from_a.push_back(at);
    size_ += at;
    set_index_.emplace(s.cpus, static_cast<int>(sets_.size()));
    sets_.push_back(std::move(s));
  }
}

int CandidateSpace::find_set(const std::vector<int>& cpus) const {
  const auto it = set_index_.find(cpus);
  if (it == set_index_.end()) throw std::logic_error("search: a renaming left the cpusets");
  return it->second;
}

CandidateSpace::Parts CandidateSpace::parts(std::int64_t index) const {
  Parts p;
  p.set = static_cast<int>(
              std::upper_bound(sets_.begin(), sets_.end(), index,
                               [](std::int64_t i, const Cpuset& s) { return i < s.first; }) -
              sets_.begin()) -
          1;
  const Cpuset& s = sets_[p.set];
  const std::int64_t rest = index - s.first;
  const int pa = static_cast<int>(std::upper_bound(s.from_a.begin(), s.from_a.end(), rest) -
                                  s.from_a.begin()) -
                 1;
  const int n = static_cast<int>(s.cpus.size());
  const int per_b = s.busy_sets(pa);
  const std::int64_t in_a = rest - s.from_a[pa];
  const int pb = static_cast<int>(in_a / per_b);
  int busy = static_cast<int>(in_a % per_b);
  p.a = s.cpus[pa];
  p.b = s.cpus[pb + (pb >= pa ? 1 : 0)];
  if (busy == 0) return p;
  busy -= 1;
  if (busy < n - 1) {
    p.kind = 1;
    p.busy = s.cpus[busy + (busy >= pa ? 1 : 0)];
    return p;
  }
  busy -= n - 1;
  const int own = s.core_rank[p.a];
  p.kind = 2;
  p.busy = busy + (own >= 0 && busy >= own ? 1 : 0);
  return p;
}

std::int64_t CandidateSpace::index(const Parts& p) const {
  const Cpuset& s = sets_[p.set];
  const int n = static_cast<int>(s.cpus.size());
  const int pa = s.pos[p.a], pb = s.pos[p.b];
  std::int64_t busy = 0;
  if (p.kind == 1) {
    const int pc = s.pos[p.busy];
    busy = 1 + pc - (pc > pa ? 1 : 0);
  } else if (p.kind == 2) {
    const int own = s.core_rank[p.a];
    busy = 1 + (n - 1) + p.busy - (own >= 0 && p.busy > own ? 1 : 0);
  }
  return s.first + s.from_a[pa] +
         static_cast<std::int64_t>(pb - (pb > pa ? 1 : 0)) * s.busy_sets(pa) + busy;
}

SearchCandidate CandidateSpace::at(std::int64_t index) const {
  const Parts p = parts(index);
  SearchCandidate c{sets_[p.set].cpus, p.a, p.b, {}};
  if (p.kind == 1) c.busy = {p.busy};
  if (p.kind == 2) c.busy = sets_[p.set].cores[p.busy];
  return c;
}

CandidateSpace::Parts CandidateSpace::image(const Parts& p, const CpuMap& m, int set_image) const {
  Parts q = p;
  if (set_image < 0) {
    std::vector<int> to;
    for (int c : sets_[p.set].cpus) to.push_back(m[c]);
    std::sort(to.begin(), to.end());
    set_image = find_set(to);
  }
  q.set = set_image;
  q.a = m[p.a];
  q.b = m[p.b];
  if (p.kind == 1) q.busy = m[p.busy];
  if (p.kind == 2) q.busy = sets_[q.set].core_rank[m[sets_[p.set].cores[p.busy].front()]];
  return q;
}

std::int64_t CandidateSpace::image(std::int64_t index, const CpuMap& m) const {
  return this->index(image(parts(index), m));
}

namespace {

// Which generators move what: per CPU, and per cpuset (onto another); with each generator's image
// of every cpuset.
struct Moves {
  std::vector<std::vector<int>> of_cpu, of_set;
  std::vector<std::vector<int>> set_image;  // [generator][cpuset]

  Moves(const CandidateSpace& space, const std::vector<CpuMap>& gens) {
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

}  // namespace

CandidateOrbits::CandidateOrbits(const CandidateSpace& space,
                                 const std::vector<CpuMap>& generators) {
  if (space.size() >= std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("search: " + std::to_string(space.size()) +
                                " candidates on this topology, more than this search numbers");
  LeastRoots classes(static_cast<std::size_t>(space.size()));
  if (!generators.empty()) {
    const Moves moves(space, generators);
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

std::size_t CandidateOrbits::orbit_of(std::int64_t index) const {
  const std::int64_t r = root_[static_cast<std::size_t>(index)];
  return static_cast<std::size_t>(std::lower_bound(first_.begin(), first_.end(), r) -
                                  first_.begin());
}

std::vector<std::int64_t> CandidateOrbits::members(std::size_t orbit) const {
  std::vector<std::int64_t> out;
  const std::uint32_t r = static_cast<std::uint32_t>(first_[orbit]);
  for (std::size_t i = 0; i < root_.size(); ++i)
    if (root_[i] == r) out.push_back(static_cast<std::int64_t>(i));
  return out;
}

}  // namespace wb
