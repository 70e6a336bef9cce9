// report: the files it writes, their structure, gnuplot rendering (PNG signature, SVG), and the
// no-gnuplot path (PATH stripped) that writes data and scripts and says how to render them.
#include "analysis/report/report.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/results/resultset_io.h"
#include "common/util/input.h"
#include "tests/support.h"

namespace wb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string results_fixture(const std::string& name) {
  return std::string(WB_FIXTURES_DIR) + "/results/" + name;
}

using wb::test::slurp;

// A fresh folder per test, removed afterwards.
class ReportDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("wb-report-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Sets PATH to a folder without gnuplot for its lifetime.
class NoGnuplotOnPath {
 public:
  NoGnuplotOnPath() : saved_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    ::setenv("PATH", "/nonexistent-wb-path", 1);
  }
  ~NoGnuplotOnPath() { ::setenv("PATH", saved_.c_str(), 1); }

 private:
  std::string saved_;
};

// A folder write_report staged for `out` and left beside it ("" when none).
std::string staged_left(const fs::path& out) {
  const std::string prefix = "." + out.filename().string() + ".wakebench-";
  for (const auto& entry : fs::directory_iterator(out.parent_path()))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) return entry.path().string();
  return "";
}

const std::vector<std::string> kSampleStems = {
    "heatmap",    "rtt-pipe",  "hist-pipe", "rtt-futex",
    "hist-futex", "predicted", "observed",  "matrix-pipe-processes"};

TEST_F(ReportDir, WritesDataScriptsAndIndex) {
  const ResultSet rs = load_result_set(results_fixture("report-sample.json"));
  ReportOptions options{dir_.string(), "/nonexistent/gnuplot-not-run"};
  // A gnuplot that cannot be spawned must fail loudly, naming it, and leave nothing behind.
  EXPECT_THROW(write_report(rs, options), std::runtime_error);
  EXPECT_FALSE(fs::exists(dir_));
  EXPECT_EQ(staged_left(dir_), "");
  options.gnuplot = "";
  const ReportOutput out = [&] {
    NoGnuplotOnPath no_gnuplot;  // data and scripts only
    return write_report(rs, options);
  }();

  EXPECT_TRUE(out.gnuplot.empty());
  EXPECT_TRUE(out.images.empty());
  EXPECT_TRUE(out.skipped.empty()) << out.skipped.front();
  EXPECT_EQ(out.scripts.size(), kSampleStems.size());
  for (const std::string& stem : kSampleStems) {
    for (const char* ext : {".dat", ".gp"}) {
      EXPECT_TRUE(fs::exists(dir_ / (stem + ext))) << stem << ext;
    }
    EXPECT_FALSE(fs::exists(dir_ / (stem + ".png"))) << stem;
    // Every axis is labelled; the numeric ones carry their unit (ns, or % of round trips).
    const std::string gp = slurp(dir_ / (stem + ".gp"));
    EXPECT_NE(gp.find("set xlabel "), std::string::npos) << stem;
    EXPECT_NE(gp.find("set ylabel "), std::string::npos) << stem;
    EXPECT_TRUE(gp.find("(ns") != std::string::npos || gp.find("(%)") != std::string::npos) << stem;
    EXPECT_NE(gp.find("set output '" + stem + ".png'"), std::string::npos) << stem;
    EXPECT_NE(gp.find("set output '" + stem + ".svg'"), std::string::npos) << stem;
  }
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos);  // no leftovers
  }
  const std::string index = slurp(dir_ / "index.md");
  for (const std::string& stem : kSampleStems) {
    EXPECT_NE(index.find("](" + stem + ".png)"), std::string::npos) << stem;
    EXPECT_NE(index.find("(" + stem + ".svg)"), std::string::npos) << stem;
  }
  EXPECT_NE(index.find("Images not rendered"), std::string::npos);
  EXPECT_NE(index.find("for f in *.gp; do gnuplot"), std::string::npos);
  EXPECT_NE(index.find("| pipe/processes/llc | ok | 0 -> 1 |"), std::string::npos);
  EXPECT_NE(index.find("skipped: unavailable: no SMT"), std::string::npos);
}

TEST_F(ReportDir, DataFilesHoldTheResultSetsNumbers) {
  const ResultSet rs = load_result_set(results_fixture("report-sample.json"));
  {
    NoGnuplotOnPath no_gnuplot;
    write_report(rs, ReportOptions{dir_.string(), ""});
  }

  auto data_lines = [&](const std::string& name) {
    std::vector<std::string> out;
    std::istringstream in(slurp(dir_ / name));
    for (std::string l; std::getline(in, l);) {
      if (!l.empty() && l[0] != '#') out.push_back(l);
    }
    return out;
  };
  // 2 x 2 matrix: four ordered pairs; the matrix cells stay out of the class heat map.
  EXPECT_EQ(data_lines("matrix-pipe-processes.dat").size(), 4u);
  const std::vector<std::string> heat = data_lines("heatmap.dat");
  int ok_cases = 0;
  for (const CaseView& c : rs.views) ok_cases += c.kind != PlacementKind::kMatrix && c.ok();
  EXPECT_EQ(static_cast<int>(heat.size()), ok_cases);
  for (const std::string& l : heat) {
    EXPECT_EQ(l.find("cpu:"), std::string::npos) << l;
    // Rows name only the params that vary between the cases of a mechanism/mode (none here).
    EXPECT_EQ(l.find("background="), std::string::npos) << l;
  }

  // The CDF of every ok pipe case, from its histograms: a block per case, rising from 0 to the
  // sample's resolution (2000 samples x 5 repetitions: -log10(1 / 10000) = 4); each case's
  // histogram shares add up to 100 %.
  const std::string cdf = slurp(dir_ / "rtt-pipe.dat");
  std::istringstream cdf_lines(cdf);
  int blocks = 0;
  bool in_block = false;
  double last_nines = -1;
  for (std::string l; std::getline(cdf_lines, l);) {
    if (l.empty() || l[0] == '#') {
      in_block = false;
      continue;
    }
    std::istringstream f(l);
    double x, nines;
    f >> x >> nines;
    if (!in_block) {
      EXPECT_EQ(nines, 0) << l;  // each block starts at 0
    }
    blocks += !in_block;
    in_block = true;
    last_nines = nines;
  }
  EXPECT_GE(blocks, 4);
  EXPECT_NEAR(last_nines, 4.0, 1e-9);
  double shares = 0;
  const std::vector<std::string> hist = data_lines("hist-pipe.dat");
  for (const std::string& l : hist) shares += std::stod(l.substr(l.find(' ') + 1));
  EXPECT_NEAR(shares, 100.0 * blocks, 0.01 * blocks);  // 100 % per case

  // Observed: one row per kernel case, shares summing to 100 %.
  const std::vector<std::string> obs = data_lines("observed.dat");
  ASSERT_EQ(obs.size(), 4u);  // header + 3 kernel cases
  for (std::size_t i = 1; i < obs.size(); ++i) {
    std::istringstream fields(obs[i].substr(obs[i].rfind('"') + 1));
    double sum = 0;
    for (double v; fields >> v;) sum += v;
    EXPECT_NEAR(sum, 100.0, 0.01) << obs[i];
  }
  // Predicted (the fixture's predictions block, written by `wakebench predict --results`):
  // sync-pair predicts same-cpu, whose pinned pipe/processes median is 2100 ns.
  const std::vector<std::string> pred = data_lines("predicted.dat");
  ASSERT_EQ(pred.size(), 4u);  // header + 3 kernel cases
  EXPECT_EQ(pred[0].find("row \"mainline\" \"sync-pair\""), 0u) << pred[0];
  bool found = false;
  for (const std::string& l : pred) {
    if (l.rfind("\"pipe/processes/kernel\" ", 0) == 0) {
      found = true;
      // mainline -> llc (5200), sync-pair -> same-cpu (2100), ..., kernel placement 4320.
      EXPECT_EQ(l, "\"pipe/processes/kernel\" 5200.0 2100.0 5200.0 5200.0 2100.0 2100.0 4320.0");
    }
  }
  EXPECT_TRUE(found);
}

// A matrix cell is a case placed "cpu:<a>,<b>" (what a `matrix` placement expands to), not one
// that carries a `matrix` param: no config has such a knob, and a case with it stays in the class
// heat map (before the typed case view the report took it for a matrix cell).
TEST_F(ReportDir, MatrixCellsAreRecognisedByTheirPlacement) {
  json doc = json::parse(slurp(results_fixture("report-sample.json")));
  for (json& c : doc["cases"])
    if (c["name"] == "pipe/processes/llc") c["params"]["matrix"] = true;
  const ResultSet rs = parse_result_set(doc.dump(), "matrix-param.json");
  {
    NoGnuplotOnPath no_gnuplot;
    write_report(rs, ReportOptions{dir_.string(), ""});
  }
  std::istringstream matrix(slurp(dir_ / "matrix-pipe-processes.dat"));
  int cells = 0;
  for (std::string l; std::getline(matrix, l);) cells += !l.empty() && l[0] != '#';
  EXPECT_EQ(cells, 4);  // the 2 x 2 cells only
  const std::string heat = slurp(dir_ / "heatmap.dat");
  EXPECT_NE(heat.find("5200.0 \"llc\" \"pipe/processes"), std::string::npos) << heat;
}

// A policy the model calls uncertain is marked in the predictions table: its marker is only its
// steady state.
TEST_F(ReportDir, UncertainPredictionsAreMarked) {
  ResultSet rs = load_result_set(results_fixture("report-sample.json"));
  for (RecordedPrediction& e : rs.predictions)
    for (auto& [id, pol] : e.policies)
      if (e.label == "pipe/processes/kernel" && id == "mainline") pol.uncertain = true;
  {
    NoGnuplotOnPath no_gnuplot;
    write_report(rs, ReportOptions{dir_.string(), ""});
  }
  const std::string index = slurp(dir_ / "index.md");
  EXPECT_NE(index.find("| pipe/processes/kernel | 5200 (llc ~) | 2100 (same-cpu) |"),
            std::string::npos)
      << index;
  // The reader gives the recorded `uncertain` (and only there) to the typed entry.
  json doc = json::parse(slurp(results_fixture("report-sample.json")));
  for (auto& e : doc["predictions"]["mechanisms"])
    if (e["mechanism"] == "pipe" && e["mode"] == "processes")
      e["policies"]["mainline"]["uncertain"] = {{"alternatives", json::array()}};
  std::vector<std::string> marked;
  for (const RecordedPrediction& e : check_result_set(doc).predictions)
    for (const auto& [id, pol] : e.policies)
      if (pol.uncertain) marked.push_back(e.label + " " + id);
  EXPECT_EQ(marked, std::vector<std::string>{"pipe/processes/kernel mainline"});
}

TEST_F(ReportDir, SkipsWhatTheResultSetLacksAndSaysSo) {
  const ResultSet rs = load_result_set(results_fixture("base.json"));  // no predictions, no matrix
  const ReportOutput out = [&] {
    NoGnuplotOnPath no_gnuplot;
    return write_report(rs, ReportOptions{dir_.string(), ""});
  }();
  // A result set of schema 1 keeps no histograms: no distribution is drawn, each says why.
  ASSERT_GE(out.skipped.size(), 3u);
  for (const std::string& why : out.skipped) {
    if (why.rfind("RTT distribution of ", 0) == 0) {
      EXPECT_NE(why.find("no case keeps histograms (a result set of schema 1)"), std::string::npos);
    }
  }
  EXPECT_NE(out.skipped[out.skipped.size() - 2].find("no predictions"), std::string::npos);
  EXPECT_NE(out.skipped.back().find("not a matrix run"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "rtt-pipe.gp"));
  EXPECT_FALSE(fs::exists(dir_ / "predicted.gp"));
  const std::string index = slurp(dir_ / "index.md");
  EXPECT_NE(index.find("## Not drawn"), std::string::npos);
  EXPECT_NE(index.find("no predictions"), std::string::npos);
}

TEST_F(ReportDir, GnuplotRendersPngAndSvg) {
  const auto gnuplot = find_on_path("gnuplot");
  if (!gnuplot) GTEST_SKIP() << "gnuplot not on PATH (Debian: apt-get install gnuplot-nox)";
  const ResultSet rs = load_result_set(results_fixture("report-sample.json"));
  const ReportOutput out = write_report(rs, ReportOptions{dir_.string(), ""});
  EXPECT_EQ(out.gnuplot, *gnuplot);
  ASSERT_EQ(out.images.size(), 2 * kSampleStems.size());
  const std::string png_signature = "\x89PNG\r\n\x1a\n";
  for (const std::string& stem : kSampleStems) {
    const std::string png = slurp(dir_ / (stem + ".png"));
    ASSERT_GE(png.size(), 1000u) << stem;
    EXPECT_EQ(png.substr(0, 8), png_signature) << stem;
    const std::string svg = slurp(dir_ / (stem + ".svg"));
    EXPECT_NE(svg.find("<svg"), std::string::npos) << stem;
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << stem;
  }
}

TEST_F(ReportDir, CliWithoutGnuplotSaysHowToRender) {
  const std::string cmd = "/usr/bin/env PATH=/nonexistent-wb-path " + std::string(WB_BINARY) +
                          " report " + results_fixture("report-sample.json") + " --out " +
                          dir_.string() + " 2>&1";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_NE(out.find("gnuplot not found on PATH"), std::string::npos) << out;
  EXPECT_NE(out.find("for f in *.gp; do gnuplot"), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(dir_ / "heatmap.gp"));
  EXPECT_FALSE(fs::exists(dir_ / "heatmap.png"));

  // The scripts render on their own later, as the message says.
  if (!find_on_path("gnuplot")) GTEST_SKIP() << "gnuplot not on PATH: rendering not checked";
  const std::string render = "cd " + dir_.string() + " && gnuplot heatmap.gp";
  EXPECT_EQ(std::system(render.c_str()), 0);
  EXPECT_EQ(slurp(dir_ / "heatmap.png").substr(0, 4), "\x89PNG");

  // A bad result set: one line, exit 2, nothing written.
  const fs::path other = dir_ / "bad";
  const std::string bad = std::string(WB_BINARY) + " report " + results_fixture("schema-v5.json") +
                          " --out " + other.string() + " 2>/dev/null";
  const int rc = std::system(bad.c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
  EXPECT_FALSE(fs::exists(other));
}

// ---- no string of a result set reaches an interpreter (issue 25) --------------------------------

// What a hostile set may write in any string: gnuplot's command substitution, a command after a
// closed quote (single or double), a new line starting a shell escape. Each would create `canary`
// in the folder gnuplot runs in (the report's).
std::vector<std::string> payloads(const std::string& canary) {
  return {"x'; system(\"touch " + canary + "\"); print '",
          "x\"; system(\"touch " + canary + "\") `touch " + canary + "`\n!touch " + canary +
              "\nprint 'x"};
}

// The script without its single-quoted literals (gnuplot substitutes nothing inside them; '' is a
// quote), so what is left is code.
std::string code_of(const std::string& script) {
  std::string out;
  bool quoted = false;
  for (std::size_t i = 0; i < script.size(); ++i) {
    if (script[i] == '\'' && quoted && i + 1 < script.size() && script[i + 1] == '\'')
      ++i;
    else if (script[i] == '\'')
      quoted = !quoted;
    else if (!quoted)
      out += script[i];
  }
  return out;
}

// Every place of a string in the set: a value, or a key of an object under cases or predictions
// (`parent` and `key`).
struct Place {
  json::json_pointer at;
  std::string key;  // "" for a value
  // Puts `text` there (a key is renamed, its value kept); returns how to undo it.
  std::function<void(json&)> put(json& doc, const std::string& text) const {
    if (key.empty()) {
      json old = std::exchange(doc[at], text);
      return [at = at, old](json& d) { d[at] = old; };
    }
    json value = std::move(doc[at][key]);
    doc[at].erase(key);
    doc[at][text] = std::move(value);
    return [at = at, from = text, to = key](json& d) {
      json v = std::move(d[at][from]);
      d[at].erase(from);
      d[at][to] = std::move(v);
    };
  }
  std::string where() const { return at.to_string() + (key.empty() ? "" : " key " + key); }
};

void string_places(const json& v, const json::json_pointer& at, bool keys,
                   std::vector<Place>& out) {
  if (v.is_string()) out.push_back({at, ""});
  if (v.is_array())
    for (std::size_t i = 0; i < v.size(); ++i) string_places(v[i], at / i, keys, out);
  if (!v.is_object()) return;
  for (const auto& [k, child] : v.items()) {
    const bool below = keys || k == "cases" || k == "predictions";
    if (below) out.push_back({at, k});
    string_places(child, at / k, below, out);
  }
}

// The places of `all` with one of each shape: the path with every array index but a case's
// replaced by "*", and the key. The reader and the report treat the elements of an array alike
// (each repetition, prediction entry and benchmark through the same code), so a second element's
// place of the same shape tests nothing new; a case's kind changes how it is drawn, so each case
// keeps its own. 1020 places -> 591: the test's time under the sanitizers nearly halves.
std::vector<Place> one_per_shape(const std::vector<Place>& all) {
  std::set<std::string> seen;
  std::vector<Place> out;
  for (const Place& place : all) {
    std::vector<std::string> tokens;
    for (auto p = place.at; !p.empty(); p = p.parent_pointer())
      tokens.insert(tokens.begin(), p.back());
    std::string shape;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const bool index = tokens[i].find_first_not_of("0123456789") == std::string::npos;
      shape += "/" + (index && (i == 0 || tokens[i - 1] != "cases") ? "*" : tokens[i]);
    }
    if (seen.insert(shape + " " + place.key).second) out.push_back(place);
  }
  return out;
}

// The sample set cut to one case of each kind the report draws (pinned, skipped, kernel-placed
// with its observed classes, another mechanism, matrix cells), two repetitions each and every 8th
// bucket of their histograms: every plot and string kind, hundreds of times faster to report.
json small_sample() {
  json doc = json::parse(slurp(results_fixture("report-sample.json")));
  json cases = json::array();
  for (int i : {0, 1, 2, 6, 7, 10, 11}) cases.push_back(doc["cases"][i]);
  for (json& c : cases) {
    json& reps = c["repetitions"];
    if (reps.size() > 2) reps.erase(reps.begin() + 2, reps.end());
    for (json& r : reps)
      for (const char* h : {"rtt_hist", "wakeup_hist"})
        for (const char* column : {"index", "count"}) {
          json& v = r[h][column];
          json kept = json::array();
          for (std::size_t i = 0; i < v.size(); i += 8) kept.push_back(v[i]);
          v = kept;
        }
  }
  doc["cases"] = cases;
  return doc;
}

// The scripts of a report: no payload outside a single-quoted literal.
void expect_no_command(const ReportOutput& out, const fs::path& dir, const std::string& canary) {
  for (const std::string& f : out.scripts) {
    const std::string code = code_of(slurp(dir / f));
    EXPECT_EQ(code.find('`'), std::string::npos) << f;
    EXPECT_EQ(code.find("system"), std::string::npos) << f;
    EXPECT_EQ(code.find("\n!"), std::string::npos) << f;
    EXPECT_EQ(code.find(canary), std::string::npos) << f;
  }
}

// Each payload goes into every string of the sample set (one place of each shape: one_per_shape),
// one at a time: the loader refuses the set
// in one line, or the report's scripts hold the payload only inside single-quoted literals. Then
// it goes into every value the loader accepted at once, and gnuplot, when installed, renders that
// report and runs nothing.
TEST_F(ReportDir, NoStringOfAResultSetRunsACommand) {
  const json sample = small_sample();
  const std::string canary = "CANARY";
  std::vector<Place> every;
  string_places(sample, json::json_pointer(), false, every);
  const std::vector<Place> places = one_per_shape(every);
  ASSERT_GT(places.size(), 300u);
  // Hundreds of reports, each file synced: in memory where there is a tmpfs, under a name the
  // leak checks of faults_test.cpp (anything "wb..." in /dev/shm) do not claim, since ctest runs
  // them side by side.
  const fs::path scratch =
      (fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path()) /
      ("report-scratch-" + std::to_string(::getpid()));
  const std::shared_ptr<void> remove_scratch(nullptr, [&](void*) { fs::remove_all(scratch); });
  for (const std::string& payload : payloads(canary)) {
    json one = sample, all = sample;
    int accepted = 0;
    for (const Place& place : places) {
      const auto undo = place.put(one, payload);
      ResultSet rs;
      try {
        // The reader's checks on the document itself: a dump and a parse back would give the same
        // document, and took half of this test's time under the sanitizers.
        rs = check_result_set(one);
      } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << place.where();
        undo(one);
        continue;
      }
      undo(one);
      ++accepted;
      if (place.key.empty()) place.put(all, payload);
      NoGnuplotOnPath no_gnuplot;
      fs::remove_all(scratch);
      SCOPED_TRACE(place.where());
      expect_no_command(write_report(rs, {scratch.string(), ""}), scratch, canary);
    }
    // Free text and the fields report does not read stay accepted; a payload with a control
    // character (a new line) is taken only as topology.xml, no other string may hold one.
    EXPECT_GT(accepted, payload.find('\n') == std::string::npos ? 100 : 0);
    const auto gnuplot = find_on_path("gnuplot");
    fs::remove_all(dir_);
    const ReportOutput out = write_report(parse_result_set(all.dump(), "hostile.json"),
                                          {dir_.string(), gnuplot.value_or("")});
    expect_no_command(out, dir_, canary);
    EXPECT_EQ(out.images.empty(), !gnuplot);
    EXPECT_FALSE(fs::exists(dir_ / canary));
  }
}

// ---- no name becomes a path (issue 33, item 0)
// ---------------------------------------------------

// Every regular file and symlink below `root` outside `skip`, with its content or target.
std::map<std::string, std::string> tree_state(const fs::path& root, const fs::path& skip) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->path() == skip) {
      it.disable_recursion_pending();
      continue;
    }
    const std::string rel = it->path().lexically_relative(root).string();
    if (it->is_symlink())
      out[rel] = "-> " + fs::read_symlink(it->path()).string();
    else if (it->is_regular_file())
      out[rel] = slurp(it->path());
    else
      out[rel] = "(folder)";
  }
  return out;
}

// Names that would climb out of the report's folder, reach a victim by an absolute path, or land
// on a symlink planted outside it, if any became a path.
std::vector<std::string> escaping_names(const fs::path& outside) {
  return {"../../outside/victim",
          "../outside/link",
          outside.string() + "/victim",
          "..",
          "a/../../../victim",
          "./../outside/victim/",
          "/etc/passwd",
          "victim"};  // the last a valid name, as in a set
}

// The sample set, parsed, then every string of its cases' views, its machine, its path and every
// string of its document (predictions included) set to `name`: past the reader, which refuses
// these names.
ResultSet hostile_set(const std::string& name) {
  json doc = small_sample();
  ResultSet rs = parse_result_set(doc.dump(), name);
  for (CaseView& c : rs.views) {
    c.name = c.mechanism = c.placement = c.reason = name;
    c.suffix = c.pair = "/" + name;
    c.params_json["name"] = name;
  }
  rs.machine.hostname = rs.machine.cpu_model = rs.machine.topology_source = name;
  std::vector<Place> places;
  string_places(doc, json::json_pointer(), false, places);
  for (const Place& place : places)
    if (place.key.empty()) place.put(doc, name);
  rs.set.predictions = doc["predictions"];  // what the report reads of the document
  return rs;
}

// The report of a set whose every string is a path that leaves its folder (".." parts, absolute,
// through a symlink planted there): nothing outside the report's folder changes, with gnuplot and
// without, and the folder holds only regular files of the report's own naming.
TEST_F(ReportDir, NoStringOfAResultSetBecomesAPath) {
  const fs::path outside = dir_ / "outside", out = dir_ / "a" / "b" / "report";
  fs::create_directories(outside);
  fs::create_directories(out.parent_path());
  for (const char* ext : {".dat", ".gp", ".png", ".svg", ".md"})
    std::ofstream(outside / (std::string("victim") + ext)) << "victim\n";
  std::ofstream(outside / "target") << "target\n";
  for (const char* ext : {".dat", ".gp", ".png", ".svg"})
    fs::create_symlink(outside / "target", outside / (std::string("link") + ext));
  const auto gnuplot = find_on_path("gnuplot");
  const auto before = tree_state(dir_, out);
  for (const std::string& name : escaping_names(outside)) {
    SCOPED_TRACE(name);
    if (name != "victim") {
      EXPECT_THROW(check_name("name", name), std::invalid_argument);
    }
    for (const std::string& plotter :
         {std::string("/nonexistent-wb-path/gnuplot"), gnuplot.value_or("")}) {
      fs::remove_all(out);
      ReportOutput r;
      {
        NoGnuplotOnPath no_gnuplot;
        r = write_report(hostile_set(name),
                         {out.string(), plotter.rfind("/nonexistent", 0) == 0 ? "" : plotter});
      }
      EXPECT_EQ(tree_state(dir_, out), before);
      for (const auto& entry : fs::directory_iterator(out)) {
        EXPECT_TRUE(entry.is_regular_file() && !entry.is_symlink()) << entry.path();
        const std::string file = entry.path().filename().string();
        EXPECT_EQ(file.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."),
                  std::string::npos)
            << file;
      }
      EXPECT_EQ(r.images.empty(), plotter.empty() || plotter.rfind("/nonexistent", 0) == 0);
    }
  }
}

// Two mechanisms whose names map to one stem get a plot each.
TEST_F(ReportDir, NamesThatLookAlikeGetAPlotEach) {
  ResultSet rs = parse_result_set(small_sample().dump(), "alike.json");
  for (CaseView& c : rs.views) c.mechanism = c.mechanism == "pipe" ? "pi:pe" : "pi.pe";
  const ReportOutput out = [&] {
    NoGnuplotOnPath no_gnuplot;
    return write_report(rs, ReportOptions{dir_.string(), ""});
  }();
  for (const char* script : {"rtt-pi_pe.gp", "rtt-pi_pe-2.gp", "hist-pi_pe.gp", "hist-pi_pe-2.gp"})
    EXPECT_NE(std::find(out.scripts.begin(), out.scripts.end(), script), out.scripts.end())
        << script;
}

// ---- all or nothing (issue 33, item 6)
// -----------------------------------------------------------

// `wakebench report RESULTS --out OUT [extra]` with PATH=`path` (a fake gnuplot's folder first):
// its wait status and stderr. `meanwhile` runs with the child's pid before it is waited for.
struct Ran {
  int status = -1;
  std::string err;
};
Ran run_report(const fs::path& out, const std::vector<std::string>& extra, const std::string& path,
               const std::function<void(pid_t)>& meanwhile = {}) {
  const fs::path err =
      fs::temp_directory_path() / ("wb-report-" + std::to_string(::getpid()) + ".stderr");
  std::vector<std::string> args = {WB_BINARY, "report", results_fixture("report-sample.json"),
                                   "--out", out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::freopen(err.c_str(), "w", stderr);
    std::freopen("/dev/null", "w", stdout);
    ::setenv("PATH", path.c_str(), 1);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (meanwhile) meanwhile(pid);
  Ran r;
  ::waitpid(pid, &r.status, 0);
  r.err = slurp(err);
  fs::remove(err);
  return r;
}

// A folder holding an executable `gnuplot` that runs `body` (sh; $1 is the script, $b its stem).
fs::path fake_gnuplot(const fs::path& dir, const std::string& body) {
  fs::create_directories(dir);
  std::ofstream(dir / "gnuplot") << "#!/bin/sh\nb=${1%.gp}\n" << body << "\n";
  fs::permissions(dir / "gnuplot", fs::perms::owner_all);
  return dir;
}

int exit_code(const Ran& r) { return WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1; }

// A non-empty --out is refused (a symlinked PNG in it is not written through); --replace swaps it
// whole, the link removed and its target untouched.
TEST_F(ReportDir, ANonEmptyFolderIsRefusedOrReplacedWhole) {
  const fs::path out = dir_ / "report", target = dir_ / "target";
  fs::create_directories(out);
  std::ofstream(target) << "target\n";
  fs::create_symlink(target, out / "heatmap.png");
  std::ofstream(out / "index.md") << "mine\n";
  const std::string no_gnuplot = "/nonexistent-wb-path";
  const Ran refused = run_report(out, {}, no_gnuplot);
  EXPECT_EQ(exit_code(refused), 2) << refused.err;
  EXPECT_NE(refused.err.find("is not empty (--replace replaces it whole)"), std::string::npos)
      << refused.err;
  EXPECT_EQ(slurp(out / "index.md"), "mine\n");
  const auto gnuplot = find_on_path("gnuplot");
  const Ran replaced = run_report(out, {"--replace"},
                                  gnuplot ? gnuplot->substr(0, gnuplot->rfind('/')) : no_gnuplot);
  EXPECT_EQ(exit_code(replaced), 0) << replaced.err;
  EXPECT_EQ(slurp(target), "target\n");
  EXPECT_FALSE(fs::is_symlink(out / "heatmap.png"));
  EXPECT_EQ(fs::exists(out / "heatmap.png"), gnuplot.has_value());
  EXPECT_NE(slurp(out / "index.md"), "mine\n");
  EXPECT_EQ(staged_left(out), "");
}

// gnuplot exiting 0 with an empty or cut image (a full filesystem): the report fails, exit 2,
// and leaves nothing.
TEST_F(ReportDir, AnImageCutShortFailsTheReport) {
  for (const std::string& body :
       {std::string(": > \"$b.png\"; printf '<svg></svg>' > \"$b.svg\""),
        std::string("printf '\\211PNG' > \"$b.png\"; printf '<svg>' > \"$b.svg\"")}) {
    SCOPED_TRACE(body);
    const fs::path bin = fake_gnuplot(dir_ / "bin", body), out = dir_ / "report";
    const Ran r = run_report(out, {}, bin.string() + ":/usr/bin:/bin");
    EXPECT_EQ(exit_code(r), 2) << r.err;
    EXPECT_NE(r.err.find("heatmap.png is "), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(staged_left(out), "");
  }
}

// SIGINT, SIGTERM or SIGHUP to report while gnuplot runs: gnuplot is stopped, nothing is left.
TEST_F(ReportDir, ASignalStopsGnuplotAndLeavesNothing) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    SCOPED_TRACE(sig);
    fs::remove_all(dir_);
    const fs::path pidfile = dir_ / "gnuplot.pid";
    const fs::path bin = fake_gnuplot(dir_ / "bin", "echo $$ > " + pidfile.string() + ".tmp; mv " +
                                                        pidfile.string() + ".tmp " +
                                                        pidfile.string() + "; exec sleep 60");
    const fs::path out = dir_ / "report";
    pid_t gnuplot = 0;
    const Ran r = run_report(out, {}, bin.string() + ":/usr/bin:/bin", [&](pid_t report) {
      for (int i = 0; i < 2000 && !fs::exists(pidfile); ++i) ::usleep(5000);
      gnuplot = std::stoi(slurp(pidfile));
      ::kill(report, sig);
    });
    EXPECT_EQ(exit_code(r), 2) << r.err;
    EXPECT_NE(r.err.find("interrupted by " + std::string(sigabbrev_np(sig))), std::string::npos)
        << r.err;
    EXPECT_NE(gnuplot, 0);
    EXPECT_TRUE(::kill(gnuplot, 0) != 0 && errno == ESRCH) << "gnuplot " << gnuplot << " alive";
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(staged_left(out), "");
  }
}

// A folder that appears at --out and fills while gnuplot runs (another report, a user) is never
// replaced without --replace: the report fails, the folder's files are untouched, nothing staged
// is left. With --replace it is replaced whole.
TEST_F(ReportDir, AFolderFilledWhileTheReportRunsIsKept) {
  const fs::path out = dir_ / "report";
  const std::string fill = "mkdir -p " + out.string() + "; echo precious > " + out.string() +
                           "/precious.txt; printf '\\211PNG IEND\\256B`\\202' > \"$b.png\"; "
                           "printf '<svg></svg>' > \"$b.svg\"";
  const fs::path bin = fake_gnuplot(dir_ / "bin", fill);
  const Ran kept = run_report(out, {}, bin.string() + ":/usr/bin:/bin");
  EXPECT_EQ(exit_code(kept), 2) << kept.err;
  EXPECT_NE(kept.err.find("was filled while the report was made"), std::string::npos) << kept.err;
  EXPECT_EQ(slurp(out / "precious.txt"), "precious\n");
  EXPECT_FALSE(fs::exists(out / "index.md"));
  EXPECT_EQ(staged_left(out), "");
  const Ran replaced = run_report(out, {"--replace"}, bin.string() + ":/usr/bin:/bin");
  EXPECT_EQ(exit_code(replaced), 0) << replaced.err;
  EXPECT_TRUE(fs::exists(out / "index.md"));
  EXPECT_EQ(staged_left(out), "");
}

// --out with a trailing slash is the folder; "", "." and "/" (no folder of its own) are refused
// before anything is rendered; a staged folder that a killed report left (its process gone) is
// removed by the next.
TEST_F(ReportDir, OutIsAFolderOfItsOwnAndOrphansAreCleared) {
  const std::string no_gnuplot = "/nonexistent-wb-path";
  const fs::path out = dir_ / "report";
  fs::create_directories(dir_);
  const fs::path orphan = dir_ / ".report.wakebench-999999999-0";
  fs::create_directories(orphan);
  const Ran slash = run_report(out.string() + "/", {}, no_gnuplot);
  EXPECT_EQ(exit_code(slash), 0) << slash.err;
  EXPECT_TRUE(fs::exists(out / "index.md"));
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_EQ(staged_left(out), "");
  for (const char* bad : {"", ".", "/"}) {
    SCOPED_TRACE(bad);
    const Ran r = run_report(bad, {}, no_gnuplot);
    EXPECT_EQ(exit_code(r), 2) << r.err;
    EXPECT_NE(r.err.find("names no folder of its own"), std::string::npos) << r.err;
  }
}

// Markup in a set's free text (the CPU model, a reason) reaches index.md as text, not as HTML or
// a link.
TEST_F(ReportDir, MarkupInASetsTextIsEscaped) {
  json doc = small_sample();
  const std::string markup = "<script>alert(1)</script> [x](javascript:alert(1)) a|b `c`";
  doc["environment"]["cpu"]["model"] = markup;
  doc["cases"][1]["reason"] = markup;
  {
    NoGnuplotOnPath no_gnuplot;
    write_report(parse_result_set(doc.dump(), "markup.json"), {dir_.string(), ""});
  }
  const std::string index = slurp(dir_ / "index.md");
  EXPECT_EQ(index.find("<script"), std::string::npos) << index;
  EXPECT_EQ(index.find("x](javascript"), std::string::npos) << index;
  const std::string escaped =
      "&lt;script&gt;alert(1)&lt;/script&gt; [x\\](javascript:alert(1)) a\\|b \\`c\\`";
  EXPECT_NE(index.find("Machine: wb-vm; " + escaped), std::string::npos) << index;
  EXPECT_NE(index.find(escaped + " |"), std::string::npos) << index;
}

}  // namespace
}  // namespace wb
