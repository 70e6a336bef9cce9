// Every mechanism wakebench implements. Each benchmarks/<mechanism>.cpp registers its mechanism at
// the end of the file, so adding one is adding one file and its entry in registry/registry.json:
//   const wb::MechanismRegistrar kPipeMechanism(std::make_unique<wb::PipeMechanism>());
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "common/measure/mechanism.h"

namespace wb {

// Adds `mech` to the registry at static initialization; two mechanisms with one id abort at
// startup.
struct MechanismRegistrar {
  explicit MechanismRegistrar(std::unique_ptr<Mechanism> mech);
};

// In registry/registry.json's order (the order in which files are initialized is unspecified),
// then any mechanism the file does not list, by id (tests/registry_test.cpp fails on those).
const std::vector<const Mechanism*>& all_mechanisms();
const Mechanism* find_mechanism(std::string_view id);  // nullptr if unknown

}  // namespace wb
