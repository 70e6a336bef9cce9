// docs/result-set.schema.json against the C++ reader and writer (issue 35, item 1): every committed
// result set holds to it, reads (analysis/results/resultset_io.h) and comes out of the writer
// holding to it; the sets there to be refused are refused; each check of the schema's subset is
// shown refusing a set. runners/lab/tests/test_resultset.py holds the lab's reader to the same
// schema on the same files; tests/set_roundtrip_test.cpp what `run` writes;
// tests/result_set_doc_test.cpp a set with every block.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "analysis/results/resultset_io.h"
#include "common/schema/result_set.h"
#include "common/schema/result_set_doc.h"
#include "tests/json_schema.h"
#include "tests/support.h"

namespace wb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::result_set_schema;

// The committed result sets: every file of these folders whose text names the schema. The ones in
// kRefused are there to be refused (a later version, a truncated file, an overflowing version, a
// document nested deeper than the readers take); every other one must read.
const std::set<std::string> kRefused = {"schema-v5.json", "truncated.json", "number-overflow.json",
                                        "nested-129.json"};
// Sets that hold to the schema but not to the rules of every input's text (common/util/input.h:
// no control character), which the schema's subset does not say: the C++ reader refuses them.
const std::set<std::string> kBadText = {"escape-in-model.json"};

std::vector<fs::path> committed_sets() {
  std::vector<fs::path> out;
  for (const char* folder : {"tests/fixtures", "tests/fuzz/corpus/resultset"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(WB_SOURCE_DIR) / folder))
      if (e.path().extension() == ".json" &&
          test::slurp(e.path()).find("\"wakebench-results\"") != std::string::npos)
        out.push_back(e.path());
  return out;
}

TEST(ResultSetSchema, EveryCommittedSetHoldsToItReadsAndIsWrittenHoldingToIt) {
  std::size_t read = 0;
  for (const auto& path : committed_sets()) {
    if (kRefused.count(path.filename().string())) continue;
    SCOPED_TRACE(path.string());
    const json doc = json::parse(test::slurp(path));
    EXPECT_EQ(result_set_schema().violation(doc), "");
    if (kBadText.count(path.filename().string()))
      EXPECT_THROW(load_result_set(path.string()), std::runtime_error);
    else
      EXPECT_NO_THROW(load_result_set(path.string()));
    EXPECT_EQ(result_set_schema().violation(json(result_set_json(read_result_set_doc(doc)))), "");
    ++read;
  }
  EXPECT_GE(read, 10u);
}

TEST(ResultSetSchema, TheRefusedSetsAreRefusedByTheReaderAndTheSchema) {
  std::set<std::string> seen;
  for (const auto& path : committed_sets()) {
    if (!kRefused.count(path.filename().string())) continue;
    SCOPED_TRACE(path.string());
    seen.insert(path.filename().string());
    EXPECT_THROW(load_result_set(path.string()), std::runtime_error);
    const json doc = json::parse(test::slurp(path), nullptr, false);
    if (!doc.is_discarded()) {
      EXPECT_NE(result_set_schema().violation(doc), "");
    }
  }
  EXPECT_EQ(seen, kRefused);
}

// The versions the schema describes are the ones the readers take.
TEST(ResultSetSchema, DescribesTheVersionsTheReadersTake) {
  const json schema =
      json::parse(test::slurp(fs::path(WB_SOURCE_DIR) / "docs/result-set.schema.json"));
  std::vector<int64_t> versions;
  for (int64_t v = kOldestResultSchemaVersion; v <= kResultSchemaVersion; ++v)
    versions.push_back(v);
  EXPECT_EQ(schema["properties"]["schema_version"]["enum"], json(versions));
  EXPECT_EQ(schema["properties"]["schema"]["enum"], json::array({kResultSchema}));
}

// Each keyword of the schema's subset, broken once on a set that holds to it: the schema refuses
// it, saying where; the reader refuses the same set where it checks that field too.
TEST(ResultSetSchema, EachCheckRefusesASet) {
  const json good = {{"schema", kResultSchema},
                     {"schema_version", kResultSchemaVersion},
                     {"cases",
                      {{{"name", "pipe/threads/kernel"},
                        {"mechanism", "pipe"},
                        {"mode", "threads"},
                        {"placement", "kernel"},
                        {"status", "skipped"},
                        {"cpuset", {0, 1}},
                        {"repetitions", json::array()}}}}};
  ASSERT_EQ(result_set_schema().violation(good), "");
  ASSERT_NO_THROW(check_result_set(good));
  struct Bad {
    std::function<void(json&)> edit;
    std::string why;
    bool reader_refuses;  // the C++ reader checks this field too
  };
  const std::vector<Bad> bad = {
      {[](json& d) { d["cases"][0].erase("status"); }, "$.cases[0]: missing \"status\"", true},
      {[](json& d) { d.erase("cases"); }, "$: missing \"cases\"", true},
      {[](json& d) { d["cases"][0]["name"] = 7; }, "$.cases[0].name is number, not [\"string\"]",
       true},
      {[](json& d) { d["complete"] = 1; }, "$.complete is number, not [\"boolean\"]", true},
      {[](json& d) { d["cases"][0]["status"] = "done"; },
       "$.cases[0].status is \"done\", not one of [\"ok\",\"skipped\",\"failed\"]", true},
      {[](json& d) { d["schema_version"] = 5; }, "$.schema_version is 5, not one of [1,2,3,4]",
       true},
      // A set's unknown top-level key: the reader keeps it (ResultSetDoc::extra), the schema
      // names every key a set may hold.
      {[](json& d) { d["extra"] = 1; }, "$: unknown key \"extra\"", false},
      {[](json& d) { d["cases"][0]["fake"] = 1; }, "$.cases[0]: unknown key \"fake\"", false},
      {[](json& d) {
         d["cases"][0]["rtt_ns"] = {{"median", "1"}};
       },
       "$.cases[0].rtt_ns.median is string, not [\"number\",\"null\"]", false},
      {[](json& d) {
         d["cases"][0]["cpuset"] = {0, "1"};
       },
       "$.cases[0].cpuset[1] is string, not [\"integer\"]", true},
      {[](json& d) {
         d["cases"][0]["repetitions"] = {{{"rtt_hist", {{"bucket_bits", 7}, {"index", {1}}}}}};
       },
       "$.cases[0].repetitions[0].rtt_hist: missing \"count\"", true},
      {[](json& d) {
         d["decisions"] = {{"file", "f"}, {"sha256", "s"}, {"lines", 1.5}};
       },
       "$.decisions.lines is number, not [\"integer\"]", true},
  };
  for (const auto& [edit, why, reader_refuses] : bad) {
    json doc = good;
    edit(doc);
    SCOPED_TRACE(why);
    EXPECT_EQ(result_set_schema().violation(doc), why);
    if (reader_refuses) {
      EXPECT_THROW(check_result_set(doc), std::invalid_argument);
    }
  }
}

}  // namespace
}  // namespace wb
