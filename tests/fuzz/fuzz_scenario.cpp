// libFuzzer target: the predictor's scenario parser (parse_scenario, docs/policy-model.md#scenario)
// and the prediction of every policy on two fixed synthetic topologies (predict_scenario, which
// validates the scenario's CPUs first), as `wakebench predict --scenario` does. Besides sanitizer
// reports, a finding is an exception other than std::invalid_argument, or an error not naming the
// scenario ("scenario fuzz.json: ...").
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "analysis/predict/predict.h"
#include "fuzz_check.h"

namespace {

const std::string kWhere = "fuzz.json";

// An SMT2 two-package machine with one LLC per package, and a machine with L2 clusters under one
// L3 and two NUMA nodes: between them every sched-domain level the model builds.
const std::vector<std::unique_ptr<wb::SchedTopology>>& topologies() {
  static const auto topos = [] {
    std::vector<std::unique_ptr<wb::SchedTopology>> v;
    v.push_back(std::make_unique<wb::SchedTopology>(
        wb::Topology::from_synthetic("pack:2 l3:1 core:4 pu:2")));
    v.push_back(std::make_unique<wb::SchedTopology>(
        wb::Topology::from_synthetic("numa:2 l3:1 l2:2 core:2 pu:1")));
    return v;
  }();
  return topos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j =
      nlohmann::json::parse(data, data + size, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;  // load_scenario reports invalid JSON before parse_scenario
  try {
    const wb::Scenario s = wb::parse_scenario(j, kWhere);
    for (const auto& sched : topologies()) {
      try {
        const nlohmann::json p = wb::predict_scenario(*sched, s, kWhere);
        for (const auto& [policy, r] : p.at("policies").items())
          if (!r.at("cpu").is_number_integer() || !r.at("class").is_string())
            wb::fuzz::finding("prediction without a CPU or class: " + policy);
      } catch (const std::invalid_argument& e) {
        wb::fuzz::check_message(e, "scenario " + kWhere + ": ");
      }
    }
  } catch (const std::invalid_argument& e) {
    wb::fuzz::check_message(e, "scenario " + kWhere + ": ");
  } catch (const std::exception& e) {
    wb::fuzz::finding(std::string("scenario parser threw an undocumented exception: ") + e.what());
  }
  return 0;
}
