// The readers of the kernel's files (common/system/kernel_files.h and the subjects it lists): the
// file parsers on real-machine captures (tests/fixtures/captures) and format-derived files
// (tests/fixtures/procfs), and the live readers on fixture trees made from those captures
// (tests/fixtures/sysroot-*), read exactly as they read /.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "common/system/cpu_sysfs.h"
#include "common/system/cpuinfo.h"
#include "common/system/kernel_files.h"
#include "common/system/sched_domains.h"
#include "common/system/sched_features.h"
#include "common/system/schedstat.h"
#include "tests/support.h"

namespace wb {
namespace {

std::string fixture_text(const std::string& path) { return test::read_fixture(path); }
std::string capture(const std::string& rel) { return test::capture_path(rel); }
std::string local(const std::string& rel) { return test::fixture_path("procfs/" + rel); }
using test::sysroot_path;

SchedstatSnapshot schedstat_fixture(const std::string& name) {
  const std::string path = capture("schedstat/" + name);
  return parse_schedstat(fixture_text(path), path);
}

// A scratch tree for malformed files: removed when the test ends.
class ScratchRoot {
 public:
  ScratchRoot()
      : dir_(std::filesystem::temp_directory_path() /
             ("wb-sysroot-" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(dir_);
  }
  ~ScratchRoot() { std::filesystem::remove_all(dir_); }
  // Writes `text` and a newline, as the kernel ends its files, at the machine path `path`.
  void write(const std::string& path, const std::string& text) const {
    const std::filesystem::path file = under_root(dir_.string(), path);
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
  }
  std::string root() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

std::vector<SchedDomainEntry> domains_at(const std::string& machine, int cpu) {
  std::string why;
  auto d = read_sched_domains({cpu}, &why, sysroot_path(machine));
  if (!d) throw std::runtime_error(why);
  return *d;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::vector<int> range(int lo, int hi) {  // [lo, hi]
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

// Runs `fn`, expects a std::exception whose message contains every one of `parts`.
template <typename Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no exception";
  } catch (const std::exception& e) {
    for (const auto& p : parts) {
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message \"" << e.what() << "\" lacks \"" << p << "\"";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// /proc/schedstat

TEST(Cpumask, GroupsMostSignificantFirst) {
  EXPECT_EQ(parse_cpumask("3f"), range(0, 5));
  EXPECT_EQ(parse_cpumask("0000,01000001"), (std::vector<int>{0, 24}));
  EXPECT_EQ(parse_cpumask("00000000,00000003"), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_cpumask("80000000,00000000"), (std::vector<int>{63}));
  EXPECT_THROW(parse_cpumask("0x3"), std::invalid_argument);
  EXPECT_THROW(parse_cpumask("123456789"), std::invalid_argument);
  EXPECT_THROW(parse_cpumask("ff,,ff"), std::invalid_argument);
}

TEST(Schedstat, I7_2600Linux313AllFields) {
  auto s = schedstat_fixture("v15-x86-i7-2600-4c8t-smt-mc-linux-3.13.txt");
  EXPECT_EQ(s.version, 15);
  EXPECT_EQ(s.timestamp_jiffies, 4385260291u);
  ASSERT_EQ(s.cpus.size(), 8u);
  const SchedstatCpu& c0 = s.cpus[0];
  EXPECT_EQ(c0.cpu, 0);
  EXPECT_EQ(c0.yld_count, 1997u);
  EXPECT_EQ(c0.sched_count, 43679845u);
  EXPECT_EQ(c0.sched_goidle, 20190148u);
  EXPECT_EQ(c0.ttwu_count, 23849991u);
  EXPECT_EQ(c0.ttwu_local, 8265600u);
  EXPECT_EQ(c0.run_time_ns, 1804193978928u);
  EXPECT_EQ(c0.run_delay_ns, 84582370213u);
  EXPECT_EQ(c0.pcount, 23201656u);
  ASSERT_EQ(c0.domains.size(), 2u);
  EXPECT_EQ(c0.domains[0].span, (std::vector<int>{0, 4}));  // SMT pair, mask ...,00000011
  EXPECT_EQ(c0.domains[0].ttwu_wake_remote, 874420u);
  EXPECT_EQ(c0.domains[0].ttwu_move_affine, 139288u);
  EXPECT_EQ(c0.domains[0].ttwu_move_balance, 0u);
  EXPECT_EQ(c0.domains[1].span, range(0, 7));
  EXPECT_EQ(c0.domains[1].ttwu_wake_remote, 14709928u);
  EXPECT_TRUE(c0.domains[1].name.empty());  // v15 prints no level names
  ASSERT_NE(s.find(7), nullptr);
  EXPECT_EQ(s.find(7)->domains[0].span, (std::vector<int>{3, 7}));
  EXPECT_EQ(s.find(8), nullptr);
}

TEST(Schedstat, I7_2600Linux32) {
  auto s = schedstat_fixture("v15-x86-i7-2600-4c8t-smt-mc-linux-3.2.txt");
  ASSERT_EQ(s.cpus.size(), 8u);
  const SchedstatCpu* c3 = s.find(3);
  ASSERT_NE(c3, nullptr);
  EXPECT_EQ(c3->ttwu_count, 48739179u);
  EXPECT_EQ(c3->ttwu_local, 44652153u);
  EXPECT_EQ(c3->domains[1].ttwu_wake_remote, 3868655u);
  EXPECT_EQ(c3->domains[1].ttwu_move_affine, 10444u);
  for (const auto& c : s.cpus) {
    EXPECT_LE(c.ttwu_local, c.ttwu_count) << "cpu" << c.cpu;
    EXPECT_LE(c.sched_goidle, c.sched_count) << "cpu" << c.cpu;
  }
}

TEST(Schedstat, ProcfsTestFixtureTwoCpus) {
  auto s = schedstat_fixture("v15-procfs-testfixture-2cpu.txt");
  ASSERT_EQ(s.cpus.size(), 2u);
  EXPECT_EQ(s.cpus[1].ttwu_count, 10466382u);
  EXPECT_EQ(s.cpus[1].domains[0].span, (std::vector<int>{0, 1}));
  EXPECT_EQ(s.cpus[1].domains[0].ttwu_wake_remote, 1437804657u);
  EXPECT_EQ(s.cpus[1].domains[0].ttwu_move_affine, 26220076u);
}

TEST(Schedstat, TrimmedUpstream128CpusSchedstatsOff) {
  auto s = schedstat_fixture("v15-128cpu-smt2-2x64-cpu0-cpu127-trimmed-upstream.txt");
  ASSERT_EQ(s.cpus.size(), 2u);
  const SchedstatCpu* c0 = s.find(0);
  const SchedstatCpu* c127 = s.find(127);
  ASSERT_TRUE(c0 && c127);
  EXPECT_EQ(c0->domains[0].span, (std::vector<int>{0, 64}));
  std::vector<int> half = range(0, 31);
  for (int c : range(64, 95)) half.push_back(c);
  EXPECT_EQ(c0->domains[1].span, half);
  EXPECT_EQ(c0->domains[2].span, range(0, 127));
  EXPECT_EQ(c127->domains[0].span, (std::vector<int>{63, 127}));
  // schedstats off: ttwu counters 0, sched_info fields still count.
  EXPECT_EQ(c0->ttwu_count, 0u);
  EXPECT_EQ(c0->run_time_ns, 1400897766846392u);
  EXPECT_EQ(c127->pcount, 10212355591u);
}

TEST(Schedstat, SapphireRapidsFragmentsWithoutHeader) {
  auto on = schedstat_fixture("v15-x86-spr-2s-224cpu-snc-on-cpu0-fragment.txt");
  EXPECT_EQ(on.version, 0);
  EXPECT_FALSE(on.timestamp_jiffies);
  ASSERT_EQ(on.cpus.size(), 1u);
  ASSERT_EQ(on.cpus[0].domains.size(), 4u);
  EXPECT_EQ(on.cpus[0].domains[0].span, (std::vector<int>{0, 112}));
  // SNC on: domain1 = the CPU's sub-NUMA cluster, 28 cores + their siblings.
  std::vector<int> snc = range(0, 27);
  for (int c : range(112, 139)) snc.push_back(c);
  EXPECT_EQ(on.cpus[0].domains[1].span, snc);
  EXPECT_EQ(on.cpus[0].domains[3].span, range(0, 223));

  auto off = schedstat_fixture("v15-x86-spr-2s-224cpu-snc-off-cpu0-fragment.txt");
  ASSERT_EQ(off.cpus.size(), 2u);  // the posted copy ends with the cpu1 line, no domains
  EXPECT_EQ(off.cpus[0].domains.size(), 3u);
  EXPECT_EQ(off.cpus[0].domains[1].span.size(), 112u);
  EXPECT_TRUE(off.cpus[1].domains.empty());
  EXPECT_EQ(off.cpus[1].run_time_ns, 747972895325u);
}

TEST(Schedstat, AndroidEasLinesAreSkipped) {
  auto s = schedstat_fixture("v15-android-eas-extra-lines-cpu0-fragment.txt");
  ASSERT_EQ(s.cpus.size(), 1u);
  EXPECT_EQ(s.cpus[0].ttwu_count, 209763u);
  EXPECT_EQ(s.cpus[0].ttwu_local, 87404u);
  ASSERT_EQ(s.cpus[0].domains.size(), 2u);
  EXPECT_EQ(s.cpus[0].domains[0].span, range(0, 3));
  EXPECT_EQ(s.cpus[0].domains[0].ttwu_wake_remote, 39102u);
  EXPECT_EQ(s.cpus[0].domains[0].ttwu_move_affine, 1466u);
  EXPECT_EQ(s.cpus[0].domains[1].span, range(0, 7));
  EXPECT_EQ(s.cpus[0].domains[1].ttwu_wake_remote, 83215u);
}

TEST(Schedstat, Version17NamesAndFieldCount) {
  const std::string path = local("schedstat-v17-format.txt");
  auto s = parse_schedstat(fixture_text(path), path);
  EXPECT_EQ(s.version, 17);
  ASSERT_EQ(s.cpus.size(), 2u);
  EXPECT_EQ(s.cpus[0].domains[0].name, "MC");
  EXPECT_EQ(s.cpus[0].domains[0].span, (std::vector<int>{0, 1}));
  EXPECT_EQ(s.cpus[0].domains[0].ttwu_wake_remote, 700u);
  EXPECT_EQ(s.cpus[0].domains[0].ttwu_move_affine, 55u);
  EXPECT_EQ(s.cpus[0].domains[0].ttwu_move_balance, 3u);
  EXPECT_EQ(s.cpus[1].ttwu_count, 3500u);
  EXPECT_EQ(s.cpus[1].run_delay_ns, 52000000u);
}

TEST(Schedstat, MalformedInputNamesFileAndLine) {
  const std::string cpu0 = "cpu0 1 0 2 3 4 5 6 7 8\n";
  const std::string dom15 =
      "domain0 3 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 "
      "30 31 32 33 34 35 36\n";
  expect_error([] { parse_schedstat("version 15\ncpu0 1 2 3\n", "t"); },
               {"t:2", "cpu line has 3 fields, expected 9"});
  expect_error([] { parse_schedstat("version 18\n", "t"); }, {"t:1", "version 18"});
  expect_error([&] { parse_schedstat("version 17\n" + cpu0 + dom15, "t"); },
               {"t:3", "expected 47"});
  expect_error([&] { parse_schedstat(dom15, "t"); }, {"t:1", "before any cpu line"});
  expect_error([] { parse_schedstat("cpu0 1 0 2 x 4 5 6 7 8\n", "t"); },
               {"t:1", "sched_goidle", "\"x\""});
  expect_error([&] { parse_schedstat(cpu0 + "domain0 zz" + dom15.substr(9), "t"); },
               {"t:2", "cpumask"});
  expect_error([] { parse_schedstat("", "empty"); }, {"empty", "no cpu lines"});
  // The well-formed pieces parse, so the errors above are about the broken parts.
  EXPECT_EQ(
      parse_schedstat("version 15\n" + cpu0 + dom15, "t").cpus[0].domains[0].ttwu_move_balance,
      36u);
}

TEST(SchedstatDelta, CountsPerCpuAndDomain) {
  auto before = schedstat_fixture("v15-x86-i7-2600-4c8t-smt-mc-linux-3.13.txt");
  auto after = before;
  before.schedstats_enabled = after.schedstats_enabled = true;
  after.timestamp_jiffies = *before.timestamp_jiffies + 250;
  SchedstatCpu& a0 = const_cast<SchedstatCpu&>(*after.find(0));
  a0.ttwu_count += 2000;
  a0.ttwu_local += 1000;
  a0.run_delay_ns += 12345;
  a0.pcount += 7;
  a0.domains[0].ttwu_wake_remote += 900;
  a0.domains[1].ttwu_move_affine += 11;
  SchedstatCpu& a4 = const_cast<SchedstatCpu&>(*after.find(4));
  a4.ttwu_count += 3;

  auto d = schedstat_delta(before, after, {0, 4, 42});
  EXPECT_EQ(d["version"], 15);
  EXPECT_EQ(d["jiffies"], 250);
  EXPECT_EQ(d["schedstats_enabled"], true);
  const auto& c0 = d["cpus"]["0"];
  EXPECT_EQ(c0["ttwu_count"], 2000);
  EXPECT_EQ(c0["ttwu_local"], 1000);
  EXPECT_EQ(c0["run_delay_ns"], 12345);
  EXPECT_EQ(c0["pcount"], 7);
  EXPECT_EQ(c0["sched_count"], 0);
  ASSERT_EQ(c0["domains"].size(), 2u);
  EXPECT_EQ(c0["domains"][0]["span"], (std::vector<int>{0, 4}));
  EXPECT_EQ(c0["domains"][0]["ttwu_wake_remote"], 900);
  EXPECT_EQ(c0["domains"][1]["ttwu_move_affine"], 11);
  EXPECT_EQ(d["cpus"]["4"]["ttwu_count"], 3);
  EXPECT_TRUE(d["cpus"]["42"].contains("unavailable"));
  EXPECT_EQ(d["total"]["ttwu_count"], 2003);
  EXPECT_EQ(d["total"]["ttwu_local"], 1000);
}

TEST(SchedstatDelta, SchedstatsOffAndBackwardsCountersAreUnavailable) {
  auto before = schedstat_fixture("v15-128cpu-smt2-2x64-cpu0-cpu127-trimmed-upstream.txt");
  auto after = before;
  before.schedstats_enabled = after.schedstats_enabled = false;
  const_cast<SchedstatCpu&>(*after.find(0)).run_delay_ns += 500;
  const_cast<SchedstatCpu&>(*after.find(127)).pcount -= 1;
  auto d = schedstat_delta(before, after, {0, 127});
  EXPECT_EQ(d["schedstats_enabled"], false);
  const auto& c0 = d["cpus"]["0"];
  ASSERT_TRUE(c0["ttwu_count"].contains("unavailable"));
  EXPECT_NE(c0["ttwu_count"]["unavailable"].get<std::string>().find("sched_schedstats"),
            std::string::npos);
  EXPECT_TRUE(c0["domains"][0]["ttwu_wake_remote"].contains("unavailable"));
  EXPECT_EQ(c0["run_delay_ns"], 500);  // sched_info keeps counting with schedstats off
  EXPECT_TRUE(d["cpus"]["127"]["pcount"].contains("unavailable"));
  EXPECT_EQ(d["total"]["pcount"], 0);  // only cpu0's numeric delta contributes
  EXPECT_FALSE(d["total"].contains("ttwu_count"));

  // Rebuilt domains (e.g. a cpuset change) cannot be compared field by field.
  auto rebuilt = before;
  const_cast<SchedstatCpu&>(*rebuilt.find(0)).domains.pop_back();
  EXPECT_TRUE(
      schedstat_delta(before, rebuilt, {0})["cpus"]["0"]["domains"].contains("unavailable"));
}

// A case's repetitions are contiguous windows of one span: their deltas added up are the delta
// over the span, byte for byte (what names the counters, such as the version, a domain's index and
// span, is kept, never added).
TEST(SchedstatDelta, WindowsAddUpToTheSpan) {
  auto s0 = schedstat_fixture("v15-x86-i7-2600-4c8t-smt-mc-linux-3.13.txt");
  s0.schedstats_enabled = true;
  auto s1 = s0, s2 = s0;
  for (auto* s : {&s1, &s2}) {
    const uint64_t k = s == &s1 ? 1 : 3;
    s->timestamp_jiffies = *s0.timestamp_jiffies + 100 * k;
    for (SchedstatCpu& c : s->cpus) {
      c.ttwu_count += 10 * k;
      c.run_time_ns += 1000 * k;
      for (SchedstatDomain& d : c.domains) d.ttwu_wake_remote += 7 * k;
    }
  }
  const std::vector<int> cpus = {0, 1, 4, 42};
  const nlohmann::json whole = schedstat_delta(s0, s2, cpus);
  EXPECT_EQ(sum_schedstat({schedstat_delta(s0, s1, cpus), schedstat_delta(s1, s2, cpus)}).dump(),
            whole.dump());
  EXPECT_EQ(whole["cpus"]["0"]["domains"][1]["span"], (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  // A counter a window could not count, or domains rebuilt in one, are unavailable over the span.
  auto back = s2;
  const_cast<SchedstatCpu&>(*back.find(1)).pcount = 0;
  const_cast<SchedstatCpu&>(*back.find(4)).domains.pop_back();
  const nlohmann::json sum =
      sum_schedstat({schedstat_delta(s0, s1, cpus), schedstat_delta(s1, back, cpus)});
  EXPECT_TRUE(sum["cpus"]["1"]["pcount"].contains("unavailable")) << sum["cpus"]["1"];
  EXPECT_TRUE(sum["cpus"]["4"]["domains"].contains("unavailable")) << sum["cpus"]["4"];
  EXPECT_EQ(sum["cpus"]["0"], whole["cpus"]["0"]);
  // A repetition that could not read /proc/schedstat: the sum of the others would pass for the
  // case's, so there is none.
  EXPECT_EQ(sum_schedstat({schedstat_delta(s0, s1, cpus),
                           {{"unavailable", "no /proc/schedstat"}},
                           schedstat_delta(s1, s2, cpus)}),
            nlohmann::json({{"unavailable", "repetition 2 of 3: no /proc/schedstat"}}));
}

TEST(SchedstatRead, FromATreeWithTheSysctl) {
  std::string why;
  auto snap = read_schedstat(&why, sysroot_path("x86-i7-2600-linux-3.13"));
  ASSERT_TRUE(snap) << why;
  EXPECT_EQ(snap->version, 15);
  EXPECT_EQ(snap->cpus.size(), 8u);
  EXPECT_EQ(snap->find(0)->sched_count, 43679845u);
  EXPECT_EQ(snap->schedstats_enabled, true);
  // A fragment without a header, and no kernel.sched_schedstats to read.
  auto spr = read_schedstat(&why, sysroot_path("x86-spr-snc-on"));
  ASSERT_TRUE(spr) << why;
  EXPECT_EQ(spr->version, 0);
  EXPECT_EQ(spr->schedstats_enabled, std::nullopt);
  ASSERT_EQ(spr->cpus.size(), 1u);
  EXPECT_EQ(spr->cpus[0].domains.size(), 4u);
}

TEST(SchedstatRead, MissingOrMalformedSaysWhy) {
  ScratchRoot none;
  std::string why;
  EXPECT_FALSE(read_schedstat(&why, none.root()));
  EXPECT_NE(why.find(none.root() + "/proc/schedstat absent"), std::string::npos) << why;
  EXPECT_NE(why.find("CONFIG_SCHEDSTATS"), std::string::npos) << why;
  ScratchRoot bad;
  bad.write("/proc/schedstat", "version 18");
  EXPECT_FALSE(read_schedstat(&why, bad.root()));
  EXPECT_NE(why.find(bad.root() + "/proc/schedstat:1: schedstat version 18"), std::string::npos)
      << why;
}

TEST(SchedstatLive, SnapshotOrReason) {
  std::string why;
  auto snap = read_schedstat(&why);
  if (!snap) {
    EXPECT_FALSE(why.empty());
    std::ifstream probe("/proc/schedstat");
    if (!probe) {
      EXPECT_NE(why.find("CONFIG_SCHEDSTATS"), std::string::npos) << why;
    }
    GTEST_SKIP() << "no /proc/schedstat here: " << why;
  }
  EXPECT_GE(snap->version, 15);
  EXPECT_FALSE(snap->cpus.empty());
}

// ---------------------------------------------------------------------------------------------
// Sched domains

TEST(SdFlags, TableForRelease) {
  EXPECT_EQ(sd_flags_table_for_release("4.15.0-112-generic"), SdFlagsTable::kUpTo5_7);
  EXPECT_EQ(sd_flags_table_for_release("5.4.0-42-generic"), SdFlagsTable::kUpTo5_7);
  EXPECT_EQ(sd_flags_table_for_release("5.7.19"), SdFlagsTable::kUpTo5_7);
  EXPECT_EQ(sd_flags_table_for_release("5.8.0"), SdFlagsTable::k5_8To5_9);
  EXPECT_EQ(sd_flags_table_for_release("5.9.0-rc2+"), SdFlagsTable::k5_8To5_9);
  EXPECT_EQ(sd_flags_table_for_release("5.10.1"), std::nullopt);
  EXPECT_EQ(sd_flags_table_for_release("6.18.44-fc-v769"), std::nullopt);
  EXPECT_EQ(sd_flags_table_for_release("garbage"), std::nullopt);
}

TEST(SdFlags, DecodeBothTablesAndRejectUnknownBits) {
  // Fixtures README: POWER9 2391 (5.8-5.9 table) and the sysctl capture's 4783 (pre-5.8 table).
  EXPECT_EQ(decode_sd_flags(2391, SdFlagsTable::k5_8To5_9),
            (std::vector<std::string>{"SD_BALANCE_NEWIDLE", "SD_BALANCE_EXEC", "SD_BALANCE_FORK",
                                      "SD_WAKE_AFFINE", "SD_SHARE_CPUCAPACITY",
                                      "SD_SHARE_PKG_RESOURCES", "SD_PREFER_SIBLING"}));
  EXPECT_EQ(decode_sd_flags(4783, SdFlagsTable::kUpTo5_7),
            (std::vector<std::string>{"SD_LOAD_BALANCE", "SD_BALANCE_NEWIDLE", "SD_BALANCE_EXEC",
                                      "SD_BALANCE_FORK", "SD_WAKE_AFFINE", "SD_SHARE_CPUCAPACITY",
                                      "SD_SHARE_PKG_RESOURCES", "SD_PREFER_SIBLING"}));
  EXPECT_EQ(decode_sd_flags(0x4000, SdFlagsTable::kUpTo5_7), (std::vector<std::string>{"SD_NUMA"}));
  EXPECT_EQ(decode_sd_flags(0x2000, SdFlagsTable::k5_8To5_9),
            (std::vector<std::string>{"SD_NUMA"}));
  EXPECT_THROW(decode_sd_flags(0x4000, SdFlagsTable::k5_8To5_9), std::invalid_argument);
  EXPECT_THROW(decode_sd_flags(0x8000, SdFlagsTable::kUpTo5_7), std::invalid_argument);
}

TEST(SchedDomains, JunoAllFiles) {
  auto d = domains_at("arm64-juno", 1);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].cpu, 1);
  EXPECT_EQ(d[0].domain, 0);
  EXPECT_EQ(d[0].name, "CLS");
  EXPECT_EQ(d[0].flags.size(), 6u);
  EXPECT_TRUE(has(d[0].flags, "SD_SHARE_PKG_RESOURCES"));
  EXPECT_EQ(d[0].other.at("busy_factor"), "16");
  EXPECT_EQ(d[0].other.at("max_newidle_lb_cost"), "14907");
  EXPECT_EQ(d[1].name, "DIE");
  EXPECT_TRUE(has(d[1].flags, "SD_ASYM_CPUCAPACITY_FULL"));
  EXPECT_FALSE(has(d[1].flags, "SD_SHARE_PKG_RESOURCES"));
  EXPECT_EQ(d[1].other.at("max_interval"), "12");
  auto j = to_json(d[1]);
  EXPECT_EQ(j["max_interval"], 12);
  EXPECT_EQ(j["name"], "DIE");
  // A CPU the tree does not list.
  std::string why;
  EXPECT_FALSE(read_sched_domains({0}, &why, sysroot_path("arm64-juno")));
  EXPECT_NE(why.find("lists no domains"), std::string::npos) << why;
}

TEST(SchedDomains, KunpengLevelsAndTrailingSpace) {
  auto d = domains_at("arm64-kunpeng920", 0);
  ASSERT_EQ(d.size(), 5u);
  std::vector<std::string> names;
  std::vector<int> levels;
  for (const auto& e : d) {
    EXPECT_EQ(e.cpu, 0);
    names.push_back(e.name);
    levels.push_back(e.level.value_or(-1));
    for (const auto& f : e.flags) EXPECT_FALSE(f.empty());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"CLS", "MC", "NUMA", "NUMA", "NUMA"}));
  EXPECT_EQ(levels, (std::vector<int>{1, 2, 5, 6, 7}));
  EXPECT_TRUE(has(d[0].flags, "SD_CLUSTER"));
  EXPECT_EQ(d[0].flags.back(), "SD_PREFER_SIBLING");    // the kernel's trailing space is not a flag
  EXPECT_FALSE(has(d[1].flags, "SD_BALANCE_NEWIDLE"));  // relax_domain_level=2
  EXPECT_TRUE(has(d[4].flags, "SD_OVERLAP"));
  EXPECT_TRUE(has(d[4].flags, "SD_NUMA"));
}

TEST(SchedDomains, SapphireRapidsSncOnAndOff) {
  auto on = domains_at("x86-spr-snc-on", 0);
  auto off = domains_at("x86-spr-snc-off", 0);
  ASSERT_EQ(on.size(), 4u);
  ASSERT_EQ(off.size(), 3u);
  EXPECT_EQ(on[0].name, "SMT");
  EXPECT_TRUE(has(on[0].flags, "SD_SHARE_CPUCAPACITY"));
  EXPECT_FALSE(has(on[1].flags, "SD_SHARE_CPUCAPACITY"));
  EXPECT_EQ(on[3].name, "NUMA");
  EXPECT_EQ(off[2].name, "NUMA");
  EXPECT_TRUE(has(off[2].flags, "SD_SERIALIZE"));
}

TEST(SchedDomains, XeonGroupsFlagsAndLbCost) {
  auto d = domains_at("x86-xeon-e5-2680v3", 0);
  ASSERT_EQ(d.size(), 3u);
  ASSERT_TRUE(d[0].groups_flags);
  EXPECT_TRUE(d[0].groups_flags->empty());  // SMT's groups are single CPUs: an empty line
  ASSERT_TRUE(d[1].groups_flags);
  EXPECT_TRUE(has(*d[1].groups_flags, "SD_SHARE_CPUCAPACITY"));  // MC's groups are SMT cores
  EXPECT_FALSE(has(d[1].flags, "SD_SHARE_CPUCAPACITY"));
  EXPECT_EQ(d[0].other.at("max_newidle_lb_cost"), "2236");
  EXPECT_EQ(d[2].other.at("max_newidle_lb_cost"), "4590");
}

TEST(SchedDomains, EpycFlagsOnly) {
  auto d = domains_at("x86-epyc", 0);
  ASSERT_EQ(d.size(), 4u);  // SMT, MC, PKG, NUMA
  EXPECT_TRUE(d[0].name.empty());
  EXPECT_TRUE(has(d[0].flags, "SD_SHARE_CPUCAPACITY"));
  EXPECT_TRUE(has(d[1].flags, "SD_SHARE_LLC"));  // renamed from SD_SHARE_PKG_RESOURCES in 6.10
  EXPECT_FALSE(has(d[2].flags, "SD_SHARE_LLC"));
  EXPECT_TRUE(has(d[3].flags, "SD_NUMA"));
}

TEST(SchedDomains, Power9ProcSysNumericFlagsByTheTreesRelease) {
  auto smt8 = domains_at("power9-lpar-smt8", 0);  // osrelease 5.9: the 5.8-5.9 table
  ASSERT_EQ(smt8.size(), 4u);
  EXPECT_EQ(smt8[1].name, "CACHE");
  EXPECT_EQ(smt8[0].flags_value, 2391u);
  EXPECT_TRUE(has(smt8[0].flags, "SD_SHARE_CPUCAPACITY"));
  EXPECT_FALSE(has(smt8[1].flags, "SD_SHARE_CPUCAPACITY"));  // 2327
  EXPECT_TRUE(has(smt8[1].flags, "SD_SHARE_PKG_RESOURCES"));
  EXPECT_EQ(smt8[3].flags, (std::vector<std::string>{"SD_BALANCE_NEWIDLE", "SD_SERIALIZE",
                                                     "SD_OVERLAP", "SD_NUMA"}));  // 12801
  auto smt1 = domains_at("power9-lpar-smt1", 0);
  ASSERT_EQ(smt1.size(), 2u);
  EXPECT_EQ(smt1[0].name, "DIE");
  EXPECT_EQ(smt1[0].flags.size(), 5u);  // 2071
}

TEST(SchedDomains, SysctlTreePre58) {
  auto d = domains_at("x86-pre58-cpu28", 28);  // osrelease 5.4: SD_LOAD_BALANCE at bit 0
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].cpu, 28);
  EXPECT_EQ(d[0].name, "SMT");
  EXPECT_EQ(d[0].flags.size(), 8u);  // 4783
  EXPECT_TRUE(has(d[0].flags, "SD_LOAD_BALANCE"));
  EXPECT_EQ(d[1].name, "MC");
  EXPECT_FALSE(has(d[1].flags, "SD_SHARE_CPUCAPACITY"));  // 4655
  EXPECT_EQ(d[0].other.at("imbalance_pct"), "110");
  EXPECT_EQ(d[1].other.at("max_newidle_lb_cost"), "2565108");
}

TEST(SchedDomains, UnparsableFilesAndNumbersWithoutATable) {
  ScratchRoot t;
  t.write("/sys/kernel/debug/sched/domains/cpu0/domain0/flags", "SD_FOO bar");
  t.write("/sys/kernel/debug/sched/domains/cpu0/domain0/level", "high");
  t.write("/sys/kernel/debug/sched/domains/cpu0/domain1/flags", "12801");
  std::string why;
  auto d = read_sched_domains({0}, &why, t.root());
  ASSERT_TRUE(d) << why;
  ASSERT_EQ(d->size(), 2u);
  // A file that does not parse is noted with its path and why; the others are read.
  EXPECT_NE((*d)[0].other.at("flags").find("\"bar\" is not a sched domain flag"),
            std::string::npos);
  EXPECT_NE((*d)[0].other.at("level").find("domain0/level: level is not a number: \"high\""),
            std::string::npos)
      << (*d)[0].other.at("level");
  // A numeric flags file without a release to pick its table: the number, no names guessed.
  EXPECT_TRUE((*d)[1].flags.empty());
  EXPECT_EQ((*d)[1].flags_value, 12801u);
}

TEST(SchedDomains, ReasonsWhenThereIsNoTree) {
  ScratchRoot none;
  std::string why;
  EXPECT_FALSE(read_sched_domains({0}, &why, none.root()));
  EXPECT_EQ(why, none.root() + "/sys/kernel/debug absent");
  ScratchRoot quiet;  // debugfs mounted, sched/verbose N: the domains are hidden
  quiet.write("/sys/kernel/debug/sched/verbose", "N");
  EXPECT_FALSE(read_sched_domains({0}, &why, quiet.root()));
  EXPECT_NE(why.find("exists only while /sys/kernel/debug/sched/verbose is Y"), std::string::npos)
      << why;
}

TEST(SchedDomainsLive, ReadOrReason) {
  std::string why;
  auto d = read_sched_domains({0}, &why);
  if (!d) {
    EXPECT_FALSE(why.empty());
    GTEST_SKIP() << "sched domains not readable here: " << why;
  }
  EXPECT_FALSE(d->empty());
  for (const auto& e : *d) EXPECT_EQ(e.cpu, 0);
}

// ---------------------------------------------------------------------------------------------
// sched features

TEST(SchedFeatures, EevdfCfsAndOutOfTree) {
  auto read = [](const std::string& name) {
    const std::string path = capture("features/" + name);
    return parse_sched_features(fixture_text(path), path);
  };
  auto find = [](const std::vector<SchedFeature>& v,
                 const std::string& name) -> const SchedFeature* {
    for (const auto& f : v) {
      if (f.name == name) return &f;
    }
    return nullptr;
  };
  auto eevdf = read("v6.16-eevdf-marvell-uniprocessor.txt");
  EXPECT_EQ(eevdf.size(), 26u);
  EXPECT_EQ(eevdf.front().name, "PLACE_LAG");
  EXPECT_TRUE(eevdf.front().enabled);
  ASSERT_TRUE(find(eevdf, "NEXT_BUDDY"));
  EXPECT_FALSE(find(eevdf, "NEXT_BUDDY")->enabled);
  EXPECT_TRUE(find(eevdf, "DELAY_DEQUEUE")->enabled);
  EXPECT_TRUE(find(eevdf, "NONTASK_CAPACITY")->enabled);  // "NON", not a "NO_" prefix
  EXPECT_FALSE(find(eevdf, "LATENCY_WARN")->enabled);

  auto cfs = read("pre-eevdf-cfs-x86-intel-server-ubuntu2204-2023.txt");
  EXPECT_EQ(cfs.size(), 26u);
  EXPECT_TRUE(find(cfs, "GENTLE_FAIR_SLEEPERS")->enabled);
  EXPECT_FALSE(find(cfs, "SIS_PROP")->enabled);
  EXPECT_EQ(find(cfs, "PLACE_LAG"), nullptr);

  auto rfc = read("v6.5-rc2-cfs-power9-8335gtw-with-shared_runq-rfc.txt");
  EXPECT_EQ(rfc.size(), 28u);
  EXPECT_EQ(rfc.back().name, "SHARED_RUNQ");
  EXPECT_TRUE(rfc.back().enabled);
}

TEST(SchedFeatures, ReadFromATree) {
  std::string why;
  auto f = read_sched_features(&why, sysroot_path("arm64-marvell-6.16"));
  ASSERT_TRUE(f) << why;
  EXPECT_EQ(f->size(), 26u);
  EXPECT_EQ(f->front().name, "PLACE_LAG");
  ScratchRoot none;
  EXPECT_FALSE(read_sched_features(&why, none.root()));
  EXPECT_EQ(why, none.root() + "/sys/kernel/debug absent");
}

TEST(SchedFeatures, Malformed) {
  expect_error([] { parse_sched_features("PLACE_LAG bad-name\n", "f"); },
               {"f:1", "\"bad-name\" is not a sched feature"});
  expect_error([] { parse_sched_features("NO_\n", "f"); }, {"f:1"});
  expect_error([] { parse_sched_features("\n", "f"); }, {"f", "no sched features"});
}

// ---------------------------------------------------------------------------------------------
// cpuidle

std::vector<CpuidleState> cpuidle_at(const std::string& machine, int cpu) {
  std::string why;
  auto st = read_cpuidle_states(cpu, &why, sysroot_path(machine));
  if (!st) throw std::runtime_error(why);
  return *st;
}

TEST(Cpuidle, IcelakeStates1To3AllFiles) {
  auto st = cpuidle_at("x86-icelake-i7-1065g7", 0);
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].index, 1);
  EXPECT_EQ(st[0].name, "C1_ACPI");
  EXPECT_EQ(st[0].latency_us, 1u);
  EXPECT_EQ(st[2].name, "C3_ACPI");
  EXPECT_EQ(st[2].desc, "ACPI FFH MWAIT 0x60");
  EXPECT_EQ(st[2].latency_us, 1048u);
  EXPECT_EQ(st[2].residency_us, 3144u);
  EXPECT_EQ(st[2].disabled, false);
  EXPECT_EQ(st[2].default_status, "enabled");
  EXPECT_EQ(st[2].usage, 24205u);
  EXPECT_EQ(st[1].time_us, 144893598u);
  for (size_t i = 1; i < st.size(); ++i) EXPECT_GT(*st[i].latency_us, *st[i - 1].latency_us);
}

TEST(Cpuidle, CometlakeResidencyAndLatencyOnly) {
  auto st = cpuidle_at("x86-cometlake-i5-10600k", 1);
  ASSERT_EQ(st.size(), 4u);
  EXPECT_EQ(st[0].latency_us, 0u);  // POLL
  EXPECT_EQ(st[3].latency_us, 1034u);
  EXPECT_EQ(st[3].residency_us, 3102u);
  EXPECT_TRUE(st[3].name.empty());
  EXPECT_FALSE(st[3].disabled);
  auto j = to_json(st[3]);
  EXPECT_EQ(j["latency_us"], 1034);
  ASSERT_TRUE(j["disabled"].contains("unavailable"));
  EXPECT_NE(j["disabled"]["unavailable"].get<std::string>().find("state3/disable"),
            std::string::npos);
  std::string why;
  EXPECT_FALSE(read_cpuidle_states(0, &why, sysroot_path("x86-cometlake-i5-10600k")));
  EXPECT_NE(why.find("cpu0/cpuidle absent: no cpuidle driver"), std::string::npos) << why;
}

TEST(Cpuidle, ServerNamesAndDisabledStates) {
  auto st = cpuidle_at("x86-intel-server-tuned", 0);
  ASSERT_EQ(st.size(), 4u);
  std::vector<std::string> names;
  std::vector<bool> disabled;
  for (const auto& s : st) {
    names.push_back(s.name);
    disabled.push_back(s.disabled.value());
    EXPECT_FALSE(s.latency_us);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"POLL", "C1", "C1E", "C6"}));
  EXPECT_EQ(disabled, (std::vector<bool>{false, true, true, true}));
}

TEST(Cpuidle, Arm64PsciAllFiles) {
  auto st = cpuidle_at("arm64-psci-24cpu", 0);
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].name, "WFI");
  EXPECT_EQ(st[0].desc, "ARM WFI");
  EXPECT_EQ(st[0].latency_us, 1u);
  EXPECT_EQ(st[2].name, "cluster-sleep-0");
  EXPECT_EQ(st[2].latency_us, 1600u);
  EXPECT_EQ(st[2].residency_us, 2500u);
  EXPECT_EQ(st[2].usage, 0u);  // the state's own usage, not its s2idle/usage
  EXPECT_TRUE(st[2].unreadable.empty());
}

TEST(Cpuidle, MalformedFilesAreNotedNotFatal) {
  ScratchRoot t;
  t.write("/sys/devices/system/cpu/cpu0/cpuidle/state1/latency", "abc");
  t.write("/sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "2");
  t.write("/sys/devices/system/cpu/cpu0/cpuidle/state1/name", "C1");
  std::string why;
  auto st = read_cpuidle_states(0, &why, t.root());
  ASSERT_TRUE(st) << why;
  ASSERT_EQ(st->size(), 1u);
  const CpuidleState& s = st->front();
  EXPECT_EQ(s.name, "C1");
  EXPECT_NE(s.unreadable.at("latency").find("state1/latency: latency is not a number: \"abc\""),
            std::string::npos)
      << s.unreadable.at("latency");
  EXPECT_NE(s.unreadable.at("disable").find("is not 0 or 1"), std::string::npos);
  ScratchRoot empty;
  empty.write("/sys/devices/system/cpu/cpu0/cpuidle/driver/name", "none");
  EXPECT_FALSE(read_cpuidle_states(0, &why, empty.root()));
  EXPECT_NE(why.find("has no stateN directories"), std::string::npos) << why;
}

TEST(CpuidleLive, StatesOrReason) {
  std::string why;
  auto st = read_cpuidle_states(0, &why);
  if (!st) {
    EXPECT_FALSE(why.empty());
    GTEST_SKIP() << why;
  }
  ASSERT_FALSE(st->empty());
  for (const auto& s : *st) {
    EXPECT_FALSE(s.name.empty());
    EXPECT_TRUE(s.latency_us.has_value());
    EXPECT_TRUE(s.disabled.has_value());
  }
}

// ---------------------------------------------------------------------------------------------
// cpufreq

CpufreqPolicy cpufreq_at(const std::string& machine, int cpu) {
  std::string why;
  auto p = read_cpufreq_policy(cpu, &why, sysroot_path(machine));
  if (!p) throw std::runtime_error(why);
  return *p;
}

TEST(Cpufreq, AmdPstateEpp) {
  auto p = cpufreq_at("x86-ryzen9-5950x", 0);
  EXPECT_EQ(p.driver, "amd-pstate-epp");
  EXPECT_EQ(p.governor, "powersave");
  EXPECT_EQ(p.scaling_min_khz, 1748178u);
  EXPECT_EQ(p.scaling_max_khz, 5276318u);
  EXPECT_EQ(p.cpuinfo_min_khz, 572131u);
  EXPECT_EQ(p.boost, true);
  EXPECT_EQ(p.energy_performance_preference, "balance_performance");
  EXPECT_EQ(p.related_cpus, (std::vector<int>{0}));
  EXPECT_EQ(p.available_governors, (std::vector<std::string>{"performance", "powersave"}));
  auto j = to_json(p);
  EXPECT_EQ(j["min_khz"], 1748178);
  EXPECT_EQ(j["governor"], "powersave");
}

TEST(Cpufreq, CpufreqDtClusterPolicyThroughEveryCpusLink) {
  for (int cpu = 0; cpu < 4; ++cpu) {
    auto p = cpufreq_at("arm64-cpufreq-dt-cluster", cpu);
    EXPECT_EQ(p.driver, "cpufreq-dt");
    EXPECT_EQ(p.governor, "schedutil");
    EXPECT_EQ(p.scaling_min_khz, 208000u);
    EXPECT_EQ(p.scaling_max_khz, 960000u);
    EXPECT_EQ(p.related_cpus, range(0, 3));
    EXPECT_EQ(p.affected_cpus, range(0, 3));
    EXPECT_EQ(p.boost, false);
    EXPECT_EQ(p.available_governors.size(), 4u);
  }
  std::string why;
  EXPECT_FALSE(read_cpufreq_policy(4, &why, sysroot_path("arm64-cpufreq-dt-cluster")));
  EXPECT_NE(why.find("cpu4/cpufreq absent: no cpufreq driver"), std::string::npos) << why;
}

TEST(Cpufreq, IntelPassiveAndActive) {
  auto passive = cpufreq_at("x86-i7-4710hq", 0);
  EXPECT_EQ(passive.driver, "intel_cpufreq");
  EXPECT_EQ(passive.governor, "ondemand");
  EXPECT_EQ(passive.scaling_min_khz, 800000u);
  EXPECT_EQ(passive.scaling_max_khz, 3500000u);
  EXPECT_FALSE(passive.boost);
  EXPECT_NE(passive.unreadable.at("boost").find("open "), std::string::npos);
  auto active = cpufreq_at("x86-intel-pstate-hwp", 0);
  EXPECT_EQ(active.driver, "intel_pstate");
  EXPECT_EQ(active.governor, "powersave");
  EXPECT_EQ(active.energy_performance_preference, "performance");
  EXPECT_EQ(active.cpuinfo_max_khz, 5500000u);
  EXPECT_EQ(active.scaling_cur_khz, 5511247u);
}

TEST(Cpufreq, MalformedFilesAreNotedNotFatal) {
  ScratchRoot t;
  t.write("/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq", "fast");
  t.write("/sys/devices/system/cpu/cpu0/cpufreq/related_cpus", "0 x");
  t.write("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance");
  std::string why;
  auto p = read_cpufreq_policy(0, &why, t.root());
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->governor, "performance");
  EXPECT_FALSE(p->scaling_max_khz);
  EXPECT_NE(p->unreadable.at("scaling_max_freq").find("\"fast\""), std::string::npos);
  EXPECT_NE(p->unreadable.at("related_cpus").find("related_cpus"), std::string::npos);
  EXPECT_TRUE(to_json(*p)["max_khz"].contains("unavailable"));
}

// ---------------------------------------------------------------------------------------------
// /proc/cpuinfo and /proc/stat

CpuInfo cpuinfo_fixture(const std::string& name) {
  const std::string path = local(name);
  return parse_cpuinfo(fixture_text(path), path);
}

TEST(Cpuinfo, X86ModelMicrocodeHypervisorFlag) {
  auto c = cpuinfo_fixture("cpuinfo-x86-kvm-guest-this-vm.txt");
  EXPECT_EQ(c.vendor, "GenuineIntel");
  EXPECT_EQ(c.model, "Intel(R) Xeon(R) Processor");
  EXPECT_EQ(c.microcode, "0x1");
  EXPECT_TRUE(c.hypervisor_flag);
  EXPECT_EQ(c.processors, 1);
}

TEST(Cpuinfo, Arm64MidrFields) {
  auto c = cpuinfo_fixture("cpuinfo-arm64-format.txt");
  EXPECT_EQ(c.vendor, "ARM");
  EXPECT_EQ(c.model, "ARM Neoverse-N1 r3p1 (implementer 0x41 part 0xd0c)");
  EXPECT_FALSE(c.microcode);
  EXPECT_FALSE(c.hypervisor_flag);
  EXPECT_EQ(c.processors, 2);
  // An unknown part keeps the codes.
  auto u = parse_cpuinfo("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xfff\n", "u");
  EXPECT_EQ(u.model, "ARM implementer 0x41 part 0xfff");
}

TEST(Cpuinfo, PowerpcLpar) {
  auto c = cpuinfo_fixture("cpuinfo-ppc64le-format.txt");
  EXPECT_EQ(c.vendor, "IBM");
  EXPECT_EQ(c.model, "POWER9 (architected), altivec supported, revision 2.2 (pvr 004e 0202)");
  EXPECT_EQ(c.platform, "pSeries");
  EXPECT_EQ(c.machine, "CHRP IBM,9008-22L");
  EXPECT_EQ(c.processors, 2);
}

TEST(Cpuinfo, ReadFromATree) {
  std::string why;
  auto c = read_cpuinfo(&why, sysroot_path("x86-kvm-guest"));
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(c->model, "Intel(R) Xeon(R) Processor");
  EXPECT_TRUE(c->hypervisor_flag);
  ScratchRoot none;
  EXPECT_FALSE(read_cpuinfo(&why, none.root()));
  EXPECT_EQ(why.rfind("open " + none.root() + "/proc/cpuinfo: ", 0), 0u) << why;
}

TEST(Cpuinfo, Malformed) {
  expect_error([] { parse_cpuinfo("processor\t: 0\nfoo\t: bar\n", "ci"); },
               {"ci", "unknown /proc/cpuinfo layout"});
  expect_error([] { parse_cpuinfo("CPU implementer\t: zz\nCPU part\t: 0xd0c\n", "ci"); },
               {"ci", "CPU implementer"});
}

TEST(ProcStat, BusyAndTotalJiffies) {
  // proc(5): user nice system idle iowait irq softirq steal guest guest_nice
  const std::string text =
      "cpu  30 0 10 100 5 0 0 0 0 0\n"
      "cpu0 20 0 5 40 5 0 0 0 0 0\n"
      "cpu1 10 0 5 60 0 0 0 3 7 0\n"
      "intr 1 2 3\n";
  auto t = parse_proc_stat_cpu_times(text, "stat");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.at(0), (std::pair<uint64_t, uint64_t>{25, 70}));
  EXPECT_EQ(t.at(1), (std::pair<uint64_t, uint64_t>{18, 78}));  // guest is already in user
  expect_error([] { parse_proc_stat_cpu_times("cpu0 1 2\n", "stat"); }, {"stat:1"});
  expect_error([] { parse_proc_stat_cpu_times("cpu0 1 2 3 x 5 6 7 8\n", "stat"); },
               {"stat:1", "\"x\""});
}

}  // namespace
}  // namespace wb
