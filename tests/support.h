// Helpers every test file shares: reading files, and the test data under tests/fixtures
// (WB_FIXTURES_DIR: topologies, captures, policy vectors, all in the repository, so a missing one
// fails the test; tests/fixtures/README.md gives each file's provenance).
#pragma once

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/system/topology.h"

namespace wb::test {

// The whole file; "" when it cannot be opened (callers that need it use read_fixture).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The direct children of process `pid` (a run's task processes: driver.cpp CaseRun::spawn).
inline std::set<pid_t> children_of(pid_t pid) {
  std::set<pid_t> out;
  std::istringstream in(
      slurp("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children"));
  for (pid_t c; in >> c;) out.insert(c);
  return out;
}

// How many file descriptors this process has open (a case must leave as many as it found).
inline std::size_t open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// A folder of the running test's own, <temp>/<prefix>-<pid>-<test name>, made empty; the test
// removes it in TearDown.
inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / (prefix + "-" + std::to_string(getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Each line followed by a newline: a list of lines as one text, for a readable EXPECT_EQ diff.
inline std::string lines_text(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// The whole file, or std::runtime_error naming it.
inline std::string read_fixture(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open fixture " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The wakebench binary with `args`, its stdout and stderr in files of `dir`: its exit code (128 +
// the signal when killed), stdout and stderr.
struct Ran {
  int code = -1;
  std::string out, err;
};
inline Ran run_wakebench(const std::vector<std::string>& args, const std::filesystem::path& dir) {
  std::string cmd = WB_BINARY;
  for (const std::string& a : args) cmd += " '" + a + "'";  // test paths hold no quote
  cmd += " >" + (dir / "wb.stdout").string() + " 2>" + (dir / "wb.stderr").string();
  const int rc = std::system(cmd.c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc), slurp(dir / "wb.stdout"),
          slurp(dir / "wb.stderr")};
}

// A file under tests/fixtures, by its path relative to it.
inline std::string fixture_path(const std::string& rel) {
  return std::string(WB_FIXTURES_DIR) + "/" + rel;
}

// A capture of another machine's /proc or /sys file (tests/fixtures/captures).
inline std::string capture_path(const std::string& rel) { return fixture_path("captures/" + rel); }

// A /proc and /sys tree made from a real machine's captures (tests/fixtures/sysroot-<machine>, each
// with a README naming them): the `root` of the live readers of common/.
inline std::string sysroot_path(const std::string& machine) {
  return fixture_path("sysroot-" + machine);
}

// tests/fixtures/topologies: real machines' hwloc XML files (model/: the policy vectors' boxes).
inline std::filesystem::path topologies_dir() {
  return std::filesystem::path(WB_FIXTURES_DIR) / "topologies";
}

// The machine the tests run on (Topology::from_system()), loaded once.
inline const Topology& this_machine() {
  static const Topology topo = Topology::from_system();
  return topo;
}

// A machine of tests/fixtures/topologies, by file name.
inline Topology fixture_topology(const std::string& name) {
  return Topology::from_xml(topologies_dir() / name);
}

// Why this process cannot open perf events at all, or "" when it can: perf_event_open answers
// ENOSYS under qemu-user (runners/cross-build.sh) and on a kernel without CONFIG_PERF_EVENTS. A
// refusal for any other reason (paranoia, no PMU) is what the counter tests check, not a skip.
inline std::string perf_events_unsupported() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.disabled = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    return "";
  }
  return errno == ENOSYS ? "perf_event_open is not implemented here (ENOSYS: qemu-user, or a "
                           "kernel without CONFIG_PERF_EVENTS)"
                         : "";
}

// "qemu-user: aarch64 code on a x86_64 kernel" when this process runs under user-mode emulation,
// else "": uname() answers for the emulated machine, /proc/sys/kernel/arch (Linux >= 6.1) for the
// kernel, which qemu-user passes through untranslated.
inline std::string user_mode_emulation() {
  utsname u{};
  if (uname(&u) != 0) return "";
  std::string kernel = slurp("/proc/sys/kernel/arch");
  while (!kernel.empty() && (kernel.back() == '\n' || kernel.back() == ' ')) kernel.pop_back();
  if (kernel.empty() || kernel == u.machine) return "";
  return "qemu-user: " + std::string(u.machine) + " code on a " + kernel + " kernel";
}

}  // namespace wb::test

// Skips a test that counts with perf events where they cannot be opened at all, with the reason.
#define WB_SKIP_WITHOUT_PERF_EVENTS() \
  if (const std::string why = wb::test::perf_events_unsupported(); !why.empty()) GTEST_SKIP() << why
