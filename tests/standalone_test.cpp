// A clone stands alone: no tracked file may point outside the repository at the reference folder
// that sits beside the developers' checkout (a user's clone never has it). Changelogs and notes
// may mention it as history. The test data lives in tests/fixtures (README there), the design in
// docs/.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support.h"

namespace {

namespace fs = std::filesystem;

// Spelt in pieces so this file does not match itself.
const std::array<std::string, 2> kNeedles = {std::string("..") + "/shared",
                                             std::string("/work") + "/shared"};

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A changelog or a note keeps history and may name the old folder.
bool is_history(const std::string& rel) {
  const std::string name = lower(fs::path(rel).filename().string());
  return name.rfind("changelog", 0) == 0 || name.rfind("changes", 0) == 0 ||
         name.rfind("notes", 0) == 0 || name.rfind("note.", 0) == 0 || name == "news" ||
         name.rfind("news.", 0) == 0;
}

// The tracked files (relative paths) from `git ls-files`; false when there is no repository or no
// git.
bool git_files(const fs::path& root, std::vector<std::string>* out) {
  std::error_code ec;
  if (!fs::exists(root / ".git", ec)) return false;  // a directory, or a worktree's file
  const std::string cmd = "git -C '" + root.string() + "' ls-files -z 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return false;
  std::string all;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) all.append(buf.data(), n);
  if (pclose(p) != 0 || all.empty()) return false;
  size_t start = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] == '\0') {
      out->push_back(all.substr(start, i - start));
      start = i + 1;
    }
  }
  return true;
}

// Without git (a source tarball): every file under the root except VCS and build directories (a
// directory holding CMakeCache.txt, or named build*).
std::vector<std::string> walk_files(const fs::path& root) {
  std::vector<std::string> out;
  auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied);
  for (; it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (it->is_directory()) {
      if (name == ".git" || name.rfind("build", 0) == 0 || fs::exists(p / "CMakeCache.txt"))
        it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) out.push_back(fs::relative(p, root).string());
  }
  return out;
}

// "file:line: text" for every line of `rel` naming the folder.
std::vector<std::string> references_in(const fs::path& root, const std::string& rel) {
  std::vector<std::string> hits;
  const std::string text = wb::test::slurp(root / rel);
  size_t line_start = 0;
  int line = 1;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '\n') continue;
    const std::string l = text.substr(line_start, i - line_start);
    for (const auto& needle : kNeedles) {
      if (l.find(needle) != std::string::npos) {
        hits.push_back(rel + ":" + std::to_string(line) + ": " + l.substr(0, 160));
        break;
      }
    }
    line_start = i + 1;
    ++line;
  }
  return hits;
}

std::vector<std::string> offenders(const fs::path& root) {
  std::vector<std::string> files;
  if (!git_files(root, &files)) files = walk_files(root);
  std::sort(files.begin(), files.end());
  std::vector<std::string> hits;
  for (const auto& rel : files) {
    if (is_history(rel)) continue;
    for (auto& h : references_in(root, rel)) hits.push_back(std::move(h));
  }
  return hits;
}

std::string joined_indented(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += "  " + l + "\n";
  return s;
}

}  // namespace

TEST(Standalone, NoTrackedFileRefersToTheFolderBesideTheClone) {
  const auto hits = offenders(WB_SOURCE_DIR);
  EXPECT_TRUE(hits.empty()) << hits.size()
                            << " line(s) point outside the repository; cite docs/ or "
                               "tests/fixtures/ instead:\n"
                            << joined_indented(hits);
}

// The check itself: a tree (no git) with one offending file, one history file and one offending
// file inside a build directory reports exactly the first.
TEST(Standalone, CheckFindsAReferenceAndSkipsHistoryAndBuildDirs) {
  const fs::path root = fs::temp_directory_path() / ("wb-standalone-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "common");
  fs::create_directories(root / "build-x");
  auto put = [&](const std::string& rel, const std::string& text) {
    std::FILE* f = std::fopen((root / rel).c_str(), "w");
    ASSERT_NE(f, nullptr) << rel;
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  put("common/a.cpp", "int a;\n// rules: " + kNeedles[0] + "/docs/DESIGN.md\n");
  put("common/b.cpp", "// rules: docs/policy-model.md\n");
  put("CHANGELOG.md", "- moved " + kNeedles[0] + " into tests/fixtures\n");
  put("build-x/gen.cpp", "// " + kNeedles[1] + "\n");
  const auto hits = offenders(root);
  fs::remove_all(root);
  ASSERT_EQ(hits.size(), 1u) << joined_indented(hits);
  EXPECT_EQ(hits[0].rfind("common/a.cpp:2: ", 0), 0u) << hits[0];
}
