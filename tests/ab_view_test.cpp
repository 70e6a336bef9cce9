// The A/B record of a result set (common/schema/result_set_doc.h: AbSet;
// analysis/results/case_view.h: CaseView::ab_round) reads back what `run` writes under --ab, and
// refuses bad values in one line.
#include <gtest/gtest.h>

#include <string>

#include "analysis/results/case_view.h"
#include "common/schema/result_set.h"
#include "common/schema/result_set_doc.h"
#include "tests/support.h"

namespace wb {
namespace {

using nlohmann::json;

CaseRecord ab_record() {
  CaseRecord r;
  r.spec.mechanism = "pipe";
  r.spec.mode = Mode::kThreads;
  r.spec.placement = "same-cpu";
  r.spec.cpu_pairs = {{0, 0}};
  r.spec.name = "pipe/threads/same-cpu";
  PairSamples s;
  for (int i = 0; i < 5; ++i) {
    s.rtt_ns.push_back(1000 + i);
    s.wakeup_ns.push_back(400);
    s.waker_cpu.push_back(0);
    s.wakee_cpu.push_back(0);
  }
  s.end_ns = 5000;
  r.repetitions = {{s}, {s}, {s}};
  for (int round : {2, 0, 1}) r.ab.push_back({round, {{"feature:TTWU_QUEUE", "NO_TTWU_QUEUE"}}});
  return r;
}

// A set with no case, of an A/B run's setting 1 (or of no A/B run).
json ab_doc(bool ab = true) {
  ResultSetDoc d;
  d.schema = kResultSchema;
  d.schema_version = kResultSchemaVersion;
  if (ab) {
    const AbPlan plan = parse_ab_plan({"feature:TTWU_QUEUE=on,off"});
    d.ab = AbSet{"20261201T000000Z-42", 1, plan.settings, plan.label(1), plan.values(1), 99};
  }
  return result_set_json(d);
}

std::string ab_error(const json& doc) {
  try {
    read_result_set_doc(doc);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

std::string case_error(const json& c) {
  try {
    parse_cases(json::array({c}));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(AbSet, ReadsBackWhatTheRunWrites) {
  const auto v = read_result_set_doc(ab_doc()).ab;
  ASSERT_TRUE(v);
  EXPECT_EQ(v->id, "20261201T000000Z-42");
  EXPECT_EQ(v->setting, 1);
  EXPECT_EQ(v->settings, 2);
  EXPECT_EQ(v->label, "TTWU_QUEUE=off");
  EXPECT_EQ(v->values, (SettingValues{{"feature:TTWU_QUEUE", "off"}}));
  EXPECT_EQ(v->order_seed, 99u);
  EXPECT_FALSE(read_result_set_doc(ab_doc(false)).ab);

  const Topology topo = Topology::from_synthetic("pack:1 core:2 pu:1");
  const json c = case_json(ab_record(), topo);
  EXPECT_EQ(c["repetitions"][0]["ab"]["read_back"]["feature:TTWU_QUEUE"], "NO_TTWU_QUEUE");
  const CaseView view = parse_cases(json::array({c})).front();
  EXPECT_EQ(view.ab_round, (std::vector<int>{2, 0, 1}));
  CaseRecord plain = ab_record();
  plain.ab.clear();
  EXPECT_TRUE(parse_cases(json::array({case_json(plain, topo)})).front().ab_round.empty());
}

TEST(AbSet, BadValuesAreOneLine) {
  json d = ab_doc();
  d["ab"]["setting"] = 2;
  EXPECT_EQ(ab_error(d), "ab.setting is 2, not an integer in [0, 1]");
  d = ab_doc();
  d["ab"]["settings"] = 1;
  EXPECT_EQ(ab_error(d), "ab.settings is 1, not an integer in [2, 100]");
  d = ab_doc();
  d["ab"]["id"] = "a b";
  EXPECT_EQ(ab_error(d), "ab.id \"a b\" has a character outside [A-Za-z0-9._:,=/+-]");
  d = ab_doc();
  d["ab"]["values"] = json::object();
  EXPECT_EQ(ab_error(d), "ab.values is not a non-empty object");
  d = ab_doc();
  d["ab"]["order_seed"] = -1;
  EXPECT_EQ(ab_error(d), "ab.order_seed is not an unsigned integer");
  EXPECT_EQ(ab_error(ab_doc()), "accepted");

  const json good = case_json(ab_record(), Topology::from_synthetic("pack:1 core:2 pu:1"));
  json bad = good;
  bad["repetitions"][1].erase("ab");
  EXPECT_EQ(case_error(bad),
            "cases[0] (pipe/threads/same-cpu): repetitions: 2 of 3 have an \"ab\" object");
  bad = good;
  bad["repetitions"][2]["ab"]["round"] = -1;
  EXPECT_EQ(case_error(bad),
            "cases[0] (pipe/threads/same-cpu): repetitions[2].ab.round is -1, not an integer in "
            "[0, 1073741824]");
  bad = good;
  bad["repetitions"][0]["ab"]["read_back"]["feature:TTWU_QUEUE"] = "x;rm";
  EXPECT_NE(case_error(bad).find("repetitions[0].ab.read_back.feature:TTWU_QUEUE \"x;rm\" has a "
                                 "character outside"),
            std::string::npos)
      << case_error(bad);
  EXPECT_EQ(case_error(good), "accepted");
}

}  // namespace
}  // namespace wb
