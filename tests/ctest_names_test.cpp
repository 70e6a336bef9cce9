// CTest's names of the GoogleTest tests (gtest_discover_tests in tests/CMakeLists.txt) must be the
// same at every discovery, or `ctest --rerun-failed` and CTest's cost data break: only the names
// the suites' generators give, never a dump of a parameter's bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

// The test names of every wb_tests[N]_tests.cmake that discovery wrote:
// add_test([=[Suite.Name]=] ...), the guard's '=' count varying.
std::vector<std::string> discovered_names() {
  namespace fs = std::filesystem;
  const std::regex add_test(R"(^add_test\(\s*\[(=*)\[(.*?)\]\1\])");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(WB_TESTS_BINARY_DIR)) {
    const std::string f = e.path().filename().string();
    if (f.rfind("wb_tests[", 0) != 0 || !f.ends_with("]_tests.cmake")) continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, add_test)) names.push_back(m[2]);
    }
  }
  return names;
}

TEST(CtestNames, AreTheGeneratorsNamesWithNoParameterDump) {
  const std::vector<std::string> names = discovered_names();
  ASSERT_GT(names.size(), 100u) << "no discovered tests under " << WB_TESTS_BINARY_DIR;
  size_t section9 = 0;
  for (const std::string& n : names) {
    EXPECT_EQ(n.find_first_of(" #<>"), std::string::npos) << n;
    EXPECT_EQ(n.find("GetParam"), std::string::npos) << n;
    section9 += n.rfind("Section9/PolicyVector.AllPoliciesExactCpuAndClass/", 0) == 0;
  }
  // One per policy vector, named by its id (policy_test.cpp).
  EXPECT_EQ(section9, 34u);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size())
      << "two tests with one name";
}

}  // namespace
