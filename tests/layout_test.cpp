// common/'s folders by role (README.md#layout): every source sits in schema/, system/, measure/ or
// util/, and schema/ stays pure: it includes no system header and, of system/, only the types it
// shares (the topology and the A/B plan). The check is also run on a tree made to break it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/support.h"

namespace {

namespace fs = std::filesystem;

const std::set<std::string> kRoles = {"schema", "system", "measure", "util"};

// Headers that reach the system (files, processes, the kernel, hwloc, libpfm4).
const std::regex kSystemHeader(std::string(R"(#include\s*<(unistd\.h|fcntl\.h|dirent\.h|)") +
                               R"(sys/.*|linux/.*|fstream|filesystem|hwloc.*|perfmon/.*)>)");
// Of system/, the headers whose types schema/ shares.
const std::regex kSystemInclude(R"re(#include\s*"common/system/(\w+)\.h")re");
const std::set<std::string> kSharedTypes = {"topology", "settings"};

// One line per breach under `common`: "path: why".
std::vector<std::string> layout_breaches(const fs::path& common) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(common)) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = fs::relative(e.path(), common);
    const std::string role = rel.begin()->string();
    if (std::distance(rel.begin(), rel.end()) != 2 || !kRoles.count(role)) {
      out.push_back(rel.string() + ": not in one of schema/, system/, measure/, util/");
      continue;
    }
    if (role != "schema") continue;
    std::ifstream in(e.path());
    std::smatch m;
    for (std::string line; std::getline(in, line);) {
      if (std::regex_search(line, m, kSystemHeader))
        out.push_back(rel.string() + ": includes <" + m[1].str() + ">");
      else if (std::regex_search(line, m, kSystemInclude) && !kSharedTypes.count(m[1].str()))
        out.push_back(rel.string() + ": includes common/system/" + m[1].str() + ".h");
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

TEST(Layout, CommonIsInFoldersByRoleAndSchemaIsPure) {
  const auto breaches = layout_breaches(fs::path(WB_SOURCE_DIR) / "common");
  EXPECT_TRUE(breaches.empty()) << joined(breaches);
}

// The same check on a tree with one breach of each kind, and one file of each allowed kind.
TEST(Layout, CheckFindsEachKindOfBreach) {
  const fs::path root = fs::temp_directory_path() / ("wb-layout-" + std::to_string(getpid()));
  fs::remove_all(root);
  for (const char* d : {"schema", "system", "misc"}) fs::create_directories(root / d);
  auto put = [&](const std::string& rel, const std::string& text) {
    std::ofstream(root / rel) << text;
  };
  put("loose.cpp", "int a;\n");
  put("misc/x.h", "#pragma once\n");
  put("schema/io.cpp", "#include <fstream>\n#include <sys/stat.h>\n");
  put("schema/probe.cpp", "#include \"common/system/cpuinfo.h\"\n");
  put("schema/ok.cpp", "#include \"common/system/topology.h\"\n#include <vector>\n");
  put("system/ok.cpp", "#include <unistd.h>\n");
  auto breaches = layout_breaches(root);
  fs::remove_all(root);
  std::sort(breaches.begin(), breaches.end());
  EXPECT_EQ(joined(breaches),
            "loose.cpp: not in one of schema/, system/, measure/, util/\n"
            "misc/x.h: not in one of schema/, system/, measure/, util/\n"
            "schema/io.cpp: includes <fstream>\n"
            "schema/io.cpp: includes <sys/stat.h>\n"
            "schema/probe.cpp: includes common/system/cpuinfo.h\n");
}

}  // namespace
