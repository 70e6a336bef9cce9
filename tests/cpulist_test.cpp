#include "common/util/cpulist.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace wb {
namespace {

using V = std::vector<int>;

TEST(CpuList, ParsesKernelFormat) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (V{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), V{5});
  EXPECT_EQ(parse_cpu_list("0-0"), V{0});
  // sysfs files end with a newline; an empty file is an empty list (e.g. cpu/isolated).
  EXPECT_EQ(parse_cpu_list("0-1\n"), (V{0, 1}));
  EXPECT_EQ(parse_cpu_list(""), V{});
  EXPECT_EQ(parse_cpu_list("\n"), V{});
}

TEST(CpuList, SortsAndDeduplicates) { EXPECT_EQ(parse_cpu_list("8,0-2,1"), (V{0, 1, 2, 8})); }

TEST(CpuList, FormatsLikeTheKernel) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({}), "");
  EXPECT_EQ(format_cpu_list({7}), "7");
  EXPECT_EQ(format_cpu_list({3, 1, 2, 2, 9}), "1-3,9");
  EXPECT_EQ(format_cpu_list({0, 2, 4}), "0,2,4");
  EXPECT_EQ(format_cpu_list({4, 5}), "4-5");  // %*pbl prints runs of two as a range too
}

TEST(CpuList, RoundTrips) {
  for (const std::string text : {"0", "0-3,8,10-11", "1,3,5-7,64-127", "0-1,4-5,1000"})
    EXPECT_EQ(format_cpu_list(parse_cpu_list(text)), text);
}

// The message names the list, what is wrong and the 0-based position of the offending token.
std::string cpulist_error(const std::string& text) {
  try {
    parse_cpu_list(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(CpuList, ErrorsNameTokenAndPosition) {
  EXPECT_EQ(cpulist_error("0-x"), "invalid CPU list \"0-x\": bad number at position 2");
  EXPECT_EQ(cpulist_error("a"), "invalid CPU list \"a\": bad number at position 0");
  EXPECT_EQ(cpulist_error("1,,2"), "invalid CPU list \"1,,2\": empty item at position 2");
  EXPECT_EQ(cpulist_error("1,"), "invalid CPU list \"1,\": empty item at position 2");
  EXPECT_EQ(cpulist_error(",1"), "invalid CPU list \",1\": empty item at position 0");
  EXPECT_EQ(cpulist_error("0,5-3"),
            "invalid CPU list \"0,5-3\": range end below its start at position 2");
  EXPECT_EQ(cpulist_error("0-7:2"),
            "invalid CPU list \"0-7:2\": stride form (a-b:n) is not supported at position 3");
  EXPECT_EQ(cpulist_error("-1"), "invalid CPU list \"-1\": bad number at position 0");
  EXPECT_EQ(cpulist_error("1 2"), "invalid CPU list \"1 2\": unexpected ' ' at position 1");
  EXPECT_EQ(cpulist_error("1-2-3"), "invalid CPU list \"1-2-3\": unexpected '-' at position 3");
  EXPECT_EQ(cpulist_error("99999999999999999999999"),
            "invalid CPU list \"99999999999999999999999\": CPU id 99999999999999999999999 above "
            "the maximum 8191 (the kernel's NR_CPUS limit is 8192) at position 0");
  EXPECT_EQ(cpulist_error("0,2-8192"),
            "invalid CPU list \"0,2-8192\": CPU id 8192 above the maximum 8191 (the kernel's "
            "NR_CPUS limit is 8192) at position 4");
}

// Ids up to NR_CPUS - 1 parse; the work is bounded by the list and kMaxCpus, not by what it repeats
// (the fuzzer once found that "0-1048575" repeated thousands of times exhausted memory when each
// range was expanded before deduplication).
TEST(CpuList, BoundedByTheLargestCpuId) {
  EXPECT_EQ(parse_cpu_list("8191"), V{kMaxCpus - 1});
  EXPECT_EQ(parse_cpu_list("0-8191").size(), static_cast<size_t>(kMaxCpus));
  std::string repeated;
  for (int i = 0; i < 4000; ++i) repeated += (i ? "," : "") + std::string("0-8191");
  const V all = parse_cpu_list(repeated);
  ASSERT_EQ(all.size(), static_cast<size_t>(kMaxCpus));
  EXPECT_EQ(all.front(), 0);
  EXPECT_EQ(all.back(), kMaxCpus - 1);
  EXPECT_EQ(format_cpu_list(all), "0-8191");
}

}  // namespace
}  // namespace wb
