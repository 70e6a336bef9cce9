// The input rules of common/util/input.h at their edges: the nesting limit of JSON and XML (the
// deepest accepted document, the first refused one, brackets in strings and markup in quotes or
// comments that must not count), and what free text may hold.
#include "common/util/input.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace wb
