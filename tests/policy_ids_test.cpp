// A proposed policy is named in two product files: registry/registry.json (its patch, feature and
// premise) and analysis/model/policies.cpp (its model); nothing else lists policies.
// mainline, the baseline every other policy is a delta to, is named wherever a comparison needs
// its reference. An id that is also a wake-flags id ("current-cpu") is named by that table too.
// The check also runs on a small tree made to break it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/schema/case.h"
#include "common/schema/registry.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

// Product folders (tests, configs, docs and the lab's patches and tests aside) and file types.
const std::vector<std::string> kProduct = {"analysis", "benchmarks", "common", "runners",
                                           "registry"};
const std::set<std::string> kTypes = {".cpp", ".h", ".py", ".sh", ".json"};

bool excluded(const std::string& rel) {
  return rel.find("/tests/") != std::string::npos || rel.find("/patches/") != std::string::npos;
}

// Whether a line quotes `id` outside comments (a whole-line comment, or one after code as the
// formatters leave it: "  // ", "  # ").
bool names(const std::string& line, const std::string& id) {
  const std::size_t code = line.find_first_not_of(" \t");
  if (code == std::string::npos || line.compare(code, 2, "//") == 0 || line[code] == '#')
    return false;
  const std::string text = line.substr(0, std::min(line.find("  // "), line.find("  # ")));
  return text.find('"' + id + '"') != std::string::npos ||
         text.find('\'' + id + '\'') != std::string::npos;
}

// The product files under `root` that name `id`, relative and sorted.
std::set<std::string> files_naming(const fs::path& root, const std::string& id) {
  std::set<std::string> out;
  for (const std::string& dir : kProduct) {
    if (!fs::exists(root / dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string rel = fs::relative(e.path(), root).string();
      if (!e.is_regular_file() || !kTypes.count(e.path().extension().string()) || excluded(rel))
        continue;
      std::ifstream in(e.path());
      for (std::string line; std::getline(in, line);)
        if (names(line, id)) {
          out.insert(rel);
          break;
        }
    }
  }
  return out;
}

// The files naming a proposed policy beyond the two it may, "id: file" each.
std::vector<std::string> extra_namings(const fs::path& root) {
  std::vector<std::string> out;
  for (const PolicyEntry& p : registry().policies) {
    if (p.id == "mainline") continue;
    std::set<std::string> allowed = {"registry/registry.json", "analysis/model/policies.cpp"};
    if (parse_wake_flags(p.id)) allowed.insert("common/schema/case.cpp");
    for (const std::string& f : files_naming(root, p.id))
      if (!allowed.count(f)) out.push_back(p.id + ": " + f);
  }
  return out;
}

TEST(PolicyIds, EachProposedPolicyIsNamedByTheRegistryAndItsModelOnly) {
  EXPECT_EQ(extra_namings(WB_SOURCE_DIR), std::vector<std::string>{});
}

TEST(PolicyIds, TheCheckFindsAThirdFileAndSkipsComments) {
  const fs::path root = fs::temp_directory_path() / ("wb-policy-ids-" + std::to_string(getpid()));
  fs::create_directories(root / "analysis/model");
  fs::create_directories(root / "runners/lab/wblab");
  std::ofstream(root / "analysis/model/policies.cpp") << "  return \"sync-core\";\n";
  std::ofstream(root / "analysis/premises.cpp")
      << "// \"sync-core\" in a comment\nint x;  // \"sync-core\" after code\n";
  std::ofstream(root / "runners/lab/wblab/twins.py")
      << "    policies = ['mainline', 'sync-core']\n";
  const std::vector<std::string> found = extra_namings(root);
  fs::remove_all(root);
  EXPECT_EQ(found, std::vector<std::string>{"sync-core: runners/lab/wblab/twins.py"});
}

}  // namespace
}  // namespace wb
