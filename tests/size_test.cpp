// Sizes a reader takes in at once (docs/architecture.md#layout): no product source file over 600
// lines and no function over 60, C++ and Python alike. Tests, the lab's kernel patches and data
// aside. A C++ function is a brace block at namespace or class level (not a class, struct, enum
// or initializer), counted from its opening brace's line to its closing one; a Python function
// runs from its `def` to the last line indented under it. The check also runs on a made tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support.h"

namespace {

namespace fs = std::filesystem;

constexpr int kMaxFileLines = 600;
constexpr int kMaxFunctionLines = 60;

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// `line` with its comments, string and character literals blanked (a block comment or raw string
// that goes on is remembered in `open`, the text that ends it).
std::string code_of(const std::string& line, std::string& open) {
  std::string out;
  for (std::size_t i = 0; i < line.size();) {
    if (!open.empty()) {
      const std::size_t end = line.find(open, i);
      if (end == std::string::npos) return out;
      i = end + open.size();
      open.clear();
    } else if (line.compare(i, 2, "//") == 0) {
      return out;
    } else if (line.compare(i, 2, "/*") == 0) {
      open = "*/", i += 2;
    } else if (line.compare(i, 2, "R\"") == 0) {
      const std::size_t paren = line.find('(', i);
      open = ")" + line.substr(i + 2, paren - i - 2) + "\"", i = paren + 1;
    } else if (line[i] == '"' || line[i] == '\'') {
      const char q = line[i++];
      while (i < line.size() && line[i] != q) i += line[i] == '\\' ? 2 : 1;
      ++i;
    } else {
      out += line[i++];
    }
  }
  return out;
}

// Whether `line` opens a namespace, class, struct, union or enum (a template's too).
bool opens_scope(const std::string& line) {
  std::string s = line.substr(std::min(line.size(), line.find_first_not_of(' ')));
  if (s.rfind("template <", 0) == 0) s = s.substr(std::min(s.size(), s.find("> ") + 2));
  for (const char* word : {"namespace", "extern \"C\"", "class ", "struct ", "union ", "enum "})
    if (s.rfind(word, 0) == 0) return true;
  return false;
}

// "rel:line: function of N lines" for each C++ function over the limit.
void cpp_breaches(const std::vector<std::string>& lines, const std::string& rel,
                  std::vector<std::string>& out) {
  struct Open {
    std::size_t line;
    bool scope;  // a namespace, class, struct or enum, where functions are defined
  };
  std::vector<Open> stack;
  std::string open;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const std::string code = code_of(lines[n], open);
    for (std::size_t i = 0; i < code.size(); ++i) {
      if (code[i] == '{') {
        const std::size_t before = code.find_last_not_of(' ', i - 1);
        const bool initializer = i > 0 && before != std::string::npos && code[before] == '=';
        stack.push_back({n, opens_scope(lines[n]) || initializer});
      } else if (code[i] == '}' && !stack.empty()) {
        const Open o = stack.back();
        stack.pop_back();
        bool top = !o.scope;
        for (const Open& s : stack) top = top && s.scope;
        const std::size_t length = n - o.line + 1;
        if (top && length > kMaxFunctionLines)
          out.push_back(rel + ":" + std::to_string(o.line + 1) + ": function of " +
                        std::to_string(length) + " lines");
      }
    }
  }
}

std::size_t indent_of(const std::string& s) { return s.find_first_not_of(' '); }

// The same for each Python function (and method) over the limit.
void python_breaches(const std::vector<std::string>& lines, const std::string& rel,
                     std::vector<std::string>& out) {
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const std::size_t at = indent_of(lines[n]);
    if (at == std::string::npos || lines[n].compare(at, 4, "def ") != 0) continue;
    std::size_t last = n;
    for (std::size_t k = n + 1; k < lines.size(); ++k) {
      const std::size_t in = indent_of(lines[k]);
      if (in == std::string::npos) continue;
      if (in <= at && lines[k][in] != ')') break;
      last = k;
    }
    if (last - n + 1 > kMaxFunctionLines)
      out.push_back(rel + ":" + std::to_string(n + 1) + ": function of " +
                    std::to_string(last - n + 1) + " lines");
  }
}

// One line per breach under `root`: "path: N lines" or "path:line: function of N lines".
std::vector<std::string> size_breaches(const fs::path& root) {
  std::vector<std::string> out;
  for (const char* top : {"analysis", "benchmarks", "common", "runners", "tools", "integrations"}) {
    if (!fs::is_directory(root / top)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const std::string rel = fs::relative(e.path(), root).string();
      const std::string ext = e.path().extension().string();
      const bool cpp = ext == ".cpp" || ext == ".h" || ext == ".c";
      if (!e.is_regular_file() || (!cpp && ext != ".py") ||
          rel.find("/tests/") != std::string::npos || rel.find("/patches/") != std::string::npos)
        continue;
      const std::vector<std::string> lines = lines_of(e.path());
      if (lines.size() > kMaxFileLines)
        out.push_back(rel + ": " + std::to_string(lines.size()) + " lines");
      (cpp ? cpp_breaches : python_breaches)(lines, rel, out);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Sizes, NoFileOver600LinesNoFunctionOver60) {
  EXPECT_EQ(wb::test::lines_text(size_breaches(fs::path(WB_SOURCE_DIR))), "");
}

// A tree with one breach of each kind, beside code of the same shapes within the limits.
TEST(Sizes, CheckFindsEachKindOfBreach) {
  const fs::path root = wb::test::fresh_test_dir("wb-sizes");
  fs::create_directories(root / "common/util");
  fs::create_directories(root / "runners/tests");
  auto body = [](int n, const std::string& line) {
    std::string s;
    for (int i = 0; i < n; ++i) s += line;
    return s;
  };
  std::ofstream(root / "common/util/long.h") << body(601, "int x;\n");
  std::ofstream(root / "common/util/f.cpp")
      << "namespace wb {\nstruct S {\n  int m() {\n" + body(58, "  f(\"}\", '{');\n") + "  }\n};\n"
      << "const int k[] = {\n" + body(70, "  1,\n") + "};\n"
      << "int g() {\n  auto l = [] {\n" + body(70, "    h(); // }\n") + "  };\n}\n}\n";
  std::ofstream(root / "runners/x.py")
      << "def ok():\n" + body(59, "    pass\n") + "\n\nclass C:\n    def long(self):\n" +
             body(60, "        pass\n") + "        return f(\n    )\n";
  std::ofstream(root / "runners/tests/test_x.py") << "def t():\n" + body(99, "    pass\n");
  EXPECT_EQ(wb::test::lines_text(size_breaches(root)),
            "common/util/f.cpp:136: function of 74 lines\n"
            "common/util/long.h: 601 lines\n"
            "runners/x.py:64: function of 63 lines\n");
  fs::remove_all(root);
}

}  // namespace
