// The layers of docs/architecture.md#layout, checked on the tree: every source of common/ sits in
// one of its four folders by role, every source of analysis/ on one of its six floors; each
// folder includes only the folders below it (kAllowed); common/schema/ stays pure (no system
// header, and of common/system/ only the types it shares). The check also runs on a tree made to
// break each rule once.
#include <gtest/gtest.h>

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
    // analysis/, floor by floor (docs/architecture.md#layout): statistics and the policy models
    // at the bottom, the typed result set beside them, then compare, the predictor (which
    // judges with compare's verdicts) and the report, which shows all of them.
    {"analysis/stats", {"common/util", "common/schema"}},
    {"analysis/model", {"common/util", "common/schema", "common/system"}},
    {"analysis/results", {"common/util", "common/schema", "common/system"}},
    {"analysis/compare",
     {"common/util", "common/schema", "common/system", "analysis/stats", "analysis/results"}},
    {"analysis/predict",
     {"common/util", "common/schema", "common/system", "analysis/stats", "analysis/model",
      "analysis/results", "analysis/compare"}},
    {"analysis/report",
     {"common/util", "common/schema", "common/system", "analysis/stats", "analysis/model",
      "analysis/results", "analysis/compare", "analysis/predict"}},
    {"runners/run",
     {"common/util", "common/schema", "common/system", "common/measure", "benchmarks",
      "analysis/stats", "analysis/model", "analysis/results", "analysis/compare",
      "analysis/predict", "analysis/report"}},
    {"runners",
     {"common/util", "common/schema", "common/system", "common/measure", "benchmarks",
      "analysis/stats", "analysis/model", "analysis/results", "analysis/compare",
      "analysis/predict", "analysis/report", "runners/run"}},
};

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
  // Compiled here, not at static initialization: every test of wb_tests is a process of its own.
  // Headers that reach the system (files, processes, the kernel, hwloc, libpfm4).
  static const std::regex kSystemHeader(
      std::string(R"(#include\s*<(unistd\.h|fcntl\.h|dirent\.h|)") +
      R"(sys/.*|linux/.*|fstream|filesystem|hwloc.*|perfmon/.*)>)");
  // A project include: "folder/.../name.h".
  static const std::regex kProjectInclude(R"re(#include\s*"((?:[\w]+/)+)(\w+)\.h")re");
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

// The folders of `top` in kAllowed, e.g. "compare/, model/, ...".
std::string folders_of(const std::string& top) {
  std::string s;
  for (const auto& [folder, _] : kAllowed)
    if (folder.rfind(top + "/", 0) == 0)
      s += (s.empty() ? "" : ", ") + folder.substr(top.size() + 1) + "/";
  return s;
}

// One line per breach under `root` (a source tree): "path: why".
std::vector<std::string> layout_breaches(const fs::path& root) {
  std::vector<std::string> out;
  for (const char* top : {"common", "analysis"}) {
    if (!fs::is_directory(root / top)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      if (!e.is_regular_file()) continue;
      const fs::path rel = fs::relative(e.path(), root / top);
      if (std::distance(rel.begin(), rel.end()) != 2 ||
          !kAllowed.count(std::string(top) + "/" + rel.begin()->string()))
        out.push_back(std::string(top) + "/" + rel.string() + ": not in one of " + folders_of(top));
    }
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

TEST(Layout, EachFolderIncludesOnlyTheLayersBelowIt) {
  EXPECT_EQ(wb::test::lines_text(layout_breaches(fs::path(WB_SOURCE_DIR))), "");
}

// A tree with one breach of each rule, and one allowed include of each kind beside them.
TEST(Layout, CheckFindsEachKindOfBreach) {
  const fs::path root = wb::test::fresh_test_dir("wb-layout");
  for (const char* d : {"common/schema", "common/system", "common/measure", "common/util",
                        "common/misc", "benchmarks", "analysis/stats", "analysis/model",
                        "analysis/compare", "analysis/predict", "analysis/report", "runners/run"})
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
  put("common/measure/up.cpp", "#include \"analysis/compare/compare.h\"\n");
  put("benchmarks/up.cpp", "#include \"runners/run/plan.h\"\n#include \"common/measure/x.h\"\n");
  put("analysis/loose.cpp", "int b;\n");
  put("analysis/predict/timed.cpp", "#include \"common/measure/driver.h\"\n#include <fstream>\n");
  put("analysis/stats/up.h", "#include \"analysis/compare/x.h\"\n");
  put("analysis/compare/up.cpp", "#include \"analysis/predict/x.h\"\n");
  put("analysis/model/side.cpp", "#include \"analysis/results/x.h\"\n");
  put("analysis/report/ok.h",
      "#include \"common/system/topology.h\"\n#include \"analysis/predict/x.h\"\n");
  put("runners/run/up.cpp", "#include \"runners/commands.h\"\n#include \"analysis/report/x.h\"\n");
  const auto breaches = layout_breaches(root);
  fs::remove_all(root);
  EXPECT_EQ(
      wb::test::lines_text(breaches),
      "analysis/compare/up.cpp: includes analysis/predict/x.h\n"
      "analysis/loose.cpp: not in one of compare/, model/, predict/, report/, results/, stats/\n"
      "analysis/model/side.cpp: includes analysis/results/x.h\n"
      "analysis/predict/timed.cpp: includes common/measure/driver.h\n"
      "analysis/stats/up.h: includes analysis/compare/x.h\n"
      "benchmarks/up.cpp: includes runners/run/plan.h\n"
      "common/loose.cpp: not in one of measure/, schema/, system/, util/\n"
      "common/measure/up.cpp: includes analysis/compare/compare.h\n"
      "common/misc/x.h: not in one of measure/, schema/, system/, util/\n"
      "common/schema/io.cpp: includes <fstream>\n"
      "common/schema/io.cpp: includes <sys/stat.h>\n"
      "common/schema/probe.cpp: includes common/system/cpuinfo.h\n"
      "common/schema/timed.h: includes common/measure/driver.h\n"
      "common/system/timed.cpp: includes common/measure/perf.h\n"
      "common/util/up.h: includes common/schema/case.h\n"
      "runners/run/up.cpp: includes runners/commands.h\n");
}

}  // namespace
