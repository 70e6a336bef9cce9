// `wakebench run --ab` (common/system/settings.h): SPEC parsing, the A/B schedule, and the guard's
// I/O against a fake root tree (a temp dir with sys/kernel/debug and proc/sys/kernel files).
#include "common/system/settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "common/schema/registry.h"
#include "common/schema/run_order.h"
#include "common/system/sched_features.h"
#include "tests/support.h"

namespace {

namespace fs = std::filesystem;
using wb::test::slurp;

std::string parse_error(const std::string& spec) {
  try {
    wb::parse_setting_spec(spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(AbSpec, ParsesEachKind) {
  const wb::SettingSpec f = wb::parse_setting_spec("feature:TTWU_QUEUE=on,off,on");
  EXPECT_EQ(f.kind, wb::SettingKind::kFeature);
  EXPECT_EQ(f.name, "TTWU_QUEUE");
  EXPECT_EQ(f.values, (std::vector<std::string>{"on", "off", "on"}));
  EXPECT_EQ(f.key(), "feature:TTWU_QUEUE");
  EXPECT_EQ(f.token(0), "TTWU_QUEUE");
  EXPECT_EQ(f.token(1), "NO_TTWU_QUEUE");
  const wb::SettingSpec s = wb::parse_setting_spec("sysctl:kernel.sched_x=1,2");
  EXPECT_EQ(s.kind, wb::SettingKind::kSysctl);
  EXPECT_EQ(s.token(1), "2");
  EXPECT_EQ(wb::setting_path(s, "/"), "/proc/sys/kernel/sched_x");
  const wb::SettingSpec d = wb::parse_setting_spec("debugfs:sched/base_slice_ns=3000000,700000");
  EXPECT_EQ(d.kind, wb::SettingKind::kDebugfs);
  EXPECT_EQ(wb::setting_path(d, "/"), "/sys/kernel/debug/sched/base_slice_ns");
  // Equal values: the A/A through the switch.
  EXPECT_EQ(wb::parse_setting_spec("feature:TTWU_QUEUE=on,on").values.size(), 2u);
}

TEST(AbSpec, EachBadSpecIsOneLineNamingIt) {
  const std::map<std::string, std::string> bad = {
      {"knob:X=1,2", "--ab knob:X=1,2: unknown kind \"knob\" (feature, sysctl or debugfs)"},
      {"sysctl:kernel.x",
       "--ab sysctl:kernel.x: expected KIND:NAME=V1,V2[,...] (KIND feature, "
       "sysctl or debugfs)"},
      {"sysctl:kernel.x=1",
       "--ab sysctl:kernel.x=1: 1 value; an A/B needs 2 or more (equal "
       "values are an A/A)"},
      {"feature:TTWU_QUEUE=on,yes",
       "--ab feature:TTWU_QUEUE=on,yes: feature value \"yes\" is not on or off"},
      {"feature:ttwu=on,off",
       "--ab feature:ttwu=on,off: \"ttwu\" is not a sched feature name ([A-Z0-9_])"},
      {"sysctl:kernel..x=1,2",
       "--ab sysctl:kernel..x=1,2: \"kernel..x\" is not a sysctl name (kernel.sched_x)"},
      {"debugfs:sched/../../etc/passwd=1,2",
       "--ab debugfs:sched/../../etc/passwd=1,2: \"sched/../../etc/passwd\" is not a path under "
       "debugfs (sched/base_slice_ns)"},
      {"sysctl:kernel.x=1,,2", "--ab sysctl:kernel.x=1,,2: an empty value"},
      {"sysctl:kernel.x=1,a b",
       "--ab sysctl:kernel.x=1,a b: value \"a b\" is not made of [A-Za-z0-9._:=/+-]"},
  };
  for (const auto& [spec, want] : bad) EXPECT_EQ(parse_error(spec), want) << spec;
}

TEST(AbSpec, ZipsSpecsOfOneLengthOnly) {
  const wb::AbPlan plan =
      wb::parse_ab_plan({"feature:TTWU_QUEUE=on,off", "sysctl:kernel.sched_x=5,6"});
  EXPECT_EQ(plan.settings, 2);
  EXPECT_EQ(plan.label(1), "TTWU_QUEUE=off,sched_x=6");
  EXPECT_EQ(plan.values(0),
            (wb::SettingValues{{"feature:TTWU_QUEUE", "on"}, {"sysctl:kernel.sched_x", "5"}}));
  try {
    wb::parse_ab_plan({"feature:TTWU_QUEUE=on,off", "sysctl:kernel.sched_x=5,6,7"});
    FAIL() << "unequal K accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "--ab sysctl:kernel.sched_x=5,6,7: 3 values, but --ab feature:TTWU_QUEUE=on,off "
                 "has 2 (zipped SPECs need as many each)");
  }
  EXPECT_THROW(wb::parse_ab_plan({"sysctl:kernel.sched_x=1,2", "sysctl:kernel.sched_x=3,4"}),
               std::invalid_argument);
  EXPECT_EQ(wb::parse_ab_plan({}).settings, 0);
}

std::string plan_error(const std::string& spec, bool any_setting) {
  try {
    wb::parse_ab_plan({spec}, any_setting);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

// The scheduler's own settings (registry/registry.json "scheduler_settings"), and any other only
// when the run asks (--ab-any-setting). Before, --ab switched kernel.core_pattern, kernel.panic,
// net.ipv4.ip_forward, ... as readily as a sched_ knob.
TEST(AbSpec, TakesOnlyTheSchedulersSettingsUnlessAsked) {
  for (const char* ok :
       {"feature:TTWU_QUEUE=on,off", "sysctl:kernel.sched_rr_timeslice_ms=30,100",
        "sysctl:kernel.numa_balancing=0,1", "sysctl:kernel.numa_balancing_scan_delay_ms=1,2",
        "debugfs:sched/base_slice_ns=1,2", "debugfs:sched/domains/cpu0/flags=1,2"})
    EXPECT_EQ(plan_error(ok, false), "(accepted)") << ok;
  for (const char* other :
       {"sysctl:kernel.core_pattern=a,b", "sysctl:kernel.panic=0,1", "sysctl:kernel.hostname=a,b",
        "sysctl:kernel.randomize_va_space=0,2", "sysctl:net.ipv4.ip_forward=0,1",
        "sysctl:fs.suid_dumpable=0,1", "sysctl:kernel.sched=1,2", "debugfs:schedx/y=1,2",
        "debugfs:tracing/tracing_on=0,1"}) {
    EXPECT_NE(plan_error(other, false).find(" is not one of the scheduler's settings"),
              std::string::npos)
        << other;
    EXPECT_EQ(plan_error(other, true), "(accepted)") << other;
  }
  EXPECT_EQ(plan_error("sysctl:kernel.panic=0,1", false),
            "--ab sysctl:kernel.panic=0,1: kernel.panic is not one of the scheduler's settings "
            "(debugfs sched/*; feature *; sysctl kernel.sched_*, kernel.numa_balancing*); "
            "--ab-any-setting switches any setting");
  // Values keep their character rule either way.
  EXPECT_EQ(plan_error("sysctl:kernel.panic=0,a b", true),
            "--ab sysctl:kernel.panic=0,a b: value \"a b\" is not made of [A-Za-z0-9._:=/+-]");
}

TEST(AbSpec, TheListIsTheRegistrysAndABadOneIsRefused) {
  EXPECT_EQ(wb::registry().scheduler_settings_text(),
            "debugfs sched/*; feature *; sysctl kernel.sched_*, kernel.numa_balancing*");
  auto error = [](const std::string& settings) {
    try {
      wb::parse_registry(R"({"policies": [], "mechanisms": [])" + settings + "}");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(error(""), "registry: \"scheduler_settings\" is not an object");
  EXPECT_EQ(error(R"(, "scheduler_settings": {"sysctl": "kernel.sched_*"})"),
            "scheduler_settings.sysctl is not a list");
  for (const char* bad : {"kernel.sched_", "kernel.*sched*", "", "*x"})
    EXPECT_EQ(error(R"(, "scheduler_settings": {"sysctl": [")" + std::string(bad) + "\"]}"),
              "scheduler_settings.sysctl[0]: not a pattern ending in its only \"*\"")
        << bad;
  const wb::Registry r = wb::parse_registry(
      R"({"policies": [], "mechanisms": [], "scheduler_settings": {"sysctl": ["a.b*"]}})");
  EXPECT_TRUE(r.scheduler_setting("sysctl", "a.bc"));
  EXPECT_FALSE(r.scheduler_setting("sysctl", "a.c"));
  EXPECT_FALSE(r.scheduler_setting("debugfs", "a.bc")) << "a kind not listed takes nothing";
}

// Each case's round r runs once under every setting; the cases' order is the run's interleaved
// order; the settings' order is drawn per round, not fixed.
TEST(AbSchedule, RunsEveryRoundOnceUnderEverySetting) {
  const std::vector<int> reps = {3, 0, 5};
  const int K = 3;
  const auto steps = wb::ab_schedule(reps, K, 42);
  std::map<std::pair<size_t, int>, std::multiset<int>> seen;
  std::vector<size_t> cases;
  std::set<std::vector<int>> orders;
  std::vector<int> order;
  for (const wb::AbStep& s : steps) {
    seen[{s.case_index, s.round}].insert(s.setting);
    order.push_back(s.setting);
    if (order.size() == K) {
      orders.insert(order);
      cases.push_back(s.case_index);
      order.clear();
    }
  }
  EXPECT_EQ(steps.size(), (3u + 5u) * K);
  for (size_t i = 0; i < reps.size(); ++i)
    for (int r = 0; r < reps[i]; ++r)
      EXPECT_EQ((seen[{i, r}]), (std::multiset<int>{0, 1, 2})) << i << " round " << r;
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(cases, wb::interleaved_order(reps, 42));
  EXPECT_GT(orders.size(), 1u) << "the settings ran in one fixed order";
  // Without --ab: the interleaved order itself.
  const auto plain = wb::ab_schedule(reps, 0, 42);
  std::vector<size_t> plain_cases;
  for (const wb::AbStep& s : plain) {
    EXPECT_EQ(s.setting, 0);
    plain_cases.push_back(s.case_index);
  }
  EXPECT_EQ(plain_cases, wb::interleaved_order(reps, 42));
  EXPECT_EQ(wb::ab_schedule(reps, K, 7).size(), steps.size());
}

// A fake root: debugfs features (TTWU_QUEUE on), a sysctl (7) and a debugfs file (3000000).
class FakeRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = wb::test::fresh_test_dir("wb-ab");
    fs::create_directories(root_ / "sys/kernel/debug/sched");
    fs::create_directories(root_ / "proc/sys/kernel");
    put("sys/kernel/debug/sched/features", "PLACE_LAG TTWU_QUEUE NO_HRTICK \n");
    put("sys/kernel/debug/sched/base_slice_ns", "3000000\n");
    put("proc/sys/kernel/sched_fake", "7\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& rel, const std::string& text) { std::ofstream(root_ / rel) << text; }
  std::string get(const std::string& rel) { return slurp(root_ / rel); }
  // TTWU_QUEUE's state as the features file lists it.
  std::string feature() {
    for (const auto& f :
         wb::parse_sched_features(get("sys/kernel/debug/sched/features"), "features"))
      if (f.name == "TTWU_QUEUE") return f.enabled ? "on" : "off";
    return "absent";
  }
  std::string guard_error(const std::vector<std::string>& specs) {
    try {
      wb::SettingsGuard g(wb::parse_ab_plan(specs), root_.string());
    } catch (const std::exception& e) {
      return e.what();
    }
    return "(accepted)";
  }
  fs::path root_;
};

TEST_F(FakeRoot, AppliesReadsBackAndRestores) {
  {
    wb::SettingsGuard g(
        wb::parse_ab_plan({"feature:TTWU_QUEUE=off,off", "sysctl:kernel.sched_fake=1,2",
                           "debugfs:sched/base_slice_ns=700000,3000000"}),
        root_.string());
    EXPECT_EQ(get("proc/sys/kernel/sched_fake"), "7\n") << "the trial writes were undone";
    wb::SettingValues rb;
    EXPECT_EQ(g.apply(1, &rb), "");
    EXPECT_EQ(rb, (wb::SettingValues{{"feature:TTWU_QUEUE", "NO_TTWU_QUEUE"},
                                     {"sysctl:kernel.sched_fake", "2"},
                                     {"debugfs:sched/base_slice_ns", "3000000"}}));
    EXPECT_EQ(feature(), "off");
    EXPECT_EQ(g.apply(0, &rb), "");
    EXPECT_EQ(get("proc/sys/kernel/sched_fake"), "1\n");
    EXPECT_EQ(get("sys/kernel/debug/sched/base_slice_ns"), "700000\n");
  }
  EXPECT_EQ(get("proc/sys/kernel/sched_fake"), "7\n");
  EXPECT_EQ(get("sys/kernel/debug/sched/base_slice_ns"), "3000000\n");
  EXPECT_EQ(feature(), "on");
}

TEST_F(FakeRoot, RestoresAfterAnException) {
  try {
    wb::SettingsGuard g(wb::parse_ab_plan({"sysctl:kernel.sched_fake=1,2"}), root_.string());
    wb::SettingValues rb;
    ASSERT_EQ(g.apply(0, &rb), "");
    ASSERT_EQ(get("proc/sys/kernel/sched_fake"), "1\n");
    throw std::runtime_error("a case went wrong");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(get("proc/sys/kernel/sched_fake"), "7\n");
}

// What is read back is what the file holds: a value that changed behind the run's back is named.
TEST_F(FakeRoot, AReadBackThatDiffersIsTheReason) {
  wb::SettingsGuard g(wb::parse_ab_plan({"sysctl:kernel.sched_fake=1,2"}), root_.string());
  fs::remove(root_ / "proc/sys/kernel/sched_fake");
  fs::create_symlink("/dev/null", root_ / "proc/sys/kernel/sched_fake");
  wb::SettingValues rb;
  EXPECT_EQ(g.apply(1, &rb), "--ab sysctl:kernel.sched_fake=1,2: wrote 2, read back ");
  fs::remove(root_ / "proc/sys/kernel/sched_fake");
  put("proc/sys/kernel/sched_fake", "7\n");
}

TEST_F(FakeRoot, RefusesWhatTheFilesDoNotAllow) {
  EXPECT_EQ(guard_error({"feature:NO_SUCH_FEATURE=on,off"}),
            "--ab feature:NO_SUCH_FEATURE=on,off: feature NO_SUCH_FEATURE is not listed in " +
                (root_ / "sys/kernel/debug/sched/features").string());
  EXPECT_EQ(guard_error({"sysctl:kernel.sched_none=1,2"}),
            "--ab sysctl:kernel.sched_none=1,2: " +
                (root_ / "proc/sys/kernel/sched_none").string() + " does not exist");
  // Not writable, root or not: a read-only sysctl of the running kernel.
  fs::create_symlink("/proc/sys/kernel/osrelease", root_ / "proc/sys/kernel/sched_ro");
  EXPECT_EQ(guard_error({"sysctl:kernel.sched_ro=1,2"}),
            "--ab sysctl:kernel.sched_ro=1,2: " + (root_ / "proc/sys/kernel/sched_ro").string() +
                " is not writable: Permission denied");
  // A value that does not read back as written (here: a file that keeps nothing).
  fs::create_symlink("/dev/null", root_ / "proc/sys/kernel/sched_sink");
  EXPECT_EQ(guard_error({"sysctl:kernel.sched_sink=1,2"}),
            "--ab sysctl:kernel.sched_sink=1,2: wrote 1, read back ");
  fs::remove_all(root_ / "sys/kernel/debug");
  EXPECT_EQ(
      guard_error({"debugfs:sched/base_slice_ns=1,2"}),
      "--ab debugfs:sched/base_slice_ns=1,2: " + (root_ / "sys/kernel/debug").string() + " absent");
  EXPECT_EQ(get("proc/sys/kernel/sched_fake"), "7\n");
}

// The running kernel refuses a value on the trial write: one line, and the sysctl as it was.
TEST(AbLive, AValueTheKernelRefusesIsOneLine) {
  const std::string path = "/proc/sys/kernel/sched_rr_timeslice_ms";
  if (access(path.c_str(), W_OK) != 0) GTEST_SKIP() << path << " is not writable here";
  const std::string before = slurp(path);
  try {
    wb::SettingsGuard g(wb::parse_ab_plan({"sysctl:kernel.sched_rr_timeslice_ms=abc,def"}), "/");
    FAIL() << "abc accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), ("--ab sysctl:kernel.sched_rr_timeslice_ms=abc,def: the kernel refuses "
                            "abc (write " +
                            path + ": Invalid argument)")
                               .c_str());
  }
  EXPECT_EQ(slurp(path), before);
}

}  // namespace
