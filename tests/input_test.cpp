// The input rules of common/util/input.h at their edges: the nesting limit of JSON and XML (the
// deepest accepted document, the first refused one, brackets in strings and markup in quotes or
// comments that must not count), and what free text may hold.
#include "common/util/input.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support.h"

namespace wb {
namespace {

std::string nested_array(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// What f(arg) throws, "" when it returns.
template <class F, class Arg>
std::string message_of(F f, const Arg& arg) {
  try {
    f(arg);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(InputDepth, JsonAtTheLimitParsesOneMoreIsRefused) {
  EXPECT_NO_THROW(parse_input_json(nested_array(kMaxInputDepth)));
  const auto parse = [](const std::string& t) { parse_input_json(t); };
  EXPECT_EQ(message_of(parse, nested_array(kMaxInputDepth + 1)),
            "invalid JSON at byte 128: nested deeper than 128 levels");
  // Brackets inside strings, escaped quotes included, are text.
  const std::string brackets =
      "[\"" + std::string(300, '[') + "\\\"" + std::string(300, '{') + "\"]";
  EXPECT_EQ(parse_input_json(brackets)[0].get<std::string>().size(), 601u);
  EXPECT_EQ(message_of(parse, "{\"a\": tru").rfind("invalid JSON at byte 10 (end of file: ", 0),
            0u);
}

std::string nested_xml(int depth, const std::string& inner = "") {
  std::string xml = "<?xml version=\"1.0\"?><!DOCTYPE topology SYSTEM \"hwloc2.dtd\">";
  for (int i = 0; i < depth; ++i) xml += "<o a=\"x/>\">";
  xml += inner;
  for (int i = 0; i < depth; ++i) xml += "</o>";
  return xml;
}

TEST(InputDepth, XmlAtTheLimitPassesOneMoreIsRefused) {
  const auto check = [](const std::string& xml) { check_xml_depth(xml); };
  EXPECT_EQ(
      message_of(check, nested_xml(kMaxInputDepth, "<leaf/><!-- <a><b><c> --><![CDATA[<d>]]>")),
      "");
  const std::string deep = nested_xml(kMaxInputDepth + 1);
  const std::size_t tag = std::string("<o a=\"x/>\">").size();
  EXPECT_EQ(message_of(check, deep), "XML nested deeper than 128 levels at byte " +
                                         std::to_string(deep.find("<o") + tag * kMaxInputDepth));
  // Self-closing elements do not nest; unterminated markup is left to hwloc.
  std::string flat;
  for (int i = 0; i < 1000; ++i) flat += "<o a='1'/>";
  EXPECT_EQ(message_of(check, flat + "<unterminated"), "");
}

TEST(InputText, ControlCharactersC0DelAndC1AreRefusedAndEscaped) {
  const auto text = [](const std::string& s) { check_text("model", s); };
  EXPECT_EQ(message_of(text, "Neoverse-N1 \xc2\xae"), "");  // U+00AE is text
  EXPECT_EQ(message_of(text, "a\x1b[2Jb"), "model \"a\\u001b[2Jb\" has a control character");
  EXPECT_EQ(message_of(text, "a\x7f"), "model \"a\\u007f\" has a control character");
  EXPECT_EQ(message_of(text,
                       "a\xc2\x9b"
                       "31m"),
            "model \"a\\u009b31m\" has a control character");
  EXPECT_EQ(json_text("\xc2\x85\xc2\xa0"), "\"\\u0085\xc2\xa0\"");
}

TEST(InputText, EveryStringAndKeyNamedByItsPlace) {
  const nlohmann::json doc = {{"env", {{"cpu", {{"model", "x"}}}, {"list", {"a", "b\n"}}}},
                              {"xml", "<a>\n</a>"}};
  const auto except = [&](const std::vector<std::string>& places) { check_texts(doc, places); };
  EXPECT_EQ(message_of(except, std::vector<std::string>{}),
            "env.list[1] \"b\\n\" has a control character");
  EXPECT_EQ(message_of(except, std::vector<std::string>{"env.list"}),
            "xml \"<a>\\n</a>\" has a control character");
  EXPECT_EQ(message_of(except, std::vector<std::string>{"env.list", "xml"}), "");
  const auto texts = [](const nlohmann::json& d) { check_texts(d); };
  EXPECT_EQ(message_of(texts, nlohmann::json{{"ok", {{"k\x1b", 1}}}}),
            "ok key \"k\\u001b\" has a control character");
}

// The rules held by both languages: each row of tests/fixtures/input-rules/table.json, which
// runners/lab/tests/test_input_rules.py reads for the Python reader (runners/lab/wblab/inputs.py),
// is accepted or refused here as it says.
class InputRules : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_test_dir("wb-input-rules"); }
  void TearDown() override {
    ::unsetenv(kMaxInputEnv);
    std::filesystem::remove_all(dir_);
  }
  // The file a file_kind row names, made in the test's folder.
  std::string make(const std::string& kind) {
    namespace fs = std::filesystem;
    const fs::path p = dir_ / kind, target = dir_ / (kind + ".target");
    const auto regular = [](const fs::path& at, std::size_t bytes, const std::string& text) {
      std::ofstream(at, std::ios::binary) << (bytes ? std::string(bytes, ' ') : text);
    };
    ::unsetenv(kMaxInputEnv);
    if (kind == "regular") regular(p, 0, "{}");
    if (kind == "empty") regular(p, 0, "");
    if (kind == "symlink_to_regular") regular(target, 0, "{}"), fs::create_symlink(target, p);
    if (kind == "at_limit" || kind == "over_limit") {
      ::setenv(kMaxInputEnv, "1", 1);
      regular(p, (1u << 20) + (kind == "over_limit"), "");
    }
    if (kind == "directory") fs::create_directories(p);
    if (kind == "fifo") ::mkfifo(p.c_str(), 0600);
    if (kind == "symlink_to_fifo") ::mkfifo(target.c_str(), 0600), fs::create_symlink(target, p);
    if (kind == "char_device") return "/dev/null";
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(InputRules, EveryRowOfTheSharedTable) {
  const auto table =
      nlohmann::json::parse(test::slurp(test::fixture_path("input-rules/table.json")));
  ASSERT_EQ(table["schema"], "wakebench-input-rules");
  std::size_t rows = 0;
  for (const auto& row : table["rows"]) {
    const std::string kind = row["kind"], input = row["input"];
    SCOPED_TRACE(kind + " " + json_text(input) + ": " + row["why"].get<std::string>());
    std::string why;
    if (kind == "json_text")
      why = message_of([](const std::string& t) { parse_input_json(t); }, input);
    if (kind == "name") why = is_safe_name(input) ? "" : "refused";
    if (kind == "text")
      why = message_of([](const std::string& t) { check_text("text", t); }, input);
    if (kind == "file_kind")
      why = message_of([](const std::string& p) { read_input_file("input", p); }, make(input));
    EXPECT_EQ(why.empty(), row["ok"].get<bool>()) << why;
    ++rows;
  }
  EXPECT_GE(rows, 40u);
}

}  // namespace
}  // namespace wb
