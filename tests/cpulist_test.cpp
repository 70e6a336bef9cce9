#include "common/cpulist.h"

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
std::string error_of(const std::string& text) {
  try {
    parse_cpu_list(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(CpuList, ErrorsNameTokenAndPosition) {
  EXPECT_EQ(error_of("0-x"), "invalid CPU list \"0-x\": bad number at position 2");
  EXPECT_EQ(error_of("a"), "invalid CPU list \"a\": bad number at position 0");
  EXPECT_EQ(error_of("1,,2"), "invalid CPU list \"1,,2\": empty item at position 2");
  EXPECT_EQ(error_of("1,"), "invalid CPU list \"1,\": empty item at position 2");
  EXPECT_EQ(error_of(",1"), "invalid CPU list \",1\": empty item at position 0");
  EXPECT_EQ(error_of("0,5-3"),
            "invalid CPU list \"0,5-3\": range end below its start at position 2");
  EXPECT_EQ(error_of("0-7:2"),
            "invalid CPU list \"0-7:2\": stride form (a-b:n) is not supported at position 3");
  EXPECT_EQ(error_of("-1"), "invalid CPU list \"-1\": bad number at position 0");
  EXPECT_EQ(error_of("1 2"), "invalid CPU list \"1 2\": unexpected ' ' at position 1");
  EXPECT_EQ(error_of("1-2-3"), "invalid CPU list \"1-2-3\": unexpected '-' at position 3");
  EXPECT_EQ(error_of("99999999999"),
            "invalid CPU list \"99999999999\": CPU id too large (max 1048576) at position 0");
}

}  // namespace
}  // namespace wb
