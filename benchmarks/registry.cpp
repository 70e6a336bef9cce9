#include "benchmarks/registry.h"

#include "benchmarks/pipe.h"

namespace wb {

const std::vector<const Mechanism*>& all_mechanisms() {
  static const PipeMechanism pipe;
  static const std::vector<const Mechanism*> all = {&pipe};
  return all;
}

const Mechanism* find_mechanism(std::string_view id) {
  for (const Mechanism* m : all_mechanisms())
    if (m->id() == id) return m;
  return nullptr;
}

}  // namespace wb
