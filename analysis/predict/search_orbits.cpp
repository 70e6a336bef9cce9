#include "analysis/predict/search_orbits.h"

#include <algorithm>
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

}  // namespace wb
