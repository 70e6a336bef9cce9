// The one writer and the one reader of a result set's top level (common/schema/result_set_doc.h):
// every committed result set reads into the typed value and comes out of the writer as the same
// JSON, and the writer puts the keys in the order `run` has always written them, every block
// holding to docs/result-set.schema.json.
#include "common/schema/result_set_doc.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/schema/result_set.h"
#include "tests/json_schema.h"
#include "tests/support.h"

namespace wb {
namespace {

using nlohmann::json;

// Every committed result set: the fixtures that are JSON with "schema": "wakebench-results" and
// a version this wakebench reads (schema-v5.json is there to be refused, truncated.json to fail).
std::vector<std::filesystem::path> committed_result_sets() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(test::fixture_path(""))) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    const json doc = json::parse(test::slurp(e.path()), nullptr, false);
    if (doc.is_object() && doc.value("schema", json()) == kResultSchema &&
        doc.value("schema_version", json()).is_number_integer() &&
        readable_result_schema(doc["schema_version"].get<int64_t>()))
      out.push_back(e.path());
  }
  return out;
}

TEST(ResultSetDoc, EveryCommittedSetRoundTrips) {
  const auto sets = committed_result_sets();
  EXPECT_GE(sets.size(), 7u);
  for (const auto& path : sets) {
    SCOPED_TRACE(path.string());
    const json doc = json::parse(test::slurp(path));
    const json back(result_set_json(read_result_set_doc(doc)));
    EXPECT_EQ(back, doc) << json::diff(doc, back).dump();
  }
}

TEST(ResultSetDoc, KeysInTheOrderRunWritesThem) {
  ResultSetDoc d;
  d.schema = kResultSchema;
  d.schema_version = kResultSchemaVersion;
  d.complete = false;
  d.context = d.environment = d.predictions = d.noise = json::object();
  d.benchmarks = json::array();
  d.run = RunOrder{"interleaved", 7, {"wakebench", "run", "--config", "my config.json"}};
  d.ab = AbSet{"id", 0, 2, "x=1", {{"sysctl:x", "1"}}, 7};
  d.until_decided =
      UntilDecidedRecord{"base.json", 1, 5, 60, 3.5, 0.05, {{"SAME", 1}}, json::object()};
  d.topology = TopologyRecord{{{"source", "synthetic"}}, "<topology/>"};
  d.config = ConfigRecord{"c.json", "c", json::object(), nlohmann::ordered_json::object()};
  d.decisions = DecisionsRecord{"s.decisions.txt", "ab", 3};
  d.extra = {{"note", "hand-made"}};
  std::vector<std::string> keys;
  const nlohmann::ordered_json j = result_set_json(d);
  for (const auto& [key, v] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "schema_version", "complete", "context",
                                            "benchmarks", "run", "ab", "until_decided",
                                            "environment", "topology", "config", "predictions",
                                            "noise", "cases", "decisions", "note"}));
  EXPECT_EQ(j["topology"].dump(), R"({"source":"synthetic","xml":"<topology/>"})");
  EXPECT_EQ(test::result_set_schema().violation(json(j)), "");  // docs/result-set.schema.json
  EXPECT_EQ(json(result_set_json(read_result_set_doc(json(j)))), json(j));
}

// Each block that is not what `run` writes is refused in one line.
TEST(ResultSetDoc, BadBlocksAreOneLine) {
  const json good = {{"schema", kResultSchema}, {"schema_version", 3}, {"cases", json::array()}};
  EXPECT_NO_THROW(read_result_set_doc(good));
  const std::vector<std::pair<json, std::string>> bad = {
      {{{"schema_version", 5}},
       "schema_version 5 is not supported (this wakebench reads versions 1 to 4)"},
      {{{"run", {{"order", "interleaved"}, {"order_seed", -1}}}},
       "run.order_seed is not an unsigned integer"},
      {{{"run", {{"order", "interleaved"}, {"order_seed", 1}, {"command", {"run", 2}}}}},
       "run.command is not a non-empty array of strings"},
      {{{"run", {{"order", "interleaved"}, {"order_seed", 1}, {"command", json::array()}}}},
       "run.command is not a non-empty array of strings"},
      {{{"topology", {{"xml", 1}}}}, "topology.xml is not a string"},
      {{{"decisions", {{"file", "f"}, {"sha256", "s"}, {"lines", -1}}}},
       "decisions.lines is -1, not an integer in [0, 9223372036854775807]"},
      {{{"complete", "yes"}}, "complete is not true or false"}};
  for (const auto& [patch, why] : bad) {
    json doc = good;
    doc.update(patch);
    try {
      read_result_set_doc(doc);
      ADD_FAILURE() << "accepted " << patch;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(e.what(), why);
    }
  }
}

}  // namespace
}  // namespace wb
