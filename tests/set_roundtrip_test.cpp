// A set `run` writes is a set every reader takes (issue 33, item 5): one run holding a case of
// every status (ok, skipped, failed) and placement kind (pinned, pinned class this machine lacks,
// kernel, kernel on a class this machine lacks, matrix cell), then report, predict --results,
// compare, noise and run --until-decided on it, and both sets hold to docs/result-set.schema.json.
// Asserts statuses, exit codes and the schema, never times.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/json_schema.h"
#include "tests/support.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using wb::test::Ran;
using wb::test::run_wakebench;

// pipe/threads on every placement kind, small counts; a case whose timeout it cannot meet fails.
// Threads mode only, so that ThreadSanitizer's build runs it too (runners/sanitize.sh).
constexpr const char* kConfig = R"({
  "schema_version": 1, "name": "roundtrip",
  "defaults": { "round_trips": 200, "warmup": 20, "repetitions": 3, "timeout_s": 30 },
  "cases": [
    { "mechanisms": ["pipe"], "modes": ["threads"],
      "placements": ["same-cpu", "cross-numa", "kernel", "kernel:cross-numa", "matrix:0"] },
    { "mechanisms": ["pipe"], "modes": ["threads"], "placements": ["same-cpu"],
      "params": { "payload": [2] }, "round_trips": 100000000, "timeout_s": 0.5 }
  ]
})";

TEST(SetRoundTrip, EveryReaderTakesWhatRunWrites) {
  const fs::path dir = wb::test::fresh_test_dir("wb-roundtrip");
  std::ofstream(dir / "config.json") << kConfig;
  const std::string set = (dir / "set.json").string(), set2 = (dir / "set2.json").string();
  for (const std::string& out : {set, set2}) {
    const Ran run =
        run_wakebench({"run", "--config", (dir / "config.json").string(), "--out", out}, dir);
    ASSERT_TRUE(fs::exists(out)) << run.err;
  }
  const json doc = json::parse(wb::test::slurp(set));
  std::set<std::string> statuses, placements;
  for (const json& c : doc["cases"]) {
    statuses.insert(c["status"].get<std::string>());
    placements.insert(c["placement"].get<std::string>());
  }
  EXPECT_EQ(statuses, (std::set<std::string>{"ok", "skipped", "failed"}));
  EXPECT_EQ(placements.size(), 5u);
  // The command line that made it, as given.
  EXPECT_EQ(doc["run"]["command"],
            json({WB_BINARY, "run", "--config", (dir / "config.json").string(), "--out", set}));
  for (const std::vector<std::string>& reader : std::vector<std::vector<std::string>>{
           {"report", set, "--out", (dir / "report").string()},
           {"predict", "--results", set},
           {"compare", set, set2},
           {"noise", set, set2, "--out", (dir / "noise.json").string()},
           {"run", "--config", (dir / "config.json").string(), "--until-decided", set,
            "--benchmark_filter=same-cpu", "--out", (dir / "again.json").string()}}) {
    const Ran r = run_wakebench(reader, dir);
    EXPECT_EQ(r.err.find("cpuset is not"), std::string::npos) << reader[0] << ": " << r.err;
    EXPECT_TRUE(r.code == 0 || (reader[0] == "run" && r.code == 1)) << reader[0] << ": " << r.err;
  }
  // And it holds to docs/result-set.schema.json, the until-decided set too.
  for (const fs::path& out : {fs::path(set), dir / "again.json"}) {
    ASSERT_TRUE(fs::exists(out));
    EXPECT_EQ(wb::test::result_set_schema().violation(json::parse(wb::test::slurp(out))), "");
  }
  fs::remove_all(dir);
}

}  // namespace
