// Schreier-Sims (Holt, Eick, O'Brien, Handbook of Computational Group Theory, 4.4): a chain of
// point stabilizers G = G0 > G1 > ... > Gk = 1, Gi fixing the first i base points, each level
// holding generators of Gi and the orbit of its base point under them with a Schreier vector
// (the generator that reached each point), from which the transversal is rebuilt on demand.
#include "analysis/predict/perm_group.h"

#include <cmath>
#include <stdexcept>

namespace wb {

namespace {

bool is_identity(const Perm& p) {
  for (std::size_t x = 0; x < p.size(); ++x)
    if (p[x] != static_cast<int>(x)) return false;
  return true;
}

Perm identity_perm(int degree) {
  Perm p(static_cast<std::size_t>(degree));
  for (int x = 0; x < degree; ++x) p[static_cast<std::size_t>(x)] = x;
  return p;
}

Perm inverse(const Perm& p) {
  Perm q(p.size());
  for (std::size_t x = 0; x < p.size(); ++x)
    q[static_cast<std::size_t>(p[x])] = static_cast<int>(x);
  return q;
}

// a after b: x -> a[b[x]].
Perm compose(const Perm& a, const Perm& b) {
  Perm c(b.size());
  for (std::size_t x = 0; x < b.size(); ++x) c[x] = a[static_cast<std::size_t>(b[x])];
  return c;
}

std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

StabChain::StabChain(int degree, const std::vector<Perm>& gens) : degree_(degree) {
  for (const Perm& g : gens) {
    if (g.size() != static_cast<std::size_t>(degree))
      throw std::invalid_argument("StabChain: a generator of another degree");
    auto [r, j] = sift(g, 0);
    if (!is_identity(r)) add_generator(r, 0, j);
  }
  // Every Schreier generator of every level, the lowest level first, sifted through the levels
  // below it; a residue joins those levels and the check goes back down to where it stopped.
  // Orbits only grow and a point's Schreier vector entry never changes, so a pair (generator,
  // point) tested once stays tested.
  std::vector<std::vector<std::vector<char>>> tested;
  std::size_t i = levels_.size();
  while (i > 0) {
    std::size_t restart = 0;
    if (schreier_pass(i - 1, tested, restart)) {
      i = restart + 1;
    } else {
      --i;
    }
  }
}

bool StabChain::schreier_pass(std::size_t i, std::vector<std::vector<std::vector<char>>>& tested,
                              std::size_t& restart) {
  if (tested.size() < levels_.size()) tested.resize(levels_.size());
  for (std::size_t k = 0; k < levels_[i].orbit.size(); ++k) {
    const int x = levels_[i].orbit[k];
    for (std::size_t s = 0; s < levels_[i].gens.size(); ++s) {
      std::vector<std::vector<char>>& t = tested[i];
      if (t.size() <= s) t.resize(s + 1);
      if (t[s].empty()) t[s].assign(static_cast<std::size_t>(degree_), 0);
      if (t[s][static_cast<std::size_t>(x)]) continue;
      t[s][static_cast<std::size_t>(x)] = 1;
      const Perm& g = perms_[static_cast<std::size_t>(levels_[i].gens[s])];
      // u_{gx}^-1 g u_x fixes the base of level i.
      const Perm h = compose(inverse(transversal(i, g[static_cast<std::size_t>(x)])),
                             compose(g, transversal(i, x)));
      auto [r, j] = sift(h, i + 1);
      if (!is_identity(r)) {
        add_generator(r, i + 1, j);
        restart = j;
        return true;
      }
    }
  }
  return false;
}

std::pair<Perm, std::size_t> StabChain::sift(Perm g, std::size_t from) const {
  for (std::size_t l = from; l < levels_.size(); ++l) {
    const Level& lv = levels_[l];
    int x = g[static_cast<std::size_t>(lv.base)];
    if (lv.via[static_cast<std::size_t>(x)] == -1) return {std::move(g), l};
    while (x != lv.base) {  // g := s^-1 g along the Schreier vector, until g fixes the base
      const Perm& inv = inverses_[static_cast<std::size_t>(lv.via[static_cast<std::size_t>(x)])];
      for (int& y : g) y = inv[static_cast<std::size_t>(y)];
      x = g[static_cast<std::size_t>(lv.base)];
    }
  }
  return {std::move(g), levels_.size()};
}

Perm StabChain::transversal(std::size_t l, int x) const {
  const Level& lv = levels_[l];
  Perm u = identity_perm(degree_);
  while (x != lv.base) {  // x = s(y): u_x = s u_y, so u := u s, walking back to the base
    const std::size_t s = static_cast<std::size_t>(lv.via[static_cast<std::size_t>(x)]);
    u = compose(u, perms_[s]);
    x = inverses_[s][static_cast<std::size_t>(x)];
  }
  return u;
}

void StabChain::add_level(int base) {
  Level l;
  l.base = base;
  l.via.assign(static_cast<std::size_t>(degree_), -1);
  l.via[static_cast<std::size_t>(base)] = -2;
  l.orbit = {base};
  levels_.push_back(std::move(l));
}

void StabChain::add_generator(const Perm& h, std::size_t from, std::size_t to) {
  if (to == levels_.size()) {
    int moved = 0;
    while (h[static_cast<std::size_t>(moved)] == moved) ++moved;
    add_level(moved);
  }
  const int id = static_cast<int>(perms_.size());
  perms_.push_back(h);
  inverses_.push_back(inverse(h));
  for (std::size_t l = from; l <= to; ++l) {
    levels_[l].gens.push_back(id);
    extend_orbit(levels_[l]);
  }
}

void StabChain::extend_orbit(Level& l) const {
  for (std::size_t k = 0; k < l.orbit.size(); ++k)
    for (int g : l.gens) {
      const int y = perms_[static_cast<std::size_t>(g)][static_cast<std::size_t>(l.orbit[k])];
      if (l.via[static_cast<std::size_t>(y)] != -1) continue;
      l.via[static_cast<std::size_t>(y)] = g;
      l.orbit.push_back(y);
    }
}

Perm StabChain::random_element(std::uint64_t& state) const {
  // Every element is u_0 u_1 ... u_k for exactly one choice of transversal elements, so a uniform
  // choice at each level gives a uniform element.
  Perm g = identity_perm(degree_);
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const std::vector<int>& o = levels_[l].orbit;
    g = compose(g, transversal(l, o[splitmix(state) % o.size()]));
  }
  return g;
}

StabChain StabChain::rebased(const std::vector<int>& prefix, std::uint64_t seed) const {
  // Exact: every residue joins the levels 0..j, so level i+1's generators are among level i's
  // and |<S_i>| >= |orbit_i| |<S_i+1>|, hence |<S_0>| >= the product of the orbits. Each orbit of
  // <S_i> lies in the true basic orbit of G_i, so the product is at most |G|, and reaches it only
  // when every orbit is the true one and <S_i> = G_i at every level: a complete chain. Orders
  // differ by a factor of at least 2, so log2 within 0.5 is equality.
  StabChain c(degree_);
  for (int p : prefix) c.add_level(p);
  const double target = log2_order();
  std::uint64_t state = seed;
  while (c.log2_order() < target - 0.5) {
    auto [r, j] = c.sift(random_element(state), 0);
    if (!is_identity(r)) c.add_generator(r, 0, j);
  }
  return c;
}

StabChain StabChain::tail() const {
  StabChain c(degree_);
  c.perms_ = perms_;
  c.inverses_ = inverses_;
  if (levels_.size() > 1) c.levels_.assign(levels_.begin() + 1, levels_.end());
  return c;
}

std::vector<Perm> StabChain::stabilizer_generators() const {
  std::vector<Perm> out;
  if (levels_.size() > 1)
    for (int g : levels_[1].gens) out.push_back(perms_[static_cast<std::size_t>(g)]);
  return out;
}

std::vector<Perm> StabChain::generators() const {
  std::vector<Perm> out;
  if (!levels_.empty())
    for (int g : levels_[0].gens) out.push_back(perms_[static_cast<std::size_t>(g)]);
  return out;
}

double StabChain::log2_order() const {
  double s = 0;
  for (const Level& l : levels_) s += std::log2(static_cast<double>(l.orbit.size()));
  return s;
}

}  // namespace wb
