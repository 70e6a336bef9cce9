// Every mechanism wakebench knows, in docs/result-set.md's order. Adding a mechanism: one file in
// benchmarks/ and one line in registry.cpp.
#pragma once

#include <string_view>
#include <vector>

#include "common/driver.h"

namespace wb {

const std::vector<const Mechanism*>& all_mechanisms();
const Mechanism* find_mechanism(std::string_view id);  // nullptr if unknown

}  // namespace wb
