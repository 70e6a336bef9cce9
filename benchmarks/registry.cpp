#include "benchmarks/registry.h"

#include <cstdio>
#include <cstdlib>
#include <map>

#include "common/schema/registry.h"

namespace wb {

namespace {

// id -> mechanism. A function-local static: registrars run during static initialization, in any
// order, possibly before this file's own globals exist.
std::map<std::string_view, std::unique_ptr<Mechanism>>& registered() {
  static std::map<std::string_view, std::unique_ptr<Mechanism>> mechanisms;
  return mechanisms;
}

}  // namespace

MechanismRegistrar::MechanismRegistrar(std::unique_ptr<Mechanism> mech) {
  const std::string_view id = mech->id();
  if (!registered().emplace(id, std::move(mech)).second) {
    std::fprintf(stderr, "wakebench: mechanism %.*s registered twice\n",
                 static_cast<int>(id.size()), id.data());
    std::abort();
  }
}

const std::vector<const Mechanism*>& all_mechanisms() {
  static const std::vector<const Mechanism*> all = [] {
    std::vector<const Mechanism*> v;
    for (const MechanismEntry& e : registry().mechanisms)
      if (auto it = registered().find(e.id); it != registered().end())
        v.push_back(it->second.get());
    for (const auto& [id, m] : registered())
      if (!registry().find_mechanism(id)) v.push_back(m.get());
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
