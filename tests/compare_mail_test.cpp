// compare --format mail (analysis/compare/compare_mail.cpp) against the shape of mmtests'
// compare-kernels tables, on the committed result sets base.json and new.json
// (tests/fixtures/results) and on two runs a side of them (results/runs): every line within 72
// columns; per table two header rows (kernel releases, set labels) whose right edges are the
// columns'; per case a metric row "Median case value (   0.00%) value *  34.10%*" whose value and
// change are the Comparison's and whose marker is the verdict compare gave that cell
// (pipe/processes/kernel must be DIFFERENT, pipe/processes/same-cpu must not), then the CoeffVar
// rows. The same reading of a table whose verdicts were flipped must see the flipped markers: the
// check can fail. What the table says besides is the golden output's
// (tests/golden/out/compare.mail, compare-runs.mail). CI: ~0.05 s in release (~0.5 s under ASan).
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/compare/compare.h"
#include "analysis/compare/compare_render.h"
#include "analysis/results/resultset_io.h"
#include "common/util/text.h"
#include "tests/support.h"

namespace wb {
namespace {

constexpr std::size_t kMail = 72;

std::vector<std::string> mail_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// One set's figures on a metric row: the value, the marker in place of '(' and the change.
struct MailCell {
  std::string value;
  char marker = 0;
  std::string change;
  std::size_t end = 0;  // the column just past the change field
};
struct MetricLine {
  std::string stat, name;
  std::vector<MailCell> cells;
};

// A metric row of two sets, as mmtests prints it: "Stat case value (   0.00%) value *  9.18%*";
// nullopt for any other line.
std::optional<MetricLine> parse_metric_line(const std::string& line) {
  static const std::regex row(
      R"(^(\S+) +(\S+) +(\S+) \(   0\.00%\) +(\S+) ([*(? ]) *(-?[0-9]+\.[0-9]{2})%([*)?]?)$)");
  std::smatch m;
  if (!std::regex_match(line, m, row)) return std::nullopt;
  const char open = m.str(5)[0];
  const std::string close = m.str(7);
  const std::string expect_close = open == '(' ? ")" : open == ' ' ? "" : std::string(1, open);
  if (close != expect_close) return std::nullopt;  // a marker that does not pair is no row
  const std::size_t base_end = static_cast<std::size_t>(m.position(3) + m.length(3)) + 11;
  return MetricLine{m.str(1),
                    m.str(2),
                    {{m.str(3), '(', "0.00", base_end}, {m.str(4), open, m.str(6), line.size()}}};
}

char marker_of(const CompareCell& c) {
  if (!c.decision) return ' ';
  switch (c.decision->verdict) {
    case CompareVerdict::kDifferent:
      return '*';
    case CompareVerdict::kSame:
      return '(';
    case CompareVerdict::kUnknown:
      return '?';
  }
  return 0;
}

const CompareRow& row_named(const Comparison& cmp, const std::string& name) {
  for (const CompareRow& r : cmp.rows)
    if (case_text(r) == name) return r;
  throw std::runtime_error("no row " + name);
}

// The metric line of case `name` (mechanism/mode/placement...) in `mail`, a name broken over the
// lines below it joined.
std::optional<MetricLine> metric_line(const std::string& mail, const std::string& name) {
  static const std::regex rest(R"(^ +(/\S*)$)");
  const std::vector<std::string> lines = mail_lines(mail);
  std::string mechanism;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (!l.empty() && l.find(' ') == std::string::npos) mechanism = l;  // a table's title
    auto m = parse_metric_line(l);
    if (!m) continue;
    std::smatch more;
    for (std::size_t k = i + 1; k < lines.size() && std::regex_match(lines[k], more, rest); ++k)
      m->name += more.str(1);
    if (mechanism + "/" + m->name == name) return m;
  }
  return std::nullopt;
}

struct Loaded {
  std::deque<ResultSet> sets;
  std::vector<CompareSide> sides;
};

Loaded load_sides(const std::vector<std::vector<std::string>>& sides) {
  Loaded f;
  for (const auto& side : sides) {
    CompareSide s;
    for (const std::string& file : side) {
      f.sets.push_back(load_result_set(test::fixture_path("results/" + file)));
      s.runs.push_back(&f.sets.back());
    }
    f.sides.push_back(s);
  }
  return f;
}

void expect_within_mail(const std::string& mail) {
  for (const std::string& l : mail_lines(mail)) EXPECT_LE(l.size(), kMail) << l;
}

// Every compared row of every table: its metric line holds the Comparison's value, change and the
// marker of its verdict, and ends where its column's header ends.
void expect_rows_match(const Comparison& cmp, const std::string& mail) {
  std::size_t checked = 0;
  for (const auto& [mechanism, rows] : by_mechanism(cmp))
    for (const CompareRow* r : rows) {
      const CompareCell& c = r->cells[1];
      if (!c.change_pct) continue;
      SCOPED_TRACE(case_text(*r));
      const auto line = metric_line(mail, case_text(*r));
      ASSERT_TRUE(line);
      EXPECT_EQ(line->cells[0].value, format_value(*r->cells[0].value));
      EXPECT_EQ(line->cells[1].value, format_value(*c.value));
      EXPECT_EQ(line->cells[1].change, fmt("%.2f", *c.change_pct));
      EXPECT_EQ(line->cells[1].marker, marker_of(c));
      ++checked;
    }
  EXPECT_GE(checked, 4u);
}

TEST(CompareMail, TwoSetsInMmtestsShapeWithTheVerdictsMarkers) {
  Loaded f = load_sides({{"base.json"}, {"new.json"}});
  const Comparison cmp = compare_sides(f.sides, {});
  const std::string mail = format_comparison(cmp, CompareFormat::kMail);
  expect_within_mail(mail);
  expect_rows_match(cmp, mail);
  // The verdicts this test leans on: kernel placement moved (DIFFERENT), same-cpu did not.
  ASSERT_EQ(row_named(cmp, "pipe/processes/kernel").cells[1].decision->verdict,
            CompareVerdict::kDifferent);
  ASSERT_NE(row_named(cmp, "pipe/processes/same-cpu").cells[1].decision->verdict,
            CompareVerdict::kDifferent);
  EXPECT_EQ(metric_line(mail, "pipe/processes/kernel")->cells[1].marker, '*');
  EXPECT_EQ(metric_line(mail, "pipe/processes/same-cpu")->cells[1].marker, '(');
  EXPECT_EQ(metric_line(mail, "pipe/processes/kernel")->stat, "Median");
}

TEST(CompareMail, HeaderRowsEndWhereTheColumnsEnd) {
  Loaded f = load_sides({{"base.json"}, {"new.json"}});
  const Comparison cmp = compare_sides(f.sides, {});
  const std::vector<std::string> lines = mail_lines(format_comparison(cmp, CompareFormat::kMail));
  const auto title = std::find(lines.begin(), lines.end(), "pipe");
  ASSERT_NE(title, lines.end());
  ASSERT_GT(lines.end() - title, 3);
  const std::string& releases = title[1];
  const std::string& labels = title[2];
  const auto row = parse_metric_line(title[3]);
  ASSERT_TRUE(row) << title[3];
  EXPECT_EQ(labels.size(), row->cells[1].end) << labels;      // "new" over the new column
  EXPECT_EQ(releases.size(), row->cells[1].end) << releases;  // and its kernel above it
  EXPECT_EQ(labels.find(" base ") + 5, row->cells[0].end) << labels;
  // The new kernel's release, cut with '~' where the column is narrower than it.
  const std::string release = "6.18.0-tip+sync-pair-v5";
  const std::string shown = releases.substr(releases.rfind(' ') + 1);
  EXPECT_TRUE(shown == release ||
              (shown.back() == '~' && release.rfind(shown.substr(0, shown.size() - 1), 0) == 0))
      << releases;
  // mmtests' order: every case's metric row, then every case's CoeffVar row.
  std::size_t k = 3;
  while (title + k < lines.end() && title[k].rfind("Median", 0) == 0) ++k;
  EXPECT_EQ(k - 3, 5u);  // the five pipe cases, skipped smt-sibling included
  EXPECT_EQ(title[k].rfind("CoeffVar processes/same-cpu", 0), 0u) << title[k];
}

// The reading above can fail: the same table with two verdicts flipped shows other markers.
TEST(CompareMail, FlippedVerdictsShowFlippedMarkers) {
  Loaded f = load_sides({{"base.json"}, {"new.json"}});
  Comparison cmp = compare_sides(f.sides, {});
  for (CompareRow& r : cmp.rows) {
    if (case_text(r) == "pipe/processes/kernel")
      r.cells[1].decision->verdict = CompareVerdict::kSame;
    if (case_text(r) == "pipe/processes/same-cpu")
      r.cells[1].decision->verdict = CompareVerdict::kUnknown;
  }
  const std::string mail = format_comparison(cmp, CompareFormat::kMail);
  EXPECT_EQ(metric_line(mail, "pipe/processes/kernel")->cells[1].marker, '(');
  EXPECT_EQ(metric_line(mail, "pipe/processes/same-cpu")->cells[1].marker, '?');
  expect_rows_match(cmp, mail);
}

TEST(CompareMail, RunLevelFormShowsTheRunsVariation) {
  Loaded f = load_sides({{"runs/base-run1.json", "runs/base-run2.json"},
                         {"runs/new-run1.json", "runs/new-run2.json"}});
  const Comparison cmp = compare_sides(f.sides, {});
  const std::string mail = format_comparison(cmp, CompareFormat::kMail);
  expect_within_mail(mail);
  expect_rows_match(cmp, mail);
  EXPECT_EQ(row_named(cmp, "pipe/processes/kernel").cells[1].level, CompareLevel::kRuns);
  EXPECT_NE(mail.find("level: runs (2 runs vs 2 runs)"), std::string::npos) << mail;
  EXPECT_NE(mail.find("\nRunCV    processes/same-cpu"), std::string::npos) << mail;
  // The kernel command line keeps what moves wakeups, and the seeds of both runs are named.
  for (const char* kept : {"isolcpus=domain,76-79", "nohz_full=76-79", "mitigations=off"})
    EXPECT_NE(mail.find(kept), std::string::npos) << kept << "\n" << mail;
  EXPECT_EQ(mail.find("root=/dev/vda1"), std::string::npos) << mail;
  EXPECT_NE(mail.find("seeds 1101, 1102"), std::string::npos) << mail;
}

TEST(CompareMail, WhereTheWakeeRanInEachSet) {
  Loaded f = load_sides({{"base.json"}, {"new.json"}});
  const std::string mail = format_comparison(compare_sides(f.sides, {}), CompareFormat::kMail);
  const std::string unwrapped = std::regex_replace(mail, std::regex("\n    "), " ");
  EXPECT_NE(unwrapped.find("\n  pipe/processes/kernel: base llc 99%, same-cpu 1%; new same-cpu "
                           "97%, llc 3% (TV 0.96)\n"),
            std::string::npos)
      << mail;
}

// The total variation from the baseline's shares: 0 where a set ran its wakees as the baseline did.
TEST(CompareMail, TheSameSharesAreNoDistance) {
  Loaded f = load_sides({{"base.json"}, {"base.json"}});
  const std::string mail = format_comparison(compare_sides(f.sides, {}), CompareFormat::kMail);
  const std::string unwrapped = std::regex_replace(mail, std::regex("\n    "), " ");
  EXPECT_NE(unwrapped.find("same-cpu 1% (TV 0.00)\n"), std::string::npos) << mail;
}

// The command lines the sets recorded (run.command), quoted as a shell reads them back; a set
// without one says so, beside what it records.
TEST(CompareMail, TheCommandsThatMadeTheSets) {
  Loaded f = load_sides({{"base.json"}, {"new.json"}});
  f.sets[0].set.run =
      RunOrder{"interleaved", 1, {"wakebench", "run", "--config", "configs/quick.json"}};
  std::string mail = format_comparison(compare_sides(f.sides, {}), CompareFormat::kMail);
  EXPECT_NE(mail.find("\nmade by:\n  base: wakebench run --config configs/quick.json\n"),
            std::string::npos)
      << mail;
  EXPECT_NE(mail.find("(no command line recorded)"), std::string::npos) << mail;
  f.sets[1].set.run = RunOrder{"interleaved", 2, {"wakebench", "run", "--out", "it's.json"}};
  mail = format_comparison(compare_sides(f.sides, {}), CompareFormat::kMail);
  EXPECT_NE(mail.find("  new: wakebench run --out 'it'\\''s.json'\n"), std::string::npos) << mail;
  EXPECT_EQ(mail.find("no command line recorded"), std::string::npos) << mail;
}

// A case name too long for its column is broken before a '/', the rest on a line below.
TEST(CompareMail, LongCaseNamesWrapWithinTheMail) {
  Loaded f = load_sides({{"base.json"}, {"new.json"}});
  Comparison cmp = compare_sides(f.sides, {});
  for (CompareRow& r : cmp.rows)
    if (case_text(r) == "pipe/processes/llc") r.suffix = "/work=2000ns/payload=4096/lines=64";
  const std::string mail = format_comparison(cmp, CompareFormat::kMail);
  expect_within_mail(mail);
  const std::vector<std::string> lines = mail_lines(mail);
  const auto at = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.rfind("Median   processes/llc ", 0) == 0;  // pipe's, the first table
  });
  ASSERT_NE(at, lines.end()) << mail;
  ASSERT_NE(at + 1, lines.end());
  EXPECT_EQ(at[1].rfind("           /", 0), 0u) << at[1];  // under the case column, indented
  const std::string joined = at->substr(9, at->find(' ', 9) - 9) + at[1].substr(11);
  EXPECT_TRUE(parse_metric_line(*at)) << *at;  // the figures stay on the row's first line
  EXPECT_EQ(joined, "processes/llc/work=2000ns/payload=4096/lines=64") << *at << "\n" << at[1];
}

// Three sets leave the case column too narrow: refused in one line, nothing rendered.
TEST(CompareMail, MoreSetsThanAMailHoldsAreRefused) {
  Loaded f = load_sides({{"base.json"}, {"new.json"}, {"xeon.json"}});
  const Comparison cmp = compare_sides(f.sides, {});
  try {
    format_comparison(cmp, CompareFormat::kMail);
    FAIL() << "three sets rendered";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("compare --format mail: 3 sets need ", 0), 0u)
        << e.what();
  }
  Loaded two = load_sides({{"base.json"}, {"xeon.json"}});
  EXPECT_NO_THROW(format_comparison(compare_sides(two.sides, {}), CompareFormat::kMail));
}

}  // namespace
}  // namespace wb
