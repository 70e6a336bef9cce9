// The layers of docs/architecture.md#layout, checked on the tree: every source of common/ sits in
// one of its four folders by role; each folder includes only the folders below it (kAllowed);
// common/schema/ stays pure (no system header, and of common/system/ only the types it shares). The
// check also runs on a tree made to break each rule once.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/support.h"

namespace {

namespace fs = std::filesystem;

// Folder -> the folders its files may include (besides their own). Data flows one way: util
// below everything, schema (the data and the pure logic that fills it) next, then system (reads
// and sets the running system), measure (the timed path), the mechanisms, the analysis (reads
// result sets and the system's topology, never measures) and the runners, which wire them.
const std::map<std::string, std::set<std::string>> kAllowed = {
    {"common/util", {}},
    {"common/schema", {"common/util"}},
    {"common/system", {"common/util", "common/schema"}},
    {"common/measure", {"common/util", "common/schema", "common/system"}},
    {"benchmarks", {"common/util", "common/schema", "common/system", "common/measure"}},
    {"analysis", {"common/util", "common/schema", "common/system"}},
    {"runners/run",
     {"common/util", "common/schema", "common/system", "common/measure", "benchmarks", "analysis"}},
    {"runners",
     {"common/util", "common/schema", "common/system", "common/measure", "benchmarks", "analysis",
      "runners/run"}},
};

// Headers that reach the system (files, processes, the kernel, hwloc, libpfm4).
const std::regex kSystemHeader(std::string(R"(#include\s*<(unistd\.h|fcntl\.h|dirent\.h|)") +
                               R"(sys/.*|linux/.*|fstream|filesystem|hwloc.*|perfmon/.*)>)");
// A project include: "folder/.../name.h".
const std::regex kProjectInclude(R"re(#include\s*"((?:[\w]+/)+)(\w+)\.h")re");
// Of common/system/, the headers whose types common/schema/ shares.
const std::set<std::string> kSharedTypes = {"topology", "settings"};

bool allowed_include(const std::string& folder, const std::string& target,
                     const std::string& name) {
  if (target == folder) return true;
  if (folder == "common/schema" && target == "common/system") return kSharedTypes.count(name);
  const auto it = kAllowed.find(folder);
  return it != kAllowed.end() && it->second.count(target);
}

// One line per breach of the includes of the file `rel` (folder `folder`) under `root`.
void include_breaches(const fs::path& root, const fs::path& rel, const std::string& folder,
                      std::vector<std::string>& out) {
  std::ifstream in(root / rel);
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (folder == "common/schema" && std::regex_search(line, m, kSystemHeader))
      out.push_back(rel.string() + ": includes <" + m[1].str() + ">");
    if (!std::regex_search(line, m, kProjectInclude)) continue;
    std::string target = m[1].str();
    target.pop_back();                                           // the trailing '/'
    if (target == "tests" || !kAllowed.count(target)) continue;  // not a layer: generated, tests
    if (!allowed_include(folder, target, m[2].str()))
      out.push_back(rel.string() + ": includes " + target + "/" + m[2].str() + ".h");
  }
}

// One line per breach under `root` (a source tree): "path: why".
std::vector<std::string> layout_breaches(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root / "common")) {
    if (!e.is_regular_file()) continue;
    const fs::path rel = fs::relative(e.path(), root / "common");
    if (std::distance(rel.begin(), rel.end()) != 2 ||
        !kAllowed.count("common/" + rel.begin()->string()))
      out.push_back("common/" + rel.string() + ": not in one of schema/, system/, measure/, util/");
  }
  for (const auto& [folder, _] : kAllowed) {
    if (!fs::is_directory(root / folder)) continue;
    for (const auto& e : fs::directory_iterator(root / folder)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".h" || ext == ".cpp" || ext == ".c"))
        include_breaches(root, fs::relative(e.path(), root), folder, out);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

TEST(Layout, EachFolderIncludesOnlyTheLayersBelowIt) {
  EXPECT_EQ(joined(layout_breaches(fs::path(WB_SOURCE_DIR))), "");
}

// A tree with one breach of each rule, and one allowed include of each kind beside them.
TEST(Layout, CheckFindsEachKindOfBreach) {
  const fs::path root = fs::temp_directory_path() / ("wb-layout-" + std::to_string(getpid()));
  fs::remove_all(root);
  for (const char* d : {"common/schema", "common/system", "common/measure", "common/util",
                        "common/misc", "benchmarks", "analysis", "runners/run"})
    fs::create_directories(root / d);
  auto put = [&](const std::string& rel, const std::string& text) {
    std::ofstream(root / rel) << text;
  };
  put("common/loose.cpp", "int a;\n");
  put("common/misc/x.h", "#pragma once\n");
  put("common/util/up.h", "#include \"common/schema/case.h\"\n");
  put("common/schema/io.cpp", "#include <fstream>\n#include <sys/stat.h>\n");
  put("common/schema/probe.cpp", "#include \"common/system/cpuinfo.h\"\n");
  put("common/schema/timed.h", "#include \"common/measure/driver.h\"\n");
  put("common/schema/ok.cpp", "#include \"common/system/topology.h\"\n#include <vector>\n");
  put("common/system/timed.cpp", "#include \"common/measure/perf.h\"\n");
  put("common/system/ok.cpp", "#include <unistd.h>\n#include \"common/schema/case.h\"\n");
  put("common/measure/ok.cpp", "#include \"common/system/clock.h\"\n");
  put("common/measure/up.cpp", "#include \"analysis/compare.h\"\n");
  put("benchmarks/up.cpp", "#include \"runners/run/plan.h\"\n#include \"common/measure/x.h\"\n");
  put("analysis/timed.cpp", "#include \"common/measure/driver.h\"\n#include <fstream>\n");
  put("analysis/ok.h", "#include \"common/system/topology.h\"\n#include \"analysis/x.h\"\n");
  put("runners/run/up.cpp", "#include \"runners/commands.h\"\n#include \"analysis/x.h\"\n");
  const auto breaches = layout_breaches(root);
  fs::remove_all(root);
  EXPECT_EQ(joined(breaches),
            "analysis/timed.cpp: includes common/measure/driver.h\n"
            "benchmarks/up.cpp: includes runners/run/plan.h\n"
            "common/loose.cpp: not in one of schema/, system/, measure/, util/\n"
            "common/measure/up.cpp: includes analysis/compare.h\n"
            "common/misc/x.h: not in one of schema/, system/, measure/, util/\n"
            "common/schema/io.cpp: includes <fstream>\n"
            "common/schema/io.cpp: includes <sys/stat.h>\n"
            "common/schema/probe.cpp: includes common/system/cpuinfo.h\n"
            "common/schema/timed.h: includes common/measure/driver.h\n"
            "common/system/timed.cpp: includes common/measure/perf.h\n"
            "common/util/up.h: includes common/schema/case.h\n"
            "runners/run/up.cpp: includes runners/commands.h\n");
}

}  // namespace
