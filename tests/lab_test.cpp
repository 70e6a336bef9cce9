// End-to-end test of the topology lab (runners/lab/wakebench-lab): boots one short qemu (TCG) guest
// with the smt2 preset, runs configs/lab/vm-test.json in it and checks what came back: the guest's
// sysfs matches the preset, the pinned SMT-sibling case ran on CPUs the guest's sysfs calls
// siblings, the kernel-placed cases (pipe, and tcp-loopback over the guest's loopback) recorded
// every round trip's placement, the agreement report covers both mechanisms, and every file with
// timings is labelled emulated. Skips with the reason when qemu, a guest kernel or busybox-static
// is missing (the runner's --check; WB_LAB_QEMU / WB_LAB_KERNEL point it elsewhere).
// Suite name "Vm": `ctest -L vm` (or -R Vm) selects it.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/util/cpulist.h"

namespace wb {
namespace {

namespace fs = std::filesystem;

struct Shell {
  int status = -1;  // exit status, -1 if it did not exit normally
  std::string output;
};

// Runs `command` through /bin/sh with stderr merged into the captured output.
Shell run_shell(const std::string& command) {
  Shell r;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen((command + " 2>&1").c_str(), "r"), pclose);
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0) r.output.append(buf.data(), n);
  const int raw = pclose(pipe.release());
  if (WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  return r;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  return nlohmann::json::parse(in);
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "wb-lab-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const nlohmann::json* find_case(const nlohmann::json& results, const std::string& name) {
  for (const auto& c : results.at("cases"))
    if (c.value("name", "") == name) return &c;
  return nullptr;
}

TEST(Vm, Smt2GuestRunsPinnedSiblingsAndRecordsKernelPlacement) {
  const fs::path lab = fs::path(WB_SOURCE_DIR) / "runners/lab/wakebench-lab";
  const std::string base = "python3 " + quote(lab.string()) + " --wakebench " + quote(WB_BINARY);
  const Shell check = run_shell(base + " --check");
  if (check.status == 3 || check.status == 127)
    GTEST_SKIP() << (check.output.empty() ? "python3 not available" : check.output);
  ASSERT_EQ(check.status, 0) << check.output;

  TempDir out;
  // 240 s stays inside the CTest timeout (300 s) even on a loaded 2-CPU host; the runner kills
  // qemu at its deadline, so no guest outlives the test.
  const Shell lab_run =
      run_shell(base + " --preset smt2 --config " +
                quote((fs::path(WB_SOURCE_DIR) / "configs/lab/vm-test.json").string()) + " --out " +
                quote(out.path().string()) + " --timeout 240");
  ASSERT_EQ(lab_run.status, 0) << lab_run.output;
  EXPECT_NE(lab_run.output.find("EMULATED (TCG) timings"), std::string::npos) << lab_run.output;

  const nlohmann::json summary = read_json(out.path() / "lab-summary.json");
  EXPECT_TRUE(summary.at("emulated").get<bool>());
  EXPECT_TRUE(summary.at("guest_done").get<bool>());
  EXPECT_TRUE(summary.at("sysfs_check").at("ok").get<bool>()) << summary.at("sysfs_check").dump();
  // The classes come from `wakebench topology --json --topology <the guest's XML>` on the host.
  const auto& classes = summary.at("classes");
  for (const std::string cls : {"same-cpu", "smt-sibling", "llc"})
    EXPECT_NE(std::find(classes.begin(), classes.end(), cls), classes.end()) << classes.dump();
  EXPECT_TRUE(summary.at("problems").empty()) << summary.at("problems").dump();

  const nlohmann::json results = read_json(out.path() / "results.json");
  const auto& env = results.at("environment");
  EXPECT_TRUE(env.at("emulated").get<bool>());
  EXPECT_NE(env.at("emulation").at("qemu_command").get<std::string>().find("tcg"),
            std::string::npos);
  // The kernel and the model it is held to: without --policy or a meta.json, mainline.
  EXPECT_EQ(env.at("lab_kernel").at("policy"), "mainline") << env.at("lab_kernel").dump();
  EXPECT_EQ(summary.at("agreement").at("policy"), "mainline");

  // The pinned sibling pair: status ok and, per the guest's own sysfs, on one core.
  const nlohmann::json* smt = find_case(results, "pipe/threads/smt-sibling");
  ASSERT_NE(smt, nullptr) << "no pipe/threads/smt-sibling case in the guest's result set";
  ASSERT_EQ(smt->at("status"), "ok") << smt->dump();
  const int waker = smt->at("cpus").at("waker"), wakee = smt->at("cpus").at("wakee");
  EXPECT_NE(waker, wakee);
  std::ifstream sysfs(out.path() / "sysfs.txt");
  ASSERT_TRUE(sysfs) << "sysfs.txt did not come back";
  std::string line, siblings;
  const std::string key = "cpu " + std::to_string(waker) + " thread_siblings_list ";
  while (std::getline(sysfs, line))
    if (line.rfind(key, 0) == 0) siblings = line.substr(key.size());
  const auto sib = parse_cpu_list(siblings);
  EXPECT_NE(std::find(sib.begin(), sib.end(), wakee), sib.end())
      << "wakee " << wakee << " is not in cpu" << waker << "'s thread_siblings_list " << siblings;
  bool checked = false;
  for (const auto& row : summary.at("pinned_check"))
    if (row.at("name") == "pipe/threads/smt-sibling") {
      EXPECT_TRUE(row.at("agrees").get<bool>()) << row.dump();
      checked = true;
    }
  EXPECT_TRUE(checked) << "the runner did not check the pinned case against sysfs";

  // The kernel-placed cases: one observed placement per round trip.
  for (const std::string name : {"pipe/threads/kernel", "tcp-loopback/threads/kernel"}) {
    const nlohmann::json* kern = find_case(results, name);
    ASSERT_NE(kern, nullptr) << "no " << name << " case in the guest's result set";
    ASSERT_EQ(kern->at("status"), "ok") << kern->dump();
    int64_t seen = 0;
    for (const auto& [cls, n] : kern->at("observed").at("histogram").items())
      seen += n.get<int64_t>();
    EXPECT_EQ(seen, kern->at("round_trips").get<int64_t>()) << name;
  }

  // The agreement report: one row per mechanism, each over the round trips observed (200 x 1
  // repetition).
  const nlohmann::json agreement = read_json(out.path() / "agreement.json");
  EXPECT_TRUE(agreement.at("emulated").get<bool>());
  for (const std::string mech : {"pipe", "tcp-loopback"}) {
    ASSERT_TRUE(agreement.at("mechanisms").contains(mech)) << agreement.at("mechanisms").dump();
    const auto& m = agreement.at("mechanisms").at(mech);
    EXPECT_EQ(m.at("round_trips").get<int64_t>(), 200) << m.dump();
    const double a = m.at("agreement").get<double>();
    EXPECT_GE(a, 0.0);
    EXPECT_LE(a, 1.0);
  }

  // Every other file that holds guest timings says they are emulated.
  EXPECT_TRUE(read_json(out.path() / "predict.json").at("emulated").get<bool>());
  EXPECT_TRUE(results.at("predictions").at("emulated").get<bool>());
  std::ifstream run_log(out.path() / "run.log");
  std::string first;
  ASSERT_TRUE(std::getline(run_log, first)) << "run.log did not come back";
  EXPECT_NE(first.find("EMULATED"), std::string::npos) << first;
}

}  // namespace
}  // namespace wb
