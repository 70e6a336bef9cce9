// Schema 3's per-repetition facts (docs/result-set.md#blocked, #classes): a kernel-placed
// repetition's round trips split by observed class as case_json writes them, the typed view
// (analysis/results/case_view.h: CaseView::rep_info) reading back what case_json wrote, its
// one-line errors, and which schema versions the loader reads.
#include <gtest/gtest.h>

#include "analysis/results/case_view.h"
#include "analysis/results/resultset_io.h"
#include "common/schema/result_set.h"
#include "tests/support.h"

namespace wb {
namespace {

using nlohmann::json;

// 8 cores with SMT2, siblings strided by 8, one LLC: 0-0 same-cpu, 0-8 smt-sibling, 0-1 llc.
const Topology& box_c_8c() {
  static const Topology t = test::fixture_topology("model/box-c-8c-smt2-stride8-1llc.xml");
  return t;
}

// Round trips given as {waker CPU, wakee CPU, RTT ns}, one stream, every wait blocked.
struct Trip {
  int waker, wakee;
  int64_t rtt;
};
PairSamples samples(const std::vector<Trip>& trips) {
  PairSamples s;
  for (const Trip& t : trips) {
    s.rtt_ns.push_back(t.rtt);
    s.wakeup_ns.push_back(t.rtt / 2);
    s.waker_cpu.push_back(t.waker);
    s.wakee_cpu.push_back(t.wakee);
    s.end_ns += t.rtt;
  }
  const auto n = static_cast<int64_t>(trips.size());
  s.blocked = {n, n};
  s.preempted = {0, 0};
  return s;
}

CaseRecord kernel_record(std::vector<std::vector<PairSamples>> reps, bool kernel = true) {
  CaseRecord r;
  r.spec.mechanism = "pipe";
  r.spec.mode = Mode::kThreads;
  r.spec.placement = kernel ? "kernel" : "llc";
  r.spec.name = "pipe/threads/" + r.spec.placement;
  r.spec.kind = kernel ? PlacementKind::kKernel : PlacementKind::kPinned;
  r.spec.cpu_pairs = {{0, 1}};
  if (kernel) r.spec.cpuset = {0, 1, 8};
  r.wake_flags = WakeFlags::kSync;
  r.repetitions = std::move(reps);
  return r;
}

// Listed llc first: the split keeps kAllClasses' order, not the order the round trips came in.
const std::vector<Trip> kMixed = {{0, 1, 10000}, {0, 0, 1000},  {0, 1, 20000}, {0, 8, 5000},
                                  {0, 0, 3000},  {0, 1, 30000}, {0, 99, 7000}};

TEST(RepetitionClasses, AKernelRepetitionIsSplitByObservedClass) {
  // As written (ordered_json: a parsed json object would sort its keys by name).
  const nlohmann::ordered_json c =
      case_json(kernel_record({{samples(kMixed)}, {samples({{0, 1, 40000}})}}), box_c_8c());
  const nlohmann::ordered_json& first = c["repetitions"][0]["classes"];
  std::vector<std::string> order;
  for (const auto& [cls, v] : first.items()) order.push_back(cls);
  EXPECT_EQ(order, (std::vector<std::string>{"same-cpu", "smt-sibling", "llc", "unknown"}));
  EXPECT_EQ(first["same-cpu"]["round_trips"], 2);
  EXPECT_EQ(first["same-cpu"]["mean_ns"], 2000.0);
  EXPECT_EQ(first["smt-sibling"]["round_trips"], 1);
  EXPECT_EQ(first["smt-sibling"]["median_ns"], 5000.0);
  EXPECT_EQ(first["llc"]["round_trips"], 3);
  EXPECT_EQ(first["llc"]["mean_ns"], 20000.0);
  EXPECT_EQ(first["llc"]["median_ns"], 20000.0);
  EXPECT_EQ(first["unknown"]["round_trips"], 1) << "CPU 99 is outside the topology";
  EXPECT_EQ(Histogram::from_json(first["llc"]["hist"]).count(), 3);
  // The whole case's observed histogram counts the same classes over every repetition.
  EXPECT_EQ(c["observed"]["histogram"]["llc"], 4);
  // One class only: one entry.
  const nlohmann::ordered_json& second = c["repetitions"][1]["classes"];
  ASSERT_EQ(second.size(), 1u) << second;
  EXPECT_EQ(second["llc"]["round_trips"], 1);
  EXPECT_EQ(second["llc"]["mean_ns"], 40000.0);
}

TEST(RepetitionClasses, APinnedCaseHasNoClassSplit) {
  const json c = case_json(kernel_record({{samples({{0, 1, 1000}})}}, false), box_c_8c());
  EXPECT_FALSE(c["repetitions"][0].contains("classes"));
  EXPECT_TRUE(c["repetitions"][0].contains("marked"));
}

TEST(RepetitionView, ReadsBackWhatCaseJsonWrote) {
  CaseRecord rec = kernel_record({{samples(kMixed)}, {samples({{0, 1, 40000}, {0, 1, 41000}})}});
  rec.repetitions[1][0].blocked = {1, 0};  // did not sleep
  rec.repetitions[1][0].preempted = {1, 0};
  const json c = case_json(rec, box_c_8c());
  const CaseView v = parse_cases(json::array({c})).front();
  ASSERT_EQ(v.rep_info.size(), 2u);
  EXPECT_EQ(v.rep_info.size(), v.repetitions.size());
  EXPECT_EQ(v.rep_info[0].blocked[0], 1.0);
  EXPECT_EQ(v.rep_info[0].blocked[1], 1.0);
  EXPECT_FALSE(v.rep_info[0].marked);
  EXPECT_EQ(v.rep_info[1].blocked[0], 0.5);
  EXPECT_EQ(v.rep_info[1].blocked[1], 0.0);
  EXPECT_EQ(v.rep_info[1].preempted[0], 0.5);
  EXPECT_EQ(v.rep_info[0].preempted[1], 0.0);
  EXPECT_TRUE(v.rep_info[1].marked);
  EXPECT_EQ(v.marked(), 1u);
  ASSERT_EQ(v.rep_info[0].classes.size(), 4u);
  const ClassSample& llc = v.rep_info[0].classes[2];
  EXPECT_EQ(llc.cls, "llc");
  EXPECT_EQ(llc.round_trips, 3);
  EXPECT_EQ(llc.mean_ns, 20000);
  EXPECT_EQ(llc.median_ns, 20000);
  EXPECT_EQ(llc.hist.count(), 3);
  EXPECT_NEAR(llc.hist.percentile(0.5), 20000, 20000 * 0.004);
  EXPECT_EQ(v.rep_info[0].classes[0].cls, "same-cpu");
  EXPECT_EQ(v.rep_info[1].classes.size(), 1u);
  // A mechanism without blocked waits reads back as null on both sides.
  CaseRecord spin = kernel_record({{samples({{0, 1, 100}})}}, false);
  spin.repetitions[0][0].blocked = {std::nullopt, std::nullopt};
  spin.repetitions[0][0].preempted = {std::nullopt, std::nullopt};
  const CaseView s = parse_cases(json::array({case_json(spin, box_c_8c())})).front();
  ASSERT_EQ(s.rep_info.size(), 1u);
  EXPECT_FALSE(s.rep_info[0].blocked[0]);
  EXPECT_FALSE(s.rep_info[0].blocked[1]);
  EXPECT_FALSE(s.rep_info[0].preempted[0]);
  EXPECT_TRUE(s.rep_info[0].classes.empty());
}

std::string view_error(const json& c) {
  try {
    parse_cases(json::array({c}));
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  }
  return "accepted";
}

TEST(RepetitionView, BadValuesAreOneLineNamingTheCase) {
  const json good = case_json(kernel_record({{samples(kMixed)}, {samples(kMixed)}}), box_c_8c());
  ASSERT_EQ(view_error(good), "accepted");
  const std::string at = "cases[0] (pipe/threads/kernel): ";
  json bad = good;
  bad["repetitions"][0]["blocked"]["waker"] = -1;
  EXPECT_EQ(view_error(bad), at + "repetitions[0].blocked.waker is -1, not a non-negative number");
  bad = good;
  bad["repetitions"][1]["blocked"]["wakee"] = "many";
  EXPECT_EQ(view_error(bad),
            at + "repetitions[1].blocked.wakee is \"many\", not a non-negative number");
  bad = good;
  bad["repetitions"][0]["blocked"].erase("wakee");
  EXPECT_EQ(view_error(bad), at + "repetitions[0].blocked: missing \"wakee\"");
  bad = good;
  bad["repetitions"][0]["blocked"] = 1;
  EXPECT_EQ(view_error(bad), at + "repetitions[0].blocked is not an object or null");
  bad = good;
  bad["repetitions"][0]["marked"] = "yes";
  EXPECT_EQ(view_error(bad), at + "repetitions[0].marked is not true or false");
  bad = good;
  bad["repetitions"][1].erase("marked");  // all of them or none
  EXPECT_EQ(view_error(bad), at + "repetitions[1]: missing \"marked\"");
  bad = good;
  bad["repetitions"][1].erase("blocked");
  EXPECT_EQ(view_error(bad), at + "repetitions[1]: missing \"blocked\"");
  bad = good;
  bad["repetitions"][1].erase("preempted");
  EXPECT_EQ(view_error(bad), at + "repetitions[1]: missing \"preempted\"");
  bad = good;
  bad["repetitions"][0]["preempted"]["waker"] = -0.5;
  EXPECT_EQ(view_error(bad),
            at + "repetitions[0].preempted.waker is -0.5, not a non-negative number");
  bad = good;
  bad["repetitions"][0]["classes"]["llc"]["round_trips"] = 4;
  EXPECT_EQ(view_error(bad),
            at + "repetitions[0].classes.llc.hist holds 3 round trips, not its round_trips 4");
  bad = good;
  bad["repetitions"][0]["classes"]["llc"]["median_ns"] = 0;
  EXPECT_EQ(view_error(bad),
            at + "repetitions[0].classes.llc.median_ns is 0, not a positive number");
  bad = good;
  bad["repetitions"][0]["classes"]["llc"].erase("hist");
  EXPECT_EQ(view_error(bad), at + "repetitions[0].classes.llc: missing \"hist\"");
  bad = good;
  bad["repetitions"][0]["classes"] = json::array();
  EXPECT_EQ(view_error(bad), at + "repetitions[0].classes is not an object");
  bad = good;
  bad["repetitions"][0]["classes"]["l'lc"] = bad["repetitions"][0]["classes"]["llc"];
  EXPECT_NE(view_error(bad).find("repetitions[0].classes key \"l'lc\" has a character outside"),
            std::string::npos)
      << view_error(bad);
  bad = good;
  bad["marked_repetitions"] = 1;
  EXPECT_EQ(view_error(bad), at + "marked_repetitions is 1 but 0 of its repetitions are marked");
  bad = good;
  bad["marked_repetitions"] = -1;
  EXPECT_EQ(view_error(bad), at + "marked_repetitions is -1, not a count");
}

// ---- schema versions ----------------------------------------------------------------------------

std::string load_error(const json& doc) {
  try {
    parse_result_set(doc.dump(), "set.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ResultSchema, Version4ReadsAnd1To3StillDo) {
  EXPECT_EQ(kResultSchemaVersion, 4);
  const json doc = {
      {"schema", kResultSchema},
      {"schema_version", 3},
      {"cases", json::array({case_json(kernel_record({{samples(kMixed)}}), box_c_8c())})}};
  const ResultSet v3 = parse_result_set(doc.dump(), "v3.json");
  ASSERT_EQ(v3.views.size(), 1u);
  EXPECT_EQ(v3.views[0].rep_info.size(), 1u);
  EXPECT_EQ(v3.views[0].rep_info[0].classes.size(), 4u);
  // The fixtures of schema 1 and 2 are the proof that old sets read: without the new facts.
  for (const char* old : {"results/base.json", "results/report-sample.json"}) {
    const ResultSet rs = load_result_set(test::fixture_path(old));
    ASSERT_FALSE(rs.views.empty()) << old;
    for (const CaseView& c : rs.views) {
      EXPECT_TRUE(c.rep_info.empty()) << old << " " << c.name;
      EXPECT_EQ(c.marked(), 0u);
      EXPECT_EQ(marked_text(c), "");
    }
  }
  EXPECT_EQ(load_result_set(test::fixture_path("results/base.json")).set.schema_version, 1);
  EXPECT_EQ(load_result_set(test::fixture_path("results/report-sample.json")).set.schema_version,
            2);
}

TEST(ResultSchema, OtherVersionsAreRefusedInOneLine) {
  json doc = {{"schema", kResultSchema}, {"cases", json::array()}};
  for (int v : {5, 0}) {
    doc["schema_version"] = v;
    EXPECT_EQ(load_error(doc), "results set.json: schema_version " + std::to_string(v) +
                                   " is not supported (this wakebench reads versions 1 to 4)");
  }
  doc["schema_version"] = 3;
  EXPECT_EQ(load_error(doc), "accepted");
}

}  // namespace
}  // namespace wb
