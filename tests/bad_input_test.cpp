// Bad input, end to end (docs/cli.md#cli): every command handed a malformed, unknown or unreadable
// input exits 2 with one line on stderr that starts "wakebench: " and says what is wrong and where
// (the file, the key or field, the byte position), prints nothing on stdout, and writes no output
// file (run's --out, report's --out folder). One table, one row per input. Every row runs under
// `timeout`, so an input that hangs a command fails its row.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/schema/environment.h"  // sha256_hex
#include "common/util/input.h"          // kMaxInputDepth
#include "tests/support.h"

namespace {

namespace fs = std::filesystem;
using wb::test::slurp;

// A two-PU hwloc topology whose second PU is numbered 99999999 (its cpuset says 1).
std::string far_pu_topology() {
  const auto pu = [](const std::string& os, const std::string& set) {
    return R"(<object type="PU" os_index=")" + os + R"(" cpuset=")" + set +
           R"(" complete_cpuset=")" + set + R"(" nodeset="0x1" complete_nodeset="0x1"/>)";
  };
  const std::string sets = R"(cpuset="0x3" complete_cpuset="0x3" nodeset="0x1" )"
                           R"(complete_nodeset="0x1")";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM "
         "\"hwloc2.dtd\">\n<topology version=\"2.0\">\n"
         R"(<object type="Machine" os_index="0" )" +
         sets +
         R"( allowed_cpuset="0x3" allowed_nodeset="0x1">)"
         R"(<object type="NUMANode" os_index="0" )" +
         sets + R"( local_memory="1073741824"/>)" + pu("0", "0x1") + pu("99999999", "0x2") +
         "</object>\n</topology>\n";
}

struct Bad {
  std::string what;    // the row's name in a failure
  std::string args;    // wakebench's arguments; {dir} is the row's scratch folder
  std::string expect;  // a part of the one line, with {dir} replaced too
  std::string env;     // what `env` runs the binary with: VAR=value, or a wrapper command
};

const char* kGoodCase =
    R"("cases": [{"mechanisms": ["pipe"], "modes": ["threads"], "placements": ["llc"]}])";

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wb-bad-input-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The inputs the rows name, written once.
    put("malformed.json", "{");
    put("unknown-key.json",
        std::string(R"({"schema_version": 1, "repeat": 3, )") + kGoodCase + "}");
    put("version-2.json", std::string(R"({"schema_version": 2, )") + kGoodCase + "}");
    put("version-huge.json", std::string(R"({"schema_version": 4294967297, )") + kGoodCase + "}");
    put("mechanism.json",
        cfg(R"("mechanisms": ["pipez"], "modes": ["threads"], "placements": ["llc"])"));
    put("mode.json", cfg(R"("mechanisms": ["pipe"], "modes": ["thread"], "placements": ["llc"])"));
    put("class.json",
        cfg(R"("mechanisms": ["pipe"], "modes": ["threads"], "placements": ["same-llc"])"));
    put("cpulist.json",
        cfg(R"("mechanisms": ["pipe"], "modes": ["threads"], "placements": ["kernel:3-1"])"));
    put("cpulist-word.json",
        cfg(R"("mechanisms": ["pipe"], "modes": ["threads"], "placements": ["matrix:0,one"])"));
    put("offline.json",
        cfg(R"("mechanisms": ["pipe"], "modes": ["threads"], "placements": ["kernel:0,4095"])"));
    put("offline-matrix.json",
        cfg(R"("mechanisms": ["pipe"], "modes": ["threads"], "placements": ["matrix:0,4000"])"));
    put("knob.json", cfg(R"("mechanisms": ["pipe"], "modes": ["threads"], "placements": ["llc"],
                             "params": {"payload": [0]})"));
    put("policy.json", std::string(R"({"schema_version": 1, )") + kGoodCase +
                           R"(, "claims": [{"seed": "000", "policy": "sync-pairs", "text": "t",
                               "cases": ["pipe/threads/llc"]}]})");
    put("good.json", std::string(R"({"schema_version": 1, )") + kGoodCase + "}");
    put("name.json",
        std::string(R"({"schema_version": 1, "name": "x'; touch PWNED", )") + kGoodCase + "}");
    put("garbage.xml", "\x01\x02 not xml at all");
    put("empty.xml", "");
    put("not-bool.json", R"({"waker": 0, "prev": 1, "sync": 3})");
    put("cut.json", R"({"waker": 0, "pr)");
    put("far-cpu.json", R"({"waker": 0, "prev": 100})");
    put("bad-features.json", R"({"waker": 0, "prev": 1, "sched_features": "NO_PLACE_LAG"})");
    put("not-a-result-set.json", R"({"schema": "something-else", "cases": []})");
    put("far-pu.xml", far_pu_topology());
    fs::create_directories(dir_ / "a-folder");
    write_result_sets();
  }

  // Result sets that are fixtures with one defect each (issue 25).
  void write_result_sets() {
    const nlohmann::json base = nlohmann::json::parse(slurp(fixture("base.json")));
    auto edited = [&](const std::string& name, auto edit) {
      nlohmann::json doc = base;
      edit(doc);
      put(name, doc.dump());
    };
    edited("evil-mechanism.json", [](nlohmann::json& d) {
      d["cases"][0]["mechanism"] = "x'; system(\"touch PWNED\"); print '";
    });
    edited("evil-placement.json",
           [](nlohmann::json& d) { d["cases"][0]["placement"] = "cpu:1,2`touch PWNED`"; });
    edited("huge-version.json", [](nlohmann::json& d) { d["schema_version"] = 4294967297LL; });
    edited("version-zero.json", [](nlohmann::json& d) { d["schema_version"] = 0; });
    edited("negative-blocked.json", [](nlohmann::json& d) {
      d["schema_version"] = 3;
      for (auto& r : d["cases"][1]["repetitions"]) {
        r["blocked"] = {{"waker", 1.0}, {"wakee", 1.0}};
        r["marked"] = false;
      }
      d["cases"][1]["repetitions"][0]["blocked"]["waker"] = -1;
    });
    edited("zero-median.json", [](nlohmann::json& d) { d["cases"][1]["rtt_ns"]["median"] = 0; });
    edited("unknown-mechanism.json", [](nlohmann::json& d) {
      d["cases"][1]["mechanism"] = "pipez";
      d["cases"][1]["name"] = "pipez/processes/llc";
    });
    edited("word-median.json",
           [](nlohmann::json& d) { d["cases"][1]["repetitions"][0]["median"] = "fast"; });
    edited("case-twice.json", [](nlohmann::json& d) { d["cases"].push_back(d["cases"][1]); });
    // The same key twice in one object (nlohmann keeps the last): "schema" as text.
    put("key-twice.json", [&] {
      std::string text = base.dump();
      text.insert(1, R"("schema_version": 99, )");
      return text;
    }());
    edited("negative-repetition.json",
           [](nlohmann::json& d) { d["cases"][1]["repetitions"][0]["median"] = -5; });
    edited("other-host.json",
           [](nlohmann::json& d) { d["environment"]["hostname"] = "elsewhere"; });
    edited("other-config.json",
           [](nlohmann::json& d) { d["environment"]["config_hash"] = "sha256:0"; });
    edited("rerun.json",  // a second run of base's suite
           [](nlohmann::json& d) { d["cases"][0]["repetitions"][0]["median"] = 2291; });
    edited("fewer-cases.json", [](nlohmann::json& d) { d["cases"].erase(d["cases"].size() - 1); });
    edited("one-repetition.json", [](nlohmann::json& d) {
      for (auto& c : d["cases"])
        if (auto& r = c["repetitions"]; r.size() > 1) r.erase(r.begin() + 1, r.end());
    });
  }
  static std::string fixture(const std::string& name) {
    return std::string(WB_FIXTURES_DIR) + "/results/" + name;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string cfg(const std::string& entry) {
    return R"({"schema_version": 1, "cases": [{)" + entry + "}]}";
  }
  void put(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  std::string expand(std::string s) const {
    for (size_t at; (at = s.find("{dir}")) != std::string::npos;) s.replace(at, 5, dir_.string());
    return s;
  }

  // Runs one row and checks the contract; `out` is the output the command must not create.
  void check(const Bad& b, const fs::path& out) {
    SCOPED_TRACE(b.what + ": wakebench " + expand(b.args));
    fs::remove_all(out);
    const std::string cmd = "timeout -k 5 60 env " + b.env + " " + WB_BINARY + " " +
                            expand(b.args) + " >" + (dir_ / "stdout").string() + " 2>" +
                            (dir_ / "stderr").string();
    const int rc = std::system(cmd.c_str());
    const std::string err = slurp(dir_ / "stderr");
    ASSERT_TRUE(WIFEXITED(rc)) << err;
    EXPECT_EQ(WEXITSTATUS(rc), 2) << err;
    EXPECT_EQ(err.rfind("wakebench: ", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find(expand(b.expect)), std::string::npos) << err;
    EXPECT_EQ(slurp(dir_ / "stdout"), "");
    EXPECT_FALSE(fs::exists(out)) << out << " was written";
  }

  // `wakebench run` rows: each row's args between `before` and `after`; no --out file.
  void check_runs(const std::vector<Bad>& rows, const std::string& before,
                  const std::string& after) {
    for (Bad b : rows) {
      b.args = before + b.args + after;
      check(b, dir_ / "never.json");
    }
  }

  fs::path dir_;
};

TEST_F(BadInput, RunConfigsAndFlags) {
  const std::vector<Bad> rows = {
      {"malformed JSON", "malformed.json",
       "config {dir}/malformed.json: invalid JSON at byte 2 (end of file: truncated?)"},
      {"unknown key", "unknown-key.json", "config {dir}/unknown-key.json: repeat: unknown key"},
      {"other schema version", "version-2.json",
       "schema_version: unsupported value 2 (this wakebench reads 1)"},
      {"schema_version past 32 bits", "version-huge.json",
       "schema_version: unsupported value 4294967297 (this wakebench reads 1)"},
      {"unknown mechanism", "mechanism.json",
       "cases[0].mechanisms[0]: unknown mechanism \"pipez\""},
      {"unknown mode", "mode.json", "cases[0].modes[0]: unknown mode \"thread\""},
      {"unknown class", "class.json", "cases[0].placements[0]: unknown placement \"same-llc\""},
      {"unknown policy", "policy.json", "claims[0].policy: unknown policy \"sync-pairs\""},
      {"a command in the name", "name.json",
       "config {dir}/name.json: name: value \"x'; touch PWNED\" has a character outside"},
      {"bad knob value", "knob.json",
       "cases[0]: params.payload: expected an integer in [1, 1048576]"},
      {"reversed CPU range", "cpulist.json",
       "cases[0].placements[0]: invalid CPU list \"3-1\": range end below its start at position 0"},
      {"word in a CPU list", "cpulist-word.json", "invalid CPU list \"0,one\""},
      {"CPU offline or not allowed", "offline.json",
       "cases[0].placements[0]: CPU 4095 is offline or not allowed"},
      {"matrix CPU not allowed", "offline-matrix.json", "CPU 4000 is offline or not allowed"},
      {"missing file", "nope.json",
       "config {dir}/nope.json: cannot open: No such file or directory"},
      {"a folder", "a-folder", "config {dir}/a-folder: is a directory"},
  };
  check_runs(rows, "run --config {dir}/", " --out {dir}/never.json");
  const std::vector<Bad> flags = {
      {"unknown flag", "--frobnicate", "--frobnicate"},
      {"unknown Google Benchmark flag", "--benchmark_bogus=1",
       "unrecognized Google Benchmark flag"},
      {"counter not counted", "--show cyclez", "--show cyclez: not among the counted events"},
      {"negative idle latency", "--idle-latency-us -1", "--idle-latency-us"},
      {"event required but not countable", "--events cyclez --require-events",
       "required perf events unavailable on this machine: cyclez"},
      {"noise file missing", "--noise {dir}/nope-noise.json",
       "noise {dir}/nope-noise.json: cannot open: No such file or directory"},
      {"noise file that is a config", "--noise {dir}/good.json",
       "noise {dir}/good.json: not a noise file"},
      {"timeout not a number", "--case-timeout nan", "--case-timeout: not a finite number"},
      {"negative seed", "--seed -1", "--seed: not an unsigned integer"},
      {"filter matching nothing", "--benchmark_filter=nothing-matches",
       "--benchmark_filter nothing-matches: matches no case of {dir}/good.json"},
  };
  check_runs(flags, "run --config {dir}/good.json --out {dir}/never.json ", "");
}

// `run --out` at what is not a regular file, or where nothing can be written: refused in one line
// before the first case (the one line is the proof: a case would print its progress line), and
// the target is left as it was.
TEST_F(BadInput, RunOutputsThatCannotBeWritten) {
  ASSERT_EQ(mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  fs::create_symlink(dir_ / "good.json", dir_ / "link");
  const int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", (dir_ / "sock").c_str());
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  std::vector<Bad> rows = {
      {"a FIFO", "fifo", "--out {dir}/fifo: is a FIFO, not a regular file"},
      {"a symlink", "link", "--out {dir}/link: is a symlink, not a regular file"},
      {"a socket", "sock", "--out {dir}/sock: is a socket, not a regular file"},
      {"a folder", "a-folder", "--out {dir}/a-folder: is a directory, not a regular file"},
      {"under a regular file", "good.json/r.json", "--out {dir}/good.json/r.json: Not a directory"},
  };
  // A device node of our own (the null device's numbers), never the system's.
  if (mknod((dir_ / "null").c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0)
    rows.push_back({"a device", "null", "--out {dir}/null: is a character device"});
  std::map<std::string, fs::file_type> before;
  for (const Bad& b : rows) before[b.args] = fs::symlink_status(dir_ / b.args).type();
  check_runs(rows, "run --config {dir}/good.json --out {dir}/", "");
  for (const Bad& b : rows) EXPECT_EQ(fs::symlink_status(dir_ / b.args).type(), before[b.args]);
  EXPECT_EQ(slurp(dir_ / "link"), slurp(dir_ / "good.json"));
  close(sock);
  check({"in /proc", "run --config {dir}/good.json --out /proc/wb-never.json",
         "--out /proc/wb-never.json: cannot write in its folder"},
        "/proc/wb-never.json");
}

// A tmpfs mounted read-only, and one that is full (root only: skipped where mount is refused).
TEST_F(BadInput, RunOutputOnAReadOnlyOrFullFilesystem) {
  struct Mount {
    fs::path at;
    bool ok;
    Mount(const fs::path& p, unsigned long flags, const char* opts) : at(p) {
      fs::create_directories(p);
      ok = mount("wb-bad-input", p.c_str(), "tmpfs", flags, opts) == 0;
    }
    ~Mount() {
      if (ok) umount2(at.c_str(), MNT_DETACH);
    }
  };
  const Mount ro(dir_ / "ro", MS_RDONLY, "size=64k"), full(dir_ / "full", 0, "size=8k");
  if (!ro.ok || !full.ok) GTEST_SKIP() << "cannot mount a tmpfs here (not root?)";
  std::ofstream(dir_ / "full" / "filler") << std::string(64 * 1024, 'x');
  check_runs({{"read-only filesystem", "ro/r.json",
               "--out {dir}/ro/r.json: cannot write in its folder: Read-only file system"},
              {"full filesystem", "full/r.json",
               "--out {dir}/full/r.json: cannot write in its folder: No space left on device"}},
             "run --config {dir}/good.json --out {dir}/", "");
  EXPECT_FALSE(fs::exists(dir_ / "ro" / "r.json"));
  EXPECT_FALSE(fs::exists(dir_ / "full" / "r.json"));
}

TEST_F(BadInput, TopologyFiles) {
  for (const char* command : {"topology --topology", "predict --topology", "search --topology"}) {
    const std::string cmd = command;
    const std::vector<Bad> rows = {
        {"missing", cmd + " {dir}/missing.xml",
         "topology {dir}/missing.xml: cannot open: No such file or directory"},
        {"not XML", cmd + " {dir}/garbage.xml",
         "topology {dir}/garbage.xml: not a valid hwloc XML topology"},
        {"empty", cmd + " {dir}/empty.xml", "topology {dir}/empty.xml: empty file"},
        {"a folder", cmd + " {dir}/a-folder", "topology {dir}/a-folder: is a directory"},
    };
    for (const Bad& b : rows) check(b, dir_ / "none");
  }
}

TEST_F(BadInput, SearchOptions) {
  const std::string box =
      "search --topology " +
      (wb::test::topologies_dir() / "model/box-c-8c-smt2-stride8-1llc.xml").string() +
      " --out {dir}/cases.json";
  const std::vector<Bad> rows = {
      {"unknown mechanism", box + " --mechanism pipes",
       "search --mechanism: unknown mechanism \"pipes\" (known: pipe,"},
      {"a mechanism that never blocks", box + " --mechanism spin",
       "search --mechanism spin: its tasks never block (busy-poll)"},
      {"unknown policy", box + " --policies mainline,sync-paer", "unknown policy \"sync-paer\""},
      {"one policy", box + " --policies mainline",
       "search: give at least two policies to tell apart"},
      {"bad --llc-level", box + " --llc-level L4", "search --llc-level:"},
      {"--max-seconds nan", box + " --max-seconds nan", "not a finite number"},
      {"--policies empty", box + " --policies ''", "an empty list of policies"},
      {"a PU past NR_CPUS", "search --topology {dir}/far-pu.xml",
       "far-pu.xml: PU 99999999 is over the highest CPU id 8191"},
  };
  for (const Bad& b : rows) check(b, dir_ / "none");
  EXPECT_FALSE(fs::exists(dir_ / "cases.json"));
}

TEST_F(BadInput, PredictScenariosAndOptions) {
  const std::string box = "predict --topology " +
                          (wb::test::topologies_dir() / "model/box-a-80c-nosmt-1llc.xml").string();
  const std::string fixtures = std::string(WB_FIXTURES_DIR) + "/predict/";
  const std::vector<Bad> rows = {
      {"missing field", box + " --scenario " + fixtures + "missing-prev.json",
       "scenario " + fixtures + "missing-prev.json: missing required field \"prev\""},
      {"wrong type", box + " --scenario {dir}/not-bool.json",
       "scenario {dir}/not-bool.json: field \"sync\" must be a boolean"},
      {"unknown field", box + " --scenario " + fixtures + "unknown-field.json",
       "scenario " + fixtures + "unknown-field.json: unknown field \"nr_runing\""},
      {"truncated", box + " --scenario {dir}/cut.json",
       "scenario {dir}/cut.json: invalid JSON at byte"},
      {"CPU not in the topology", box + " --scenario {dir}/far-cpu.json",
       "field \"prev\": CPU 100 is not in topology"},
      {"missing scenario", box + " --scenario {dir}/nope.json",
       "scenario {dir}/nope.json: cannot open: No such file or directory"},
      {"bad --allowed", box + " --allowed 3-1",
       "predict --allowed: invalid CPU list \"3-1\": range end below its start"},
      {"bad --start", box + " --start 0", "predict --start \"0\": expected two CPU ids a,b"},
      {"unmodelled --sched-features", box + " --sched-features NO_DELAY_DEQUEUE",
       "predict --sched-features: \"NO_DELAY_DEQUEUE\" is not a feature the model takes (acts on "
       "dequeue, not on where the wakee is placed)"},
      {"unmodelled scenario sched_features", box + " --scenario {dir}/bad-features.json",
       "scenario {dir}/bad-features.json: field \"sched_features\": \"NO_PLACE_LAG\" is not a "
       "feature the model takes"},
  };
  for (const Bad& b : rows) check(b, dir_ / "none");
}

// The loader of compare, report and predict --results: one set of checks and messages.
TEST_F(BadInput, ResultSets) {
  const std::string fixtures = std::string(WB_FIXTURES_DIR) + "/results/";
  const std::string good = fixtures + "base.json";
  struct Set {
    std::string what, path, expect;
  };
  const std::vector<Set> sets = {
      {"truncated", fixtures + "truncated.json",
       "invalid JSON at byte 5997 (end of file: truncated?)"},
      {"other schema version", fixtures + "schema-v5.json",
       "schema_version 5 is not supported (this wakebench reads versions 1 to 4)"},
      {"schema version 0", dir_.string() + "/version-zero.json",
       "schema_version 0 is not supported (this wakebench reads versions 1 to 4)"},
      {"blocked waits below zero", dir_.string() + "/negative-blocked.json",
       "cases[1] (pipe/processes/llc): repetitions[0].blocked.waker is -1, not a non-negative "
       "number"},
      {"not a result set", dir_.string() + "/not-a-result-set.json",
       "not a wakebench result set (expected \"schema\": \"wakebench-results\")"},
      {"missing", dir_.string() + "/nope.json", "cannot open: No such file or directory"},
      {"a command in a mechanism", dir_.string() + "/evil-mechanism.json",
       "cases[0] (pipe/processes/same-cpu): mechanism \"x'; system(\\\"touch PWNED\\\"); print '\" "
       "has a character outside [A-Za-z0-9._:,=/+-]"},
      {"a command in a placement", dir_.string() + "/evil-placement.json",
       "cases[0] (pipe/processes/same-cpu): placement \"cpu:1,2`touch PWNED`\" has a character "
       "outside"},
      {"schema_version past 32 bits", dir_.string() + "/huge-version.json",
       "schema_version 4294967297 is not supported"},
      {"median 0", dir_.string() + "/zero-median.json",
       "cases[1] (pipe/processes/llc): rtt_ns.median is 0, not a positive number"},
      {"negative repetition median", dir_.string() + "/negative-repetition.json",
       "cases[1] (pipe/processes/llc): repetitions[0].median is -5, not a positive number"},
      {"unknown mechanism", dir_.string() + "/unknown-mechanism.json",
       "cases[1] (pipez/processes/llc): unknown mechanism \"pipez\" (known: pipe,"},
      {"a word as a repetition median", dir_.string() + "/word-median.json",
       "cases[1] (pipe/processes/llc): repetitions[0].median is \"fast\", not a number"},
      {"a case twice", dir_.string() + "/case-twice.json",
       "cases[8] (pipe/processes/llc) repeats cases[1]: the same mechanism, mode, placement and "
       "params"},
      {"a key twice", dir_.string() + "/key-twice.json",
       "invalid JSON: the key \"schema_version\" twice in one object"},
  };
  for (const Set& s : sets) {
    const std::string where = "results " + s.path + ": ";
    check({s.what, "compare " + good + " " + s.path, where + s.expect}, dir_ / "none");
    check({s.what, "predict --results " + s.path, where + s.expect}, dir_ / "none");
    check({s.what, "report " + s.path + " --out {dir}/report", where + s.expect}, dir_ / "report");
    check({s.what, "noise " + good + " " + s.path + " --out {dir}/noise.json", where + s.expect},
          dir_ / "noise.json");
  }
  // A noise file that is not one (a result set, a missing file): compare says so in one line.
  check({"result set as noise file", "compare " + good + " " + good + " --noise " + good,
         "noise " + good + ": not a noise file (expected \"schema\": \"wakebench-noise\""},
        dir_ / "none");
  check({"missing noise file", "compare " + good + " " + good + " --noise {dir}/nope.json",
         "noise {dir}/nope.json: cannot open: No such file or directory"},
        dir_ / "none");
  check({"one result set", "compare " + good, "files: At least 2 required"}, dir_ / "none");
  EXPECT_FALSE(fs::exists("PWNED"));
  EXPECT_FALSE(fs::exists(dir_ / "report" / "PWNED"));
  check({"unknown metric", "compare " + good + " " + good + " --metric cyclez", "cyclez"},
        dir_ / "none");
}

// noise holds its A/A sets to one machine, one config, two distinct runs with enough repetitions
// each, and never writes over one of them.
TEST_F(BadInput, NoiseSets) {
  const std::string base = fixture("base.json"), d = dir_.string();
  const std::string out = " --out {dir}/noise.json";
  const std::vector<Bad> rows = {
      {"two machines", "noise " + base + " {dir}/other-host.json" + out,
       "noise: " + base + " and " + d + "/other-host.json are from different machines " +
           "(\"altra-a\", \"elsewhere\")"},
      {"two configs", "noise " + base + " {dir}/other-config.json" + out,
       "ran different configs (config_hash)"},
      {"one set twice", "noise " + base + " " + base + out,
       "noise: " + base + " and " + base + " are the same result set"},
      {"too few repetitions", "noise " + base + " {dir}/one-repetition.json" + out,
       "noise: " + d + "/one-repetition.json: case pipe/processes/same-cpu has 1 repetitions " +
           "(an A/A floor needs >= 3 per case)"},
  };
  for (const Bad& b : rows) check(b, dir_ / "noise.json");
  fs::copy_file(base, dir_ / "a.json");
  const std::string before = slurp(dir_ / "a.json");
  check({"--out is an input", "noise {dir}/a.json {dir}/other-host.json --out {dir}/a.json",
         "--out {dir}/a.json is one of the A/A sets it reads"},
        dir_ / "none");
  EXPECT_EQ(slurp(dir_ / "a.json"), before);
}

// compare's sides of several runs (docs/cli.md#runs-as-a-level): a side is one suite on one
// machine, "--" never leaves a side empty, a folder holds result sets.
TEST_F(BadInput, CompareSides) {
  const std::string base = fixture("base.json"), d = dir_.string();
  fs::create_directories(dir_ / "empty-folder");
  fs::create_directories(dir_ / "fifo-folder");
  fs::copy_file(base, dir_ / "fifo-folder/a.json");
  ASSERT_EQ(mkfifo((dir_ / "fifo-folder/b.json").c_str(), 0600), 0);
  const std::vector<Bad> rows = {
      {"-- at the end", "compare " + base + " --", "compare: side 2 has no result set"},
      {"-- at the start", "compare -- " + base + " " + base, "compare: side 1 has no result set"},
      {"two -- together", "compare " + base + " -- -- " + base,
       "compare: side 2 has no result set"},
      {"two machines in a side", "compare " + base + " {dir}/other-host.json -- " + base,
       "compare: side 1: " + base + " and " + d + "/other-host.json come from different machines"},
      {"two configs in a side", "compare " + base + " {dir}/other-config.json -- " + base,
       "ran different configs (config_hash)"},
      {"two case sets in a side", "compare " + base + " {dir}/fewer-cases.json -- " + base,
       "hold different cases (a side's runs run one suite)"},
      {"a set twice in a side", "compare " + base + " {dir}/rerun.json -- " + base + " " + base,
       "compare: side 2: " + base + " and " + base + " are the same result set"},
      {"a folder without sets", "compare {dir}/empty-folder " + base,
       "compare: folder {dir}/empty-folder holds no result set (*.json)"},
      {"a folder with another file", "compare {dir} " + base, "not a wakebench result set"},
      {"one set on both sides", "compare " + base + " " + base,
       "compare: " + base + " is on side 1 and side 2: a run compared with itself"},
      {"a FIFO in a folder", "compare {dir}/fifo-folder " + base,
       "compare: folder {dir}/fifo-folder: b.json is not a regular file"},
      {"more sets than a mail holds",
       "compare " + base + " {dir}/rerun.json {dir}/one-repetition.json --format mail",
       "compare --format mail: 3 sets need "},
  };
  for (const Bad& b : rows) check(b, dir_ / "none");
}

// An hwloc topology (hwloc's minimal XML parser needs the header lines) whose one PU sits under
// `groups` nested Group objects: its elements nest groups + 2 deep.
std::string nested_topology(int groups) {
  const std::string sets =
      R"( cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1")";
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
      "<topology version=\"2.0\">\n";
  xml += R"(<object type="Machine" os_index="0")" + sets +
         R"( allowed_cpuset="0x1" allowed_nodeset="0x1">)";
  xml += R"(<object type="NUMANode" os_index="0")" + sets + R"( local_memory="1073741824"/>)";
  for (int i = 0; i < groups; ++i) xml += R"(<object type="Group")" + sets + ">";
  xml += R"(<object type="PU" os_index="0")" + sets + "/>";
  for (int i = 0; i < groups; ++i) xml += "</object>";
  return xml + "</object></topology>\n";
}

// A JSON array nested `depth` deep.
std::string nested_array(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// Where each command reads a JSON document: how its one line names the input, and the command
// line with {in} in its place. Outputs go to {dir}/never.json, which must stay absent.
struct InputUse {
  std::string kind, args;
};
std::vector<InputUse> result_set_uses(const std::string& good) {
  const std::string run = "run --config {dir}/good.json --out {dir}/never.json ";
  return {{"results", "predict --results {in}"},
          {"results", "compare {in} " + good},
          {"results", "compare " + good + " {in}"},
          {"results", "noise " + good + " {in} --out {dir}/never.json"},
          {"results", "report {in} --out {dir}/never.json"},
          {"results", run + "--until-decided {in}"}};
}
std::vector<InputUse> json_uses(const std::string& good) {
  const std::string box = (wb::test::topologies_dir() / "model/box-a-80c-nosmt-1llc.xml").string();
  std::vector<InputUse> uses = result_set_uses(good);
  uses.push_back({"config", "run --config {in} --out {dir}/never.json"});
  uses.push_back({"noise", "run --config {dir}/good.json --out {dir}/never.json --noise {in}"});
  uses.push_back({"noise", "compare " + good + " " + good + " --noise {in}"});
  uses.push_back({"scenario", "predict --topology " + box + " --scenario {in}"});
  return uses;
}
const std::vector<InputUse> kXmlUses = {
    {"topology", "topology --topology {in}"},
    {"topology", "predict --topology {in}"},
    {"topology", "search --topology {in} --out {dir}/never.json"}};

class BadInputKinds : public BadInput {
 protected:
  const std::string good_ = fixture("base.json");
  // Every use with `in` as its input, refused with "<kind> <in>: <expect>".
  void check_uses(const std::vector<InputUse>& uses, const std::string& in,
                  const std::string& expect, const std::string& env = "") {
    for (const InputUse& u : uses) {
      std::string args = u.args;
      args.replace(args.find("{in}"), 4, in);
      check({u.kind + " " + in, args, u.kind + " " + in + ": " + expect, env}, dir_ / "never.json");
    }
  }
  std::vector<InputUse> all_uses() const {
    std::vector<InputUse> uses = json_uses(good_);
    uses.insert(uses.end(), kXmlUses.begin(), kXmlUses.end());
    return uses;
  }
};

// A device or a FIFO as any input: refused after open (O_NONBLOCK: a FIFO with no writer does not
// block it) and before a byte is read. The old reader read /dev/zero until memory ran out and
// waited on the FIFO for ever.
TEST_F(BadInputKinds, NotRegularFiles) {
  ASSERT_EQ(mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  check_uses(all_uses(), "/dev/zero", "is a character device, not a regular file");
  check_uses(all_uses(), "{dir}/fifo", "is a FIFO, not a regular file");
}

// Past the size limit (WAKEBENCH_MAX_INPUT_MIB, 1 MiB here): a file by its size before it is read,
// stdin when it has read past the limit; a limit that is not a number of MiB.
TEST_F(BadInputKinds, SizeLimitAndStdin) {
  put("big.json", std::string((1 << 20) + 1, ' '));
  check_uses(all_uses(), "{dir}/big.json",
             "is 1048577 bytes, larger than the input limit of 1 MiB (WAKEBENCH_MAX_INPUT_MIB "
             "raises it)",
             "WAKEBENCH_MAX_INPUT_MIB=1");
  std::vector<InputUse> from_zero = all_uses();
  for (InputUse& u : from_zero) u.args += " </dev/zero";
  check_uses(from_zero, "-", "is larger than the input limit of 1 MiB",
             "WAKEBENCH_MAX_INPUT_MIB=1");
  for (const char* limit : {"0", "abc", "1x", "-1", "99999999999999999999"})
    check({"limit " + std::string(limit), "compare " + good_ + " " + good_,
           std::string("WAKEBENCH_MAX_INPUT_MIB \"") + limit +
               "\": expected a whole number of MiB in [1, 1048576]",
           std::string("WAKEBENCH_MAX_INPUT_MIB=") + limit},
          dir_ / "none");
}

// Out of memory (a 20 MB array of ten million numbers under ulimit -v 400 MB): one line, exit 2.
TEST_F(BadInputKinds, OutOfMemory) {
  const std::string limited = "sh -c 'ulimit -v 400000; exec \"$0\" \"$@\"'";
  const std::string probe =
      "timeout -k 5 60 " + limited + " " + WB_BINARY + " events >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0)  // a sanitizer reserves more address space than that
    GTEST_SKIP() << "wakebench does not start under ulimit -v 400000";
  std::string array = "[";
  for (int i = 0; i < 10000000; ++i) array += "0,";
  put("big-array.json", array + "0]");
  check({"out of memory", "compare {dir}/big-array.json {dir}/big-array.json",
         "wakebench: out of memory", limited},
        dir_ / "none");
}

// "-" reads stdin, a pipe or a file, for every input kind; a command that reads it twice (search
// hashing its topology) gets the same document. (compare - - is refused: one run on both sides.)
TEST_F(BadInputKinds, StdinIsAnInput) {
  const std::string box = (wb::test::topologies_dir() / "model/box-a-80c-nosmt-1llc.xml").string();
  // search enumerates every experiment: 4 PUs take 0.1 s (release), box-c's 16 over 60 s under
  // ASan.
  const std::string small_box = std::string(WB_SOURCE_DIR) + "/configs/lab/topologies/smt2.xml";
  put("scenario.json", R"({"waker": 0, "prev": 1})");
  struct Use {
    std::string feed, args;  // feed: "cat FILE |" or ""; args may end in "<FILE"
  };
  const std::vector<Use> uses = {
      {"cat " + fixture("report-sample.json") + " |", "predict --results -"},
      {"", "compare - " + good_ + " <" + good_},
      {"cat " + box + " |", "topology --topology -"},
      {"", "search --topology - --out {dir}/cases.json <" + small_box},
      {"", "predict --topology " + box + " --scenario - <{dir}/scenario.json"},
      {"cat " + good_ + " |", "noise " + good_ + " - --out {dir}/noise.json"},
  };
  for (const Use& u : uses) {
    const std::string cmd = u.feed + " timeout -k 5 60 " + WB_BINARY + " " + expand(u.args) + " >" +
                            (dir_ / "stdout").string() + " 2>" + (dir_ / "stderr").string();
    SCOPED_TRACE(cmd);
    const int rc = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(rc));
    // noise refuses a set given twice, which proves it read stdin whole.
    if (u.args.rfind("noise", 0) == 0) {
      EXPECT_NE(slurp(dir_ / "stderr").find(" and - are the same result set"), std::string::npos);
      continue;
    }
    EXPECT_EQ(WEXITSTATUS(rc), 0) << slurp(dir_ / "stderr");
    EXPECT_NE(slurp(dir_ / "stdout"), "");
  }
  // run reads its config from stdin: the filter finds no case in it.
  check({"config on stdin",
         "run --config - --out {dir}/never.json --benchmark_filter=none <" +
             (dir_ / "good.json").string(),
         "--benchmark_filter none: matches no case of -"},
        dir_ / "never.json");
}

// A JSON array 200,000 deep and an XML topology 20,000 deep, as every input and inside a result
// set: refused before a recursive walk or hwloc sees them (the old code crashed with SIGSEGV in
// noise, run --until-decided, topology, predict and search).
TEST_F(BadInputKinds, NestedTooDeep) {
  put("deep.json", nested_array(200000));
  check_uses(json_uses(good_), "{dir}/deep.json",
             "invalid JSON at byte 128: nested deeper than 128 levels");
  put("deep.xml", nested_topology(20000));
  check_uses(kXmlUses, "{dir}/deep.xml", "XML nested deeper than 128 levels at byte ");
  // As deep as the limit allows: hwloc takes it (the limit is below where its recursion fails).
  put("at-limit.xml", nested_topology(wb::kMaxInputDepth - 2));
  const std::string at_limit = std::string(WB_BINARY) + " topology --topology " +
                               (dir_ / "at-limit.xml").string() + " >" + (dir_ / "stdout").string();
  EXPECT_EQ(std::system(at_limit.c_str()), 0);
  EXPECT_NE(slurp(dir_ / "stdout").find("counts: 1 PUs"), std::string::npos);
  const std::string base = slurp(good_);
  put("deep-set.json",
      "{\"deep\": " + nested_array(200000) + ", " + base.substr(base.find('{') + 1));
  check_uses(result_set_uses(good_), "{dir}/deep-set.json",
             "invalid JSON at byte 136: nested deeper than 128 levels");
  nlohmann::json set = nlohmann::json::parse(base);
  set["topology"]["xml"] = nested_topology(20000);
  put("deep-xml-set.json", set.dump());
  check_uses(result_set_uses(good_), "{dir}/deep-xml-set.json",
             "topology.xml: XML nested deeper than 128 levels at byte ");
}

// Escape sequences and control characters in a set's free text, which compare and predict print
// (the CPU model, the topology source, the kernel release, any other string), or in a noise file:
// refused in one line naming the field, the text escaped.
TEST_F(BadInputKinds, ControlCharactersInFreeText) {
  const nlohmann::json base = nlohmann::json::parse(slurp(good_));
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"/environment/cpu/model", "Neoverse\x1b[2J\x1b[31m"},
      {"/topology/source", "xml:box\x1b]0;owned\x07"},
      {"/environment/kernel/release", "6.1.0\r\n"},
      {"/environment/cpu/vendor",
       "ARM\xc2\x9b"
       "31m"},  // C1 CSI
      {"/context/executable", "wakebench\x7f"},
  };
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& [pointer, text] = fields[i];
    nlohmann::json set = base;
    set[nlohmann::json::json_pointer(pointer)] = text;
    const std::string name = "text" + std::to_string(i) + ".json";
    put(name, set.dump());
    std::string field = pointer.substr(1);
    std::replace(field.begin(), field.end(), '/', '.');
    check_uses(result_set_uses(good_), "{dir}/" + name, field + " ");
    check({"escaped", "predict --results {dir}/" + name, "has a control character"}, dir_ / "none");
    EXPECT_EQ(slurp(dir_ / "stderr").find_first_of("\x1b\x07\r\x7f"), std::string::npos);
    EXPECT_EQ(slurp(dir_ / "stderr").find("\xc2\x9b"), std::string::npos);
  }
  put("noise-text.json", R"({"schema": "wakebench-noise", "schema_version": 1, "hostname": )"
                         R"("altra-a\u001b[2J", "sets": [], "cases": {}})");
  check_uses({{"noise", "compare " + good_ + " " + good_ + " --noise {in}"}},
             "{dir}/noise-text.json", "hostname \"altra-a\\u001b[2J\" has a control character");
}

// The same in what replay reads line by line: a trace (where a task name may be any bytes) and a
// set's side file (its case names, its records): refused in one line naming the file and the
// line, the text escaped, before anything is printed.
TEST_F(BadInputKinds, ControlCharactersInReplaysInputs) {
  const std::string smt2 = std::string(WB_SOURCE_DIR) + "/configs/lab/topologies/smt2.xml";
  const fs::path decisions = fs::path(WB_FIXTURES_DIR) / "decisions";
  const std::string trace = slurp(decisions / "smt2-mainline.txt");
  const std::string side = slurp(decisions / "smt2-3core-mainline/results.decisions.txt");
  const std::string set = slurp(decisions / "smt2-3core-mainline/results.json");
  struct Row {
    std::string what, from, to, expect;
    bool side;  // the side file of a set, else a trace
  };
  const std::string kCase = "# case pipe/threads/kernel/", kWaker = "migration/5-40 ";
  const std::vector<Row> rows = {
      {"ESC in a trace's task", "pipe-812", "pipe\x1b[2J-812",
       "line 5: has a control character: \"pipe\\u001b[2J-812 [000]", false},
      {"C1 in a trace's task", "pipe-812",
       "pipe\xc2\x9b"
       "31m-812",
       "line 5: has a control character: \"pipe\\u009b31m-812 [000]", false},
      {"CR in a trace's task", "pipe-812", "pipe\r-812",
       "line 5: has a control character: \"pipe\\r-812 [000]", false},
      {"ESC in a side file's case", kCase, "# case pipe/threads\x1b]0;owned\x07/",
       "line 2: has a control character: \"# case pipe/threads\\u001b]0;owned\\u0007/", true},
      {"CR in a side file's case", kCase, "# case pipe/threads\r/",
       "line 2: has a control character: \"# case pipe/threads\\r/", true},
      {"a side file's case not a name", kCase, "# case pipe/threads kernel/",
       "line 2: case \"pipe/threads kernel/work=200000ns/bg=2/start=0,2\" has a character outside",
       true},
      {"ESC in a side file's record", kWaker, "migration/5\x1b[2J-40 ",
       "line 4: has a control character: \"migration/5\\u001b[2J-40 ", true},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::string text = r.side ? side : trace;
    text.replace(text.find(r.from), r.from.size(), r.to);
    const std::string n = std::to_string(i);
    if (!r.side) {
      put("trace" + n + ".txt", text);
      check({r.what, "replay {dir}/trace" + n + ".txt --topology " + smt2,
             "replay: {dir}/trace" + n + ".txt: " + r.expect},
            dir_ / "none");
    } else {
      nlohmann::json doc = nlohmann::json::parse(set);
      doc["decisions"]["file"] = "set" + n + ".decisions.txt";
      doc["decisions"]["sha256"] = wb::sha256_hex(text);
      put("set" + n + ".json", doc.dump());
      put("set" + n + ".decisions.txt", text);
      check({r.what, "replay {dir}/set" + n + ".json",
             "replay: {dir}/set" + n + ".decisions.txt: " + r.expect},
            dir_ / "none");
    }
    EXPECT_EQ(slurp(dir_ / "stderr").find_first_of("\x1b\x07\r"), std::string::npos);
    EXPECT_EQ(slurp(dir_ / "stderr").find("\xc2\x9b"), std::string::npos);
  }
}

}  // namespace
