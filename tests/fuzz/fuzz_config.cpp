// libFuzzer target: the suite parser (parse_config) and the expansion into cases on a fixed
// synthetic topology (expand_cases), as `wakebench run --config` does. Besides sanitizer reports,
// a finding is an exception other than std::runtime_error / std::invalid_argument, or an error that
// is not one line naming the file ("config fuzz.json: ...").
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/schema/config.h"
#include "common/schema/registry.h"
#include "common/system/topology.h"
#include "fuzz_check.h"

namespace {

const char kPath[] = "fuzz.json";

// Two packages, SMT2, one L3 each: every pinned class but cluster and cross-llc is available,
// so expansion takes both the pair and the "unavailable" paths.
const wb::Topology& topology() {
  static const wb::Topology topo = wb::Topology::from_synthetic("pack:2 l3:1 core:4 pu:2");
  return topo;
}

const std::vector<std::string> kMechanisms = wb::registry().mechanism_ids();

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const wb::Config config = wb::parse_config(text, kPath);
    // Pair counts 1 and 2: the "/pairN" suffix path.
    for (int pairs : {1, 2}) {
      const auto cases = wb::expand_cases(config, topology(), kMechanisms, pairs);
      for (const auto& c : cases)
        if (c.name.empty() || (c.skip_reason.empty() && c.cpu_pairs.empty()))
          wb::fuzz::finding("case without a name or a CPU pair: " + c.name);
    }
  } catch (const std::runtime_error& e) {
    wb::fuzz::check_message(e, std::string("config ") + kPath + ": ");
  } catch (const std::invalid_argument& e) {
    wb::fuzz::check_message(e, std::string("config ") + kPath + ": ");
  } catch (const std::exception& e) {
    wb::fuzz::finding(std::string("config parser threw an undocumented exception: ") + e.what());
  }
  return 0;
}
