// The whole result set (docs/result-set.md#document) as one typed value. `run` builds it and
// writes it through result_set_json(), the one writer of a set's top level; read_result_set_doc()
// is the one reader that turns a document back into it (analysis/results/resultset_io.h:
// load_result_set adds the cases' typed views and names the file in its errors). A set read and
// written again is the same JSON (tests/result_set_doc_test.cpp, over every committed result set).
//
// Open JSON by nature, kept as nlohmann::ordered_json:
// - `context`, `benchmarks`: Google Benchmark's own blocks (runners/run/gb_output.h);
// - `environment`: the capture, an open-ended object of probes, each {"unavailable": reason} when
//   unreadable (common/system/environment.h);
// - `topology.summary`: topology_json()'s description (common/schema/placement.h), beside `xml`;
// - `config.document`: the user's config as parsed, claims included;
// - `noise`: the A/A noise file (its typed form, NoiseFloor, is analysis/compare/noise.h's);
// - `predictions`: the model's answer (its typed form, ResultsPrediction, is
//   analysis/predict/predict_results.h's; older sets hold other fields), or {"unavailable":
//   reason};
// - `until_decided.cases`: analysis/compare/sequential.h's verdict per case key;
// - `cases`: each case object as case_json() (common/schema/result_set.h) writes it, parsed into
//   typed views once on reading (analysis/results/case_view.h: parse_cases);
// - `extra`: top-level keys this version does not know (a hand-made set's "note"), kept as read.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/system/settings.h"

namespace wb {

// `run`: the repetitions ran in this order, drawn from this seed (`run --seed` replays it).
struct RunOrder {
  std::string order = "interleaved";
  uint64_t order_seed = 0;
  std::vector<std::string> command;  // the wakebench command line as given; empty: not recorded
  bool operator==(const RunOrder&) const = default;
};

// `ab` (docs/result-set.md#ab): which setting of an A/B run a set holds.
struct AbSet {
  std::string id;  // the run's id, the same in its `settings` sets
  int setting = 0, settings = 0;
  std::string label;     // "TTWU_QUEUE=off"
  SettingValues values;  // "feature:TTWU_QUEUE" -> "off"
  uint64_t order_seed = 0;
  bool operator==(const AbSet&) const = default;
};

// `until_decided` (docs/result-set.md#until-decided): how a `run --until-decided` ended.
struct UntilDecidedRecord {
  std::string base;  // BASE.json as given
  int64_t looks = 0, max_looks = 0;
  double budget_s = 0, elapsed_s = 0, alpha = 0;
  std::vector<std::pair<std::string, int64_t>> counts;  // verdict word -> cases
  nlohmann::ordered_json cases;                         // case key -> its verdict (open)
  bool operator==(const UntilDecidedRecord&) const = default;
};

// `topology`: the machine's description and its hwloc XML (absent in some hand-made sets).
struct TopologyRecord {
  nlohmann::ordered_json summary = nlohmann::ordered_json::object();  // every key but "xml"
  std::optional<std::string> xml;
  bool operator==(const TopologyRecord&) const = default;
};

// `config`: the config file as given, its name and the whole parsed document. Hand-made sets of
// version 1 hold the document's own keys here instead: kept in `other`.
struct ConfigRecord {
  std::optional<std::string> path, name;
  std::optional<nlohmann::ordered_json> document;
  nlohmann::ordered_json other = nlohmann::ordered_json::object();
  bool operator==(const ConfigRecord&) const = default;
};

// `decisions` (docs/result-set.md): the side file of `run --trace-decisions`.
struct DecisionsRecord {
  std::string file, sha256;
  int64_t lines = 0;
  bool operator==(const DecisionsRecord&) const = default;
};

// The top level, in the order the writer puts the keys. An absent optional is an absent key.
struct ResultSetDoc {
  std::string schema;
  int64_t schema_version = 0;
  std::optional<bool> complete;  // absent: complete
  std::optional<nlohmann::ordered_json> context, benchmarks;
  std::optional<RunOrder> run;
  std::optional<AbSet> ab;
  std::optional<UntilDecidedRecord> until_decided;
  std::optional<nlohmann::ordered_json> environment;
  std::optional<TopologyRecord> topology;
  std::optional<ConfigRecord> config;
  std::optional<nlohmann::ordered_json> predictions, noise;
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  std::optional<DecisionsRecord> decisions;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();

  bool is_complete() const { return complete.value_or(true); }
  bool operator==(const ResultSetDoc&) const = default;  // the same set, block by block
};

// The one writer: the document of docs/result-set.md#document, its keys in the order above.
nlohmann::ordered_json result_set_json(const ResultSetDoc& doc);

// The one reader of the top level: checks `schema`, `schema_version` (as the 64-bit integer it
// is) and a `cases` array, then types every block above. Throws std::invalid_argument with one
// line and no file name: "schema_version 4 is not supported (this wakebench reads versions 1 to
// 3)", "run.order_seed is not an unsigned integer", "ab.setting is 2, not an integer in [0, 1]".
ResultSetDoc read_result_set_doc(const nlohmann::json& doc);

// An integer in [lo, hi] at `what`, else std::invalid_argument "WHAT is V, not an integer in
// [LO, HI]".
int64_t json_int_in(const nlohmann::json& v, const std::string& what, int64_t lo, int64_t hi);

}  // namespace wb
