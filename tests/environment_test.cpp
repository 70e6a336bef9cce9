// Environment capture (live, structure only), warnings derived from fabricated environments built
// from real machines' fixture trees (tests/fixtures/sysroot-*), hypervisor detection, the config
// hash, and the idle latency guard.
#include "common/schema/environment.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>

#include "analysis/predict/predict_results.h"
#include "common/system/cpu_sysfs.h"
#include "common/system/cpuinfo.h"
#include "common/system/environment_capture.h"
#include "common/system/fair_placement.h"
#include "common/system/idle_latency.h"
#include "tests/support.h"

namespace wb {
namespace {

using nlohmann::json;

std::string slurp(const std::string& path) { return test::read_fixture(path); }

// The cpufreq policy and the cpuidle states of `cpu` in a fixture tree, as the environment holds
// them.
json cpufreq_json(const std::string& machine, int cpu) {
  std::string why;
  auto p = read_cpufreq_policy(cpu, &why, test::sysroot_path(machine));
  if (!p) throw std::runtime_error(why);
  return to_json(*p);
}
std::vector<CpuidleState> cpuidle_states(const std::string& machine, int cpu) {
  std::string why;
  auto st = read_cpuidle_states(cpu, &why, test::sysroot_path(machine));
  if (!st) throw std::runtime_error(why);
  return *st;
}

bool is_unavailable(const json& j) {
  return j.is_object() && j.size() == 1 && j.contains("unavailable") &&
         j["unavailable"].is_string() && !j["unavailable"].get<std::string>().empty();
}

// A value (not null) or {"unavailable": "<reason>"}.
void expect_item(const json& parent, const std::string& key, const std::string& where) {
  ASSERT_TRUE(parent.is_object()) << where;
  ASSERT_TRUE(parent.contains(key)) << where << " lacks " << key;
  const json& v = parent[key];
  EXPECT_FALSE(v.is_null()) << where << "." << key << " is null";
  if (v.is_object() && v.contains("unavailable")) {
    EXPECT_TRUE(is_unavailable(v)) << where << "." << key << ": " << v.dump();
  }
}

bool contains_text(const std::vector<std::string>& lines, const std::string& a,
                   const std::string& b = "") {
  for (const auto& l : lines) {
    if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
  }
  return false;
}

TEST(Sha256, Fips180Vectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The digest given in pieces (a side file as it is written) is the digest of the whole.
TEST(Sha256, InPiecesItIsTheDigestOfTheWhole) {
  const std::string whole = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  Sha256 sha;
  for (size_t at = 0; at < whole.size(); at += 7) sha.update(std::string_view(whole).substr(at, 7));
  EXPECT_EQ(sha.hex(), sha256_hex(whole));
  Sha256 other;
  other.update(whole.substr(1));
  EXPECT_NE(other.hex(), sha256_hex(whole));
}

TEST(Hypervisor, Detection) {
  HypervisorEvidence none;
  auto j = detect_hypervisor(none);
  EXPECT_EQ(j["detected"], false);
  EXPECT_TRUE(j["vendor"].is_null());

  HypervisorEvidence kvm;
  kvm.cpuinfo_hypervisor_flag = true;
  kvm.cpuid_vendor = "KVMKVMKVM";
  j = detect_hypervisor(kvm);
  EXPECT_EQ(j["detected"], true);
  EXPECT_EQ(j["vendor"], "KVM");
  EXPECT_EQ(j["evidence"].size(), 2u);

  HypervisorEvidence flag_only;
  flag_only.cpuinfo_hypervisor_flag = true;
  EXPECT_EQ(detect_hypervisor(flag_only)["vendor"], "unknown");

  HypervisorEvidence hyperv;
  hyperv.dmi_sys_vendor = "Microsoft Corporation";
  hyperv.dmi_product_name = "Virtual Machine";
  EXPECT_EQ(detect_hypervisor(hyperv)["vendor"], "Hyper-V");

  HypervisorEvidence metal;  // a bare-metal cloud instance is not a guest
  metal.dmi_sys_vendor = "Amazon EC2";
  metal.dmi_product_name = "c6g.metal";
  EXPECT_EQ(detect_hypervisor(metal)["detected"], false);

  HypervisorEvidence lpar;  // powerpc: from the format-derived cpuinfo fixture
  const std::string path = test::fixture_path("procfs/cpuinfo-ppc64le-format.txt");
  CpuInfo info = parse_cpuinfo(slurp(path), path);
  lpar.ppc_platform = info.platform;
  lpar.ppc_machine = info.machine;
  EXPECT_EQ(detect_hypervisor(lpar)["vendor"], "PowerVM (LPAR)");

  HypervisorEvidence qemu_pseries;  // qemu's pseries, under KVM or TCG alike
  qemu_pseries.ppc_platform = "pSeries";
  qemu_pseries.ppc_machine = "CHRP IBM pSeries (emulated by qemu)";
  EXPECT_EQ(detect_hypervisor(qemu_pseries)["vendor"], "KVM/QEMU (pseries guest)");

  HypervisorEvidence xen;
  xen.sys_hypervisor_type = "xen";
  EXPECT_EQ(detect_hypervisor(xen)["vendor"], "Xen");
}

// A fabricated environment whose per-CPU items come from the real-machine captures.
json noisy_environment() {
  json env;
  env["cpus"] = {0, 1};
  env["cpufreq"]["0"] = cpufreq_json("x86-ryzen9-5950x", 0);          // powersave
  env["cpufreq"]["1"] = cpufreq_json("arm64-cpufreq-dt-cluster", 1);  // schedutil
  json states = json::array();
  for (const auto& s : cpuidle_states("x86-icelake-i7-1065g7", 0)) states.push_back(to_json(s));
  env["cpuidle"] = {
      {"driver", "intel_idle"}, {"governor", "menu"}, {"states", {{"0", states}, {"1", states}}}};
  env["idle_latency"] = {{"requested_us", nullptr}, {"effective_us", nullptr}};
  env["hypervisor"] = detect_hypervisor([] {
    HypervisorEvidence ev;
    ev.cpuinfo_hypervisor_flag = true;
    ev.cpuid_vendor = "KVMKVMKVM";
    return ev;
  }());
  env["smt"] = {{"control", "on"}, {"active", true}, {"siblings", {{"0", {0, 4}}, {"1", {1, 5}}}}};
  env["cpu_load"] = {{"sample_ms", 100},
                     {"busy_pct", {{"0", 1.0}, {"1", 35.0}, {"4", 80.0}, {"5", 2.0}}}};
  env["numa_balancing"] = 1;
  env["sched_ext"] = {{"state", "enabled"}, {"ops", "scx_lavd"}};
  return env;
}

TEST(EnvironmentWarnings, EachNoiseSourceHasItsFix) {
  auto w = environment_warnings(noisy_environment());
  EXPECT_TRUE(
      contains_text(w, "cpufreq governor is powersave on CPU 0", "frequency-set -g performance"));
  EXPECT_TRUE(contains_text(w, "cpufreq governor is schedutil on CPU 1"));
  // Icelake states: C2_ACPI (253 us) and C3_ACPI (1048 us) are deep, C1_ACPI (1 us) is not.
  EXPECT_TRUE(contains_text(w, "CPUs 0-1 can enter idle state C3_ACPI (exit latency 1048 us)",
                            "--idle-latency-us"));
  EXPECT_TRUE(contains_text(w, "idle state C2_ACPI", "state2/disable"));
  EXPECT_FALSE(contains_text(w, "C1_ACPI"));
  EXPECT_TRUE(contains_text(w, "running under a hypervisor (KVM)", "vCPU wakeup"));
  EXPECT_TRUE(contains_text(w, "SMT sibling CPU 4 of measured CPU 0 was 80% busy", "isolate"));
  EXPECT_FALSE(contains_text(w, "SMT sibling CPU 5"));
  EXPECT_TRUE(contains_text(w, "measured CPU 1 was 35% busy"));
  EXPECT_FALSE(contains_text(w, "measured CPU 0 was 1%"));  // 1% is under the threshold
  EXPECT_TRUE(contains_text(w, "NUMA balancing is on", "kernel.numa_balancing=0"));
  EXPECT_TRUE(contains_text(w, "sched_ext BPF scheduler (scx_lavd)"));
  EXPECT_EQ(w.size(), 9u);  // two governors, two deep states, and one of each other kind
}

TEST(EnvironmentWarnings, QuietEnvironmentAndUserChoices) {
  json env = noisy_environment();
  env["cpufreq"]["0"]["governor"] = "performance";
  env["cpufreq"]["1"] = {{"unavailable", "no cpufreq driver"}};
  env["hypervisor"] = detect_hypervisor({});
  env["cpu_load"]["busy_pct"] = {{"0", 0.0}, {"1", 0.0}, {"4", 0.0}, {"5", 0.0}};
  env["numa_balancing"] = 0;
  env["sched_ext"] = {{"state", "disabled"}, {"ops", nullptr}};
  // Deep states disabled by the admin (the tuned server fixture) do not warn.
  json states = json::array();
  for (auto s : cpuidle_states("x86-intel-server-tuned", 0)) {
    s.latency_us = s.name == "POLL" ? 0 : 133;
    states.push_back(to_json(s));
  }
  env["cpuidle"]["states"] = {{"0", states}, {"1", states}};
  EXPECT_TRUE(environment_warnings(env).empty());

  // Enabled deep states warn unless --idle-latency-us was given.
  json deep = noisy_environment();
  EXPECT_TRUE(contains_text(environment_warnings(deep), "idle state C3_ACPI"));
  deep["idle_latency"]["requested_us"] = 0;
  EXPECT_FALSE(contains_text(environment_warnings(deep), "idle state"));
  // Unavailable items never produce warnings or crash.
  json unknown = {{"cpufreq", {{"unavailable", "x"}}},
                  {"cpuidle", {{"unavailable", "x"}}},
                  {"hypervisor", {{"unavailable", "x"}}},
                  {"numa_balancing", {{"unavailable", "x"}}}};
  EXPECT_TRUE(environment_warnings(unknown).empty());
  EXPECT_TRUE(environment_warnings(json::object()).empty());
}

// The measured CPU's SMT sibling set otherwise (tests/fixtures/sysroot-x86-smt-sibling-mismatch):
// both CPUs' settings recorded, one warning naming each difference; none once they agree, none
// for an unmeasured pair of siblings, and none when both threads are measured twice over.
TEST(EnvironmentWarnings, SmtSiblingSetOtherwise) {
  json env = capture_cpu_settings({0}, test::sysroot_path("x86-smt-sibling-mismatch"));
  env["cpus"] = {0};
  ASSERT_EQ(env["smt"]["siblings"]["0"], json({0, 1}));
  EXPECT_EQ(env["cpufreq"]["1"]["governor"], "powersave");  // the sibling's, recorded
  EXPECT_EQ(env["cpuidle"]["states"]["1"].size(), 4u);
  auto w = environment_warnings(env);
  EXPECT_TRUE(contains_text(w,
                            "SMT sibling CPU 1 of measured CPU 0 is set otherwise: governor "
                            "powersave (CPU 0: performance), idle state C1 enabled (CPU 0: "
                            "disabled), idle state C1E enabled (CPU 0: disabled), max_khz "
                            "3000000 (CPU 0: 5500000);",
                            "give CPUs 0-1 the same"));
  EXPECT_FALSE(contains_text(w, "C6"));                     // disabled on both
  EXPECT_FALSE(contains_text(w, "governor is powersave"));  // CPU 1 is not measured
  env["cpus"] = {0, 1};                                     // both threads measured: the pair once
  env["smt"]["siblings"]["1"] = {0, 1};
  w = environment_warnings(env);
  EXPECT_EQ(std::count_if(w.begin(), w.end(),
                          [](const std::string& l) { return l.find("SMT sibling") == 0; }),
            1);
  env["cpufreq"]["1"] = env["cpufreq"]["0"];
  env["cpuidle"]["states"]["1"] = env["cpuidle"]["states"]["0"];
  EXPECT_FALSE(contains_text(environment_warnings(env), "set otherwise"));
}

TEST(EnvironmentLive, EveryRequiredItemIsAValueOrUnavailable) {
  EnvironmentOptions opts;
  opts.cpus = {0};
  opts.config_text = R"({"schema_version": 1, "name": "quick"})";
  const json env = capture_environment(opts);

  for (const char* key : {"release", "version", "cmdline"})
    expect_item(env["kernel"], key, "kernel");
  for (const char* key : {"arch", "vendor", "model", "microcode"})
    expect_item(env["cpu"], key, "cpu");
  for (const char* key : {"control", "active", "siblings"}) expect_item(env["smt"], key, "smt");
  ASSERT_TRUE(env["cpufreq"].contains("0"));
  const json& f0 = env["cpufreq"]["0"];
  if (!is_unavailable(f0)) {
    for (const char* key : {"driver", "governor", "min_khz", "max_khz"})
      expect_item(f0, key, "cpufreq.0");
  }
  for (const char* key : {"driver", "governor", "states"})
    expect_item(env["cpuidle"], key, "cpuidle");
  const json& s0 = env["cpuidle"]["states"]["0"];
  if (!is_unavailable(s0)) {
    ASSERT_TRUE(s0.is_array());
    for (const auto& s : s0) {
      for (const char* key : {"name", "desc", "latency_us", "residency_us", "disabled"}) {
        expect_item(s, key, "cpuidle.states.0[]");
      }
    }
  }
  for (const char* key :
       {"isolcpus", "nohz_full", "sched_features", "sched_domains", "sched_ext", "numa_balancing",
        "perf_event_paranoid", "hypervisor", "wakebench", "config_hash", "hostname", "schedstats",
        "idle_latency", "cpu_load", "preempt", "clocksource"}) {
    expect_item(env, key, "environment");
  }
  expect_item(env["isolcpus"], "list", "isolcpus");
  expect_item(env["nohz_full"], "list", "nohz_full");
  for (const char* key : {"version", "git_sha", "compiler"}) {
    ASSERT_TRUE(env["wakebench"][key].is_string());
    EXPECT_FALSE(env["wakebench"][key].get<std::string>().empty());
  }
  EXPECT_EQ(env["config_hash"], "sha256:" + sha256_hex(opts.config_text));
  EXPECT_EQ(env["cpus"], json::array({0}));

  // Cross-checks against what this machine shows.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  if (text.find(" hypervisor") != std::string::npos) {
    EXPECT_EQ(env["hypervisor"]["detected"], true);
  }
  if (!std::ifstream("/proc/schedstat")) {
    EXPECT_TRUE(is_unavailable(env["schedstats"]));
  }
  if (!std::ifstream("/sys/kernel/debug/sched/features")) {
    EXPECT_TRUE(is_unavailable(env["sched_features"]));
  }
  EXPECT_NO_THROW(environment_warnings(env));
}

TEST(IdleLatencyGuard, RejectsNegative) {
  EXPECT_THROW(IdleLatencyGuard(-1), std::invalid_argument);
}

TEST(IdleLatencyGuard, HoldsAndReleasesTheLimit) {
  std::string why;
  auto before = read_cpu_latency_limit_us(&why);
  if (!before) GTEST_SKIP() << why;
  {
    IdleLatencyGuard guard(0);
    EXPECT_EQ(guard.requested_us(), 0);
    auto during = read_cpu_latency_limit_us(&why);
    ASSERT_TRUE(during) << why;
    EXPECT_EQ(*during, 0);  // the limit is the minimum over all requests
  }
  auto after = read_cpu_latency_limit_us(&why);
  ASSERT_TRUE(after) << why;
  EXPECT_EQ(*after, *before);
}

TEST(IdleLatencyGuard, ErrorNamesTheDeviceWhenNotRoot) {
  if (geteuid() == 0) GTEST_SKIP() << "root can open /dev/cpu_dma_latency";
  try {
    IdleLatencyGuard guard(0);
    ADD_FAILURE() << "opened /dev/cpu_dma_latency without root";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/cpu_dma_latency"), std::string::npos);
  }
}

// With CPU 1 offline the run has one CPU, and a class it lacks says why (issue 25: it said "each
// LLC has one core" and never named the offline CPU).
TEST(UnusedCpus, NamesTheOfflineAndTheBarredCpus) {
  EXPECT_EQ(unused_cpus_note({0}, test::sysroot_path("x86-kvm-guest-cpu1-offline")),
            "CPU 1 is offline");
  EXPECT_EQ(describe_unused_cpus({0, 1, 2, 3, 4, 5}, {0, 1, 4, 5}, {0, 4}),
            "CPUs 2-3 are offline; CPUs 1,5 are not allowed");
  EXPECT_EQ(describe_unused_cpus({0, 1}, {0, 1}, {0, 1}), "");
  // A root without those files (every capture but this one): nothing to say, no error.
  EXPECT_EQ(unused_cpus_note({0}, test::sysroot_path("x86-kvm-guest")), "");
}

// Placements the wakeup model does not describe (docs/policy-model.md#not-fair): a sched_ext
// scheduler or another class, detected on fixture sysfs trees (tests/fixtures/sched-ext/, written
// from kernel/sched/ext.c's sysfs attributes), and what a set that records one gets: one line in
// the predictions and the run's warnings, and no verdict scored.
#ifndef SCHED_EXT
#define SCHED_EXT 7
#endif

json fair_probe(const std::string& tree, int policy = SCHED_OTHER) {
  return probe_fair_placement(test::fixture_path("sched-ext/" + tree), policy);
}

TEST(FairPlacement, ASchedExtSchedulerForEveryTaskIsNotFairs) {
  const json p = fair_probe("enabled-all");
  EXPECT_EQ(p["applies"], false);
  EXPECT_EQ(p["why"],
            "a sched_ext scheduler (lavd_1.0.6_x86_64_unknown_linux_gnu) is enabled for every "
            "task (/sys/kernel/sched_ext): its select_cpu places the run's tasks, not fair.c");
}

// switch_all 0: only SCHED_EXT tasks are the BPF scheduler's; a run of SCHED_OTHER tasks is fair's.
TEST(FairPlacement, APartialSchedExtSchedulerTakesOnlySchedExtTasks) {
  EXPECT_EQ(fair_probe("enabled-partial"), (json{{"applies", true}}));
  const json ext = fair_probe("enabled-partial", SCHED_EXT);
  EXPECT_EQ(ext["applies"], false);
  EXPECT_NE(ext["why"].get<std::string>().find("(simple) is enabled for SCHED_EXT tasks"),
            std::string::npos);
}

TEST(FairPlacement, DisabledOrAbsentSchedExtAndFairPoliciesAreFairs) {
  EXPECT_EQ(fair_probe("disabled"), (json{{"applies", true}}));
  EXPECT_EQ(fair_probe("disabled", SCHED_EXT), (json{{"applies", true}}));  // falls back to fair
  EXPECT_EQ(fair_probe("no-such-tree"), (json{{"applies", true}}));  // no CONFIG_SCHED_CLASS_EXT
  EXPECT_EQ(fair_probe("disabled", SCHED_BATCH), (json{{"applies", true}}));
  EXPECT_EQ(fair_probe("disabled", SCHED_IDLE), (json{{"applies", true}}));
}

TEST(FairPlacement, RtTasksAreTheRtClasss) {
  const json fifo = fair_probe("disabled", SCHED_FIFO);
  EXPECT_EQ(fifo["applies"], false);
  EXPECT_EQ(fifo["why"],
            "the run's tasks are SCHED_FIFO: the RT class places them (select_task_rq_rt), not "
            "fair.c");
  EXPECT_EQ(fair_probe("disabled", SCHED_RR)["applies"], false);
}

// The predict fixture (model box C: pipe stacked, matching sync-2017) with a recorded
// fair_placement that does not apply.
json fair_box_c_results() {
  json rs = json::parse(test::read_fixture(test::fixture_path("predict/results-box-c.json")));
  rs["topology"]["xml"] =
      test::read_fixture(test::fixture_path("topologies/model/box-c-8c-smt2-stride8-1llc.xml"));
  return rs;
}

TEST(FairPlacement, ASetThatRecordsItGetsOneLineAndNoVerdict) {
  json rs = fair_box_c_results();
  const ResultsPrediction scored = predict_for_results(rs);
  rs["environment"]["fair_placement"] = fair_probe("enabled-all");
  const ResultsPrediction p = predict_for_results(rs);
  ASSERT_EQ(p.cases.size(), scored.cases.size());
  int was_scored = 0;
  for (std::size_t i = 0; i < p.cases.size(); ++i)
    for (std::size_t k = 0; k < p.cases[i].policies.size(); ++k) {
      EXPECT_FALSE(p.cases[i].policies[k].verdict) << p.cases[i].label;
      was_scored += scored.cases[i].policies[k].verdict.has_value();
    }
  EXPECT_GT(was_scored, 0);
  const std::string text = render_results_text(p);
  EXPECT_NE(text.find("\n  the predictions do not apply here, no verdict is scored: a sched_ext "
                      "scheduler\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0 observed kernel cases by the nearest group's word"), std::string::npos);
  const json j = to_json(p);
  EXPECT_EQ(j["fair_placement"]["applies"], false);
  EXPECT_EQ(j["fair_placement"]["why"], fair_probe("enabled-all")["why"]);
  EXPECT_FALSE(to_json(scored).contains("fair_placement"));  // other sets' blocks unchanged
  const auto w = environment_warnings(rs["environment"]);
  EXPECT_EQ(std::count_if(w.begin(), w.end(),
                          [](const std::string& s) {
                            return s.rfind("the wakeup model's predictions do not apply", 0) == 0;
                          }),
            1);
}

// A case whose waker or wakee runs SCHED_FIFO (the `sched` knob) is not compared: the RT class
// places its wakes.
TEST(FairPlacement, ACaseWithAnRtSideIsNotCompared) {
  json rs = fair_box_c_results();
  for (json& c : rs["cases"])
    if (c["name"] == "pipe/threads/kernel") c["params"] = {{"sched", {{"wakee", "fifo:10"}}}};
  for (const CasePrediction& e : predict_for_results(rs).cases)
    if (e.label == "pipe/threads/kernel") {
      ASSERT_TRUE(e.skipped);
      EXPECT_EQ(*e.skipped,
                "not compared: the wakee runs SCHED_FIFO: the RT class places its wakes "
                "(select_task_rq_rt), not fair.c");
      return;
    }
  FAIL() << "no pipe/threads/kernel case";
}

}  // namespace
}  // namespace wb
