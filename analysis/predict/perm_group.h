// Permutation groups by a base and strong generating set (Schreier-Sims), as much as the search's
// shapes need (analysis/predict/search_shapes.h): a group's order, the same group with a chosen
// first base point, and generators of the stabilizer of that point. The points are small integers;
// a permutation is its table of images. Pure.
#pragma once

#include <cstdint>
#include <vector>

namespace wb {

using Perm = std::vector<int>;  // p[x]: the image of point x; every point 0..degree-1

class StabChain {
 public:
  // The group `gens` generate on the points 0..degree-1 (each gen of that degree), by the
  // deterministic Schreier-Sims algorithm: every Schreier generator is sifted.
  StabChain(int degree, const std::vector<Perm>& gens);

  // The same group with `prefix` as its first base points. Random Schreier-Sims, stopped when
  // the new chain's order reaches this one's, which is known: exact, not probable (.cpp).
  StabChain rebased(const std::vector<int>& prefix, std::uint64_t seed) const;
  // The chain of the stabilizer of the first base point (this chain without its first level).
  StabChain tail() const;
  // Generators of the stabilizer of the first base point; none for the trivial group.
  std::vector<Perm> stabilizer_generators() const;
  // Generators of the whole group (its first level's strong generators).
  std::vector<Perm> generators() const;

  double log2_order() const;
  int degree() const { return degree_; }
  std::size_t levels() const { return levels_.size(); }

 private:
  explicit StabChain(int degree) : degree_(degree) {}
  struct Level {
    int base = 0;
    std::vector<int> gens;   // into perms_
    std::vector<int> via;    // per point: the gen that reached it in the orbit; -1 out, -2 base
    std::vector<int> orbit;  // in the order reached
  };
  // (residue, level): the residue of `g` sifted from level `from` and the level it stopped at
  // (levels() when it passed every level).
  std::pair<Perm, std::size_t> sift(Perm g, std::size_t from) const;
  // u_x: the element of level l's transversal that maps its base to x.
  Perm transversal(std::size_t l, int x) const;
  void add_level(int base);
  // Adds `h` (which fixes the bases of levels < to) to the generators of levels from..to, a new
  // level when to == levels(), and extends their orbits.
  void add_generator(const Perm& h, std::size_t from, std::size_t to);
  void extend_orbit(Level& l) const;
  bool schreier_pass(std::size_t i, std::vector<std::vector<std::vector<char>>>& tested,
                     std::size_t& restart);
  Perm random_element(std::uint64_t& state) const;

  int degree_ = 0;
  std::vector<Level> levels_;
  std::vector<Perm> perms_, inverses_;
};

}  // namespace wb
