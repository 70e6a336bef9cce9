// registry/registry.json against what implements it: a mechanism or policy added in one place only
// fails here or in policy_test.cpp (PoliciesInDesignOrder); runners/lab/tests/test_registry.py
// holds the Python side.
#include "benchmarks/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/schema/placement.h"
#include "common/schema/registry.h"

namespace wb {
namespace {

TEST(Registry, EveryMechanismIsImplementedAndEveryImplementationListed) {
  std::vector<std::string> implemented;
  for (const Mechanism* m : all_mechanisms()) implemented.emplace_back(m->id());
  EXPECT_EQ(implemented, registry().mechanism_ids());
}

TEST(Registry, TraitsTheAnalysisReads) {
  EXPECT_EQ(registry().mechanism("spin").no_kernel_wakeup, "busy-poll");
  EXPECT_FALSE(registry().mechanism("pipe").no_kernel_wakeup);
  EXPECT_TRUE(registry().mechanism("futex").futex_handoff);
  EXPECT_FALSE(registry().mechanism("futex-swap").futex_handoff);
  EXPECT_TRUE(registry().mechanism("fanout").not_modelled);
  EXPECT_FALSE(registry().mechanism("binder-like").not_modelled);
  EXPECT_EQ(registry().find_mechanism("nope"), nullptr);
  EXPECT_THROW(registry().mechanism("nope"), std::logic_error);
}

// Every proposed policy states a premise over placement classes the result sets know.
TEST(Registry, EachPatchedPolicysPremiseNamesKnownClasses) {
  for (const PolicyEntry& p : registry().policies) {
    ASSERT_EQ(p.premise.has_value(), p.id != "mainline") << p.id;
    if (!p.premise) continue;
    EXPECT_TRUE(parse_class(p.premise->cheaper)) << p.id;
    EXPECT_TRUE(p.premise->than == "kernel" || parse_class(p.premise->than)) << p.id;
  }
  const auto current_cpu = std::find_if(registry().policies.begin(), registry().policies.end(),
                                        [](const PolicyEntry& p) { return p.id == "current-cpu"; });
  ASSERT_NE(current_cpu, registry().policies.end());
  EXPECT_EQ(current_cpu->premise->wakes, PolicyPremise::Wakes::kFutexHandoff);
}

TEST(Registry, RefusesABadEntryNamingIt) {
  auto error = [](const std::string& text) {
    try {
      parse_registry(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("{"), "registry: invalid JSON");
  EXPECT_EQ(error(R"({"policies": []})"), "registry: \"mechanisms\" is not a list");
  EXPECT_EQ(error(R"({"policies": [{}], "mechanisms": []})"),
            "policies[0]: \"id\" is not a string");
  EXPECT_EQ(error(R"({"policies": [], "mechanisms": [{"id": "x", "wake_flags": "sink"}]})"),
            "mechanisms[0]: unknown wake_flags \"sink\"");
  EXPECT_EQ(error(R"({"policies": [], "mechanisms": [{"id": "x", "wake_flags": "none",
                                                       "futex_handoff": 1}]})"),
            "mechanisms[0]: \"futex_handoff\" is not a boolean");
  EXPECT_EQ(error(R"({"policies": [], "mechanisms": [{"id": "x", "wake_flags": "sync",
                                                       "not_modelled": true}]})"),
            "mechanisms[0]: \"not_modelled\" is not a string");
  EXPECT_EQ(error(R"({"policies": [{"id": "p", "premise": []}], "mechanisms": []})"),
            "policies[0]: \"premise\" is not an object");
  EXPECT_EQ(error(R"({"policies": [{"id": "p", "premise": {"text": "t", "cheaper": "same-cpu",
                                                         "than": "llc", "wakes": "all"}}],
                      "mechanisms": []})"),
            "policies[0]: unknown premise wakes \"all\"");
  EXPECT_EQ(error(R"({"policies": [{"id": "p", "premise": {"cheaper": "same-cpu"}}],
                      "mechanisms": []})"),
            "policies[0]: \"text\" is not a string");
}

}  // namespace
}  // namespace wb
