#include "analysis/model/model_kernel.h"

#include <gtest/gtest.h>

namespace wb {
namespace {

TEST(ModelKernel, ReadsTheVersionOfARelease) {
  EXPECT_EQ(parse_kernel_version("6.12.118+deb12-cloud-amd64"), (KernelVersion{6, 12}));
  EXPECT_EQ(parse_kernel_version("7.1"), (KernelVersion{7, 1}));
  EXPECT_EQ(parse_kernel_version("6.18.44-fc"), (KernelVersion{6, 18}));
  EXPECT_FALSE(parse_kernel_version(""));
  EXPECT_FALSE(parse_kernel_version("6"));
  EXPECT_FALSE(parse_kernel_version("6."));
  EXPECT_FALSE(parse_kernel_version("linux-6.12"));
}

TEST(ModelKernel, FollowsItsRangeOnlyBothEndsIncluded) {
  EXPECT_TRUE(model_follows("6.18.44-fc"));
  EXPECT_TRUE(model_follows("7.1.0"));
  EXPECT_FALSE(model_follows("6.17.9"));
  EXPECT_FALSE(model_follows("7.2-rc1"));
  EXPECT_FALSE(model_follows("6.12.118+deb12-cloud-amd64"));
  EXPECT_FALSE(model_follows("unknown"));
}

TEST(ModelKernel, SaysWhenTheSetRanAnotherKernel) {
  EXPECT_EQ(model_kernel_line("6.12.118+deb12-cloud-amd64"),
            "model: Linux 6.18-7.1; this set: 6.12.118+deb12-cloud-amd64, a different kernel: "
            "the decisions of this one are checked by replay, not assumed");
  EXPECT_EQ(model_kernel_line("6.18.44-fc"),
            "model: Linux 6.18-7.1; this set: 6.18.44-fc, the same version (a vendor's changes "
            "unseen)");
  EXPECT_EQ(model_kernel_line(""), "model: Linux 6.18-7.1; this set names no kernel");
}

}  // namespace
}  // namespace wb
