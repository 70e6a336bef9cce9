// The live side of the model (analysis/model/sched_live.cpp): the scheduler's LLC read through
// common/system's sched-domain reader, on the captured trees of real machines.
#include <gtest/gtest.h>

#include <string>

#include "analysis/model/policy_model.h"
#include "tests/support.h"

namespace wb {
namespace {

Topology kunpeng() {
  return Topology::from_xml(
      std::string(WB_SOURCE_DIR) +
      "/tests/fixtures/topologies/arm64-kunpeng920-nosmt-2pkg-4numa-128c.xml");
}

// Kunpeng 920's CPU 0: CLS and MC share the LLC (the highest of them names it: MC), NUMA does not.
TEST(SchedLive, TheLlcIsTheHighestLevelSharingItInTheCapturedTree) {
  EXPECT_EQ(live_llc_source(kunpeng(), test::sysroot_path("arm64-kunpeng920")), LlcSource::kAuto);
}

// A tree that lists no domain for the machine's lowest CPU, or no tree at all: no answer, and the
// caller falls back to the XML's rules.
TEST(SchedLive, NoTreeOrNoDomainsOfThatCpuIsNoAnswer) {
  EXPECT_FALSE(live_llc_source(kunpeng(), test::sysroot_path("arm64-juno")));
  EXPECT_FALSE(live_llc_source(kunpeng(), "/nonexistent"));
}

}  // namespace
}  // namespace wb
