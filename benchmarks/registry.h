// Every mechanism wakebench knows. Each benchmarks/<mechanism>.cpp registers its mechanism at the
// end of the file, so adding one is adding one file:
//   const wb::MechanismRegistrar kPipeMechanism(std::make_unique<wb::PipeMechanism>(), 1);
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "common/driver.h"

namespace wb {

// Adds `mech` to the registry at static initialization. `rank` orders all_mechanisms()
// (docs/result-set.md's order: pipe 1 ... spin 9), since the order in which files are initialized
// is unspecified; two mechanisms with one id or one rank abort at startup.
struct MechanismRegistrar {
  MechanismRegistrar(std::unique_ptr<Mechanism> mech, int rank);
};

const std::vector<const Mechanism*>& all_mechanisms();  // by rank
const Mechanism* find_mechanism(std::string_view id);   // nullptr if unknown

}  // namespace wb
