#include "benchmarks/registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace wb {

namespace {

// rank -> mechanism. A function-local static: registrars run during static initialization, in
// any order, possibly before this file's own globals exist.
std::map<int, std::unique_ptr<Mechanism>>& registered() {
  static std::map<int, std::unique_ptr<Mechanism>> mechanisms;
  return mechanisms;
}

}  // namespace

MechanismRegistrar::MechanismRegistrar(std::unique_ptr<Mechanism> mech, int rank) {
  auto& all = registered();
  for (const auto& [r, m] : all)
    if (r == rank || m->id() == mech->id()) {
      std::fprintf(stderr, "wakebench: mechanism %.*s registered twice (rank %d)\n",
                   static_cast<int>(mech->id().size()), mech->id().data(), rank);
      std::abort();
    }
  all.emplace(rank, std::move(mech));
}

const std::vector<const Mechanism*>& all_mechanisms() {
  static const std::vector<const Mechanism*> all = [] {
    std::vector<const Mechanism*> v;
    for (const auto& [rank, m] : registered()) v.push_back(m.get());
    return v;
  }();
  return all;
}

const Mechanism* find_mechanism(std::string_view id) {
  for (const Mechanism* m : all_mechanisms())
    if (m->id() == id) return m;
  return nullptr;
}

}  // namespace wb
