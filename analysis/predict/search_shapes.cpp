// The candidate orbits by stabilizers (analysis/predict/search_shapes.h). A candidate is (cpuset S,
// start a, start b, busy set). Two with the same S and a lie in one orbit exactly when a renaming
// fixing S and a maps one onto the other, so the orbits are, per orbit of S (under G) and per orbit
// of a (under G_S, the stabilizer of S), the orbits of G_{S,a} on the pairs (b, busy) of the least
// S and the least a of those orbits. Ordered by (S, a, b, busy) as the candidate index is, the
// least member of an orbit is the least S of its orbit, then the least a of that S's G_S-orbit,
// then the least (b, busy) of its G_{S,a}-orbit: the first member the reference union-find
// (tests/candidate_orbits.h) numbers it by.
// The stabilizers come from Schreier-Sims (analysis/predict/perm_group.h), the cpusets and whole
// cores being points of their own beside the CPUs, so that a set's stabilizer is a point's.
#include "analysis/predict/search_shapes.h"

#include <algorithm>
#include <numeric>

namespace wb {

namespace {

// The orbit of `from` under `gens`, each point with a product of gens that carries `from` there.
std::vector<std::pair<int, Perm>> transversals(const std::vector<Perm>& gens, int from,
                                               int degree) {
  std::vector<std::pair<int, Perm>> out;
  Perm id(static_cast<std::size_t>(degree));
  std::iota(id.begin(), id.end(), 0);
  std::vector<char> seen(static_cast<std::size_t>(degree), 0);
  seen[static_cast<std::size_t>(from)] = 1;
  out.emplace_back(from, std::move(id));
  for (std::size_t k = 0; k < out.size(); ++k)
    for (const Perm& g : gens) {
      const int y = g[static_cast<std::size_t>(out[k].first)];
      if (seen[static_cast<std::size_t>(y)]) continue;
      seen[static_cast<std::size_t>(y)] = 1;
      Perm u(g.size());
      for (std::size_t x = 0; x < g.size(); ++x)
        u[x] = g[static_cast<std::size_t>(out[k].second[x])];
      out.emplace_back(y, std::move(u));
    }
  return out;
}

}  // namespace

SearchShapes::SearchShapes(const CandidateSpace& space, const std::vector<CpuMap>& generators,
                           const InTime& in_time)
    : space_(space) {
  for (int c : space.cpuset(0)) cpu_ids_ = std::max(cpu_ids_, c + 1);  // set 0: every CPU
  int points = cpu_ids_ + space.cpuset_count();
  for (int s = 0; s < space.cpuset_count(); ++s)
    for (int r = 0; r < space.core_count(s); ++r)
      if (core_point_.emplace(space.core(s, r), points).second) ++points;
  degree_ = points;
  for (const CpuMap& m : generators) gens_.push_back(extended(m));
  const StabChain group(degree_, gens_);
  set_rep_.assign(static_cast<std::size_t>(space.cpuset_count()), -1);
  set_stab_.resize(set_rep_.size());
  for (int s = 0; s < space.cpuset_count(); ++s) {
    if (set_rep_[s] >= 0) continue;
    for (const auto& [pt, g] : transversals(gens_, set_point(s), degree_))
      set_rep_[pt - cpu_ids_] = s;  // ascending: s is the least of its orbit
    add_set(s, group, in_time);
  }
}

Perm SearchShapes::extended(const CpuMap& m) const {
  Perm p(static_cast<std::size_t>(degree_));
  for (int c = 0; c < cpu_ids_; ++c) p[c] = c < static_cast<int>(m.size()) && m[c] >= 0 ? m[c] : c;
  for (int s = 0; s < space_.cpuset_count(); ++s) {
    std::vector<int> to;
    for (int c : space_.cpuset(s)) to.push_back(p[c]);
    std::sort(to.begin(), to.end());
    p[set_point(s)] = set_point(space_.find_set(to));
  }
  for (const auto& [core, pt] : core_point_) {
    std::vector<int> to;
    for (int c : core) to.push_back(p[c]);
    std::sort(to.begin(), to.end());
    p[pt] = core_point_.at(to);  // a renaming that keeps the model maps cores onto cores
  }
  return p;
}

void SearchShapes::add_set(int set, const StabChain& group, const InTime& in_time) {
  const StabChain gs = group.rebased({set_point(set)}, 55 + set).tail();  // G_S
  set_stab_[set] = gs.generators();
  const std::int64_t set_orbit = std::count(set_rep_.begin(), set_rep_.end(), set);
  const std::vector<int>& cpus = space_.cpuset(set);
  std::vector<char> done(static_cast<std::size_t>(cpu_ids_), 0);
  for (std::size_t pa = 0; pa < cpus.size(); ++pa) {
    if (done[cpus[pa]]) continue;
    if (in_time && !in_time()) throw OutOfTime{};
    const auto orbit = transversals(set_stab_[set], cpus[pa], degree_);
    for (const auto& [pt, g] : orbit) done[pt] = 1;  // later in the cpuset: not least
    Block b;
    b.set = set;
    b.a = cpus[pa];
    b.base = space_.block(set, static_cast<int>(pa)).first;
    b.weight = set_orbit * static_cast<std::int64_t>(orbit.size());
    b.stab = gs.rebased({b.a}, 55 + pa).stabilizer_generators();  // G_{S,a}
    add_block(std::move(b));
  }
}

void SearchShapes::add_block(Block b) {
  const std::vector<std::uint32_t> r = roots(b);
  visited_ += static_cast<std::int64_t>(r.size());
  b.first_shape = first_.size();
  std::vector<std::int64_t> members(r.size(), 0);
  for (std::uint32_t x : r) ++members[x];
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r[i] == i) {
      first_.push_back(b.base + static_cast<std::int64_t>(i));
      size_.push_back(b.weight * members[i]);
    }
  blocks_.push_back(std::move(b));
}

CandidateSpace::Parts SearchShapes::renamed(const CandidateSpace::Parts& p, const Perm& g) const {
  return space_.image(p, g, g[set_point(p.set)] - cpu_ids_);
}

std::vector<std::uint32_t> SearchShapes::roots(const Block& b) const {
  const std::int64_t base = b.base;
  const std::vector<int>& cpus = space_.cpuset(b.set);
  const int pa = static_cast<int>(std::find(cpus.begin(), cpus.end(), b.a) - cpus.begin());
  const std::int64_t len = space_.block(b.set, pa).second;
  LeastRoots classes(static_cast<std::size_t>(len));
  if (!b.stab.empty())
    for (std::int64_t i = 0; i < len; ++i) {
      const CandidateSpace::Parts p = space_.parts(base + i);
      for (const Perm& g : b.stab)
        classes.join(static_cast<std::uint32_t>(i),
                     static_cast<std::uint32_t>(space_.index(renamed(p, g)) - base));
    }
  return classes.take();
}

const std::vector<std::uint32_t>& SearchShapes::cached_roots(std::size_t block) const {
  auto it = roots_.find(block);
  if (it == roots_.end()) it = roots_.emplace(block, roots(blocks_[block])).first;
  return it->second;
}

Perm SearchShapes::carrying(const std::vector<Perm>& gens, int from, int to) const {
  for (auto& [pt, g] : transversals(gens, from, degree_))
    if (pt == to) return std::move(g);
  return {};  // not in one orbit: never asked
}

std::size_t SearchShapes::shape_of(std::int64_t index) const {
  CandidateSpace::Parts p = space_.parts(index);
  const int s0 = set_rep_[p.set];
  if (p.set != s0) p = renamed(p, carrying(gens_, set_point(p.set), set_point(s0)));
  const std::vector<int>& cpus = space_.cpuset(s0);
  int a0 = p.a;  // the start of least position in the cpuset in a's orbit under G_{S0}
  const auto orbit = transversals(set_stab_[s0], p.a, degree_);
  for (const auto& [pt, g] : orbit)
    if (std::find(cpus.begin(), cpus.end(), pt) < std::find(cpus.begin(), cpus.end(), a0)) a0 = pt;
  if (a0 != p.a) p = renamed(p, carrying(set_stab_[s0], p.a, a0));
  const std::int64_t base =
      space_.block(s0, static_cast<int>(std::find(cpus.begin(), cpus.end(), a0) - cpus.begin()))
          .first;
  const std::size_t k = static_cast<std::size_t>(
      std::lower_bound(blocks_.begin(), blocks_.end(), base,
                       [](const Block& b, std::int64_t x) { return b.base < x; }) -
      blocks_.begin());
  const std::int64_t first = base + cached_roots(k)[space_.index(p) - base];
  return static_cast<std::size_t>(std::lower_bound(first_.begin(), first_.end(), first) -
                                  first_.begin());
}

std::vector<std::int64_t> SearchShapes::first_members(std::size_t shape, std::size_t n) const {
  const std::size_t k = static_cast<std::size_t>(
      std::upper_bound(blocks_.begin(), blocks_.end(), shape,
                       [](std::size_t x, const Block& b) { return x < b.first_shape; }) -
      blocks_.begin() - 1);
  const Block& b = blocks_[k];
  const std::vector<std::uint32_t>& r = cached_roots(k);
  const std::uint32_t root = static_cast<std::uint32_t>(first_[shape] - b.base);
  std::vector<CandidateSpace::Parts> cls;  // the orbit's members with the block's S and a
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r[i] == root) cls.push_back(space_.parts(b.base + static_cast<std::int64_t>(i)));
  std::vector<std::int64_t> out;
  // Members with cpuset s are t (the members with S), t any renaming carrying S to s; those with
  // S are w (the class), w carrying a to each point of its G_S-orbit. Ascending: by s, by the
  // position of the start, then by (b, busy).
  const auto in_s = transversals(set_stab_[b.set], b.a, degree_);
  std::vector<std::pair<int, Perm>> sets = transversals(gens_, set_point(b.set), degree_);
  std::sort(sets.begin(), sets.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& [spt, t] : sets) {
    const std::vector<int>& cpus = space_.cpuset(spt - cpu_ids_);
    std::vector<std::pair<std::int64_t, Perm>> starts;
    for (const auto& [x, w] : in_s) {
      Perm tw(w.size());
      for (std::size_t y = 0; y < w.size(); ++y) tw[y] = t[static_cast<std::size_t>(w[y])];
      starts.emplace_back(std::find(cpus.begin(), cpus.end(), tw[b.a]) - cpus.begin(),
                          std::move(tw));
    }
    std::sort(starts.begin(), starts.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [pos, tw] : starts) {
      std::vector<std::int64_t> group;
      for (const CandidateSpace::Parts& p : cls) group.push_back(space_.index(renamed(p, tw)));
      std::sort(group.begin(), group.end());
      for (std::int64_t i : group) {
        out.push_back(i);
        if (out.size() >= n) return out;
      }
    }
  }
  return out;
}

}  // namespace wb
