// The PowerVM LPAR presets' topologies (configs/lab/topologies/power9-bigcore.xml and
// power10-smallcore.xml, written by runners/lab/wblab/lpar.py as Linux 6.12 shows such an LPAR to
// hwloc): hwloc's Core is the SMT8 big core, the kernel's core the small core of interleaved
// threads inside it, which topology, predict and search must read as the SMT siblings and scan in
// CPU-id order (docs/policy-model.md#inputs, runners/lab/power/DOMAINS.md). Each expectation
// below fails on the same machines with consecutively numbered small cores ({0-3} and {4-7}).
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/model/policy_model.h"
#include "analysis/predict/search.h"
#include "common/schema/placement.h"
#include "common/schema/registry.h"
#include "common/util/cpulist.h"

namespace wb {
namespace {

const std::string kLab = std::string(WB_SOURCE_DIR) + "/configs/lab/topologies/";
const char* const kPresets[] = {"power9-bigcore", "power10-smallcore"};

Topology lpar(const std::string& preset) { return Topology::from_xml(kLab + preset + ".xml"); }

// The CPUs whose Pu field `id` equals CPU `cpu`'s.
std::string group_of(const Topology& t, int cpu, int Pu::*id) {
  std::vector<int> out;
  for (const Pu& p : t.pus())
    if (p.*id == t.find(cpu)->*id) out.push_back(p.os);
  return format_cpu_list(out);
}

TEST(PowerLpar, TheSmtSiblingsAreTheInterleavedSmallCore) {
  for (const char* preset : kPresets) {
    SCOPED_TRACE(preset);
    const Topology t = lpar(preset);
    EXPECT_EQ(group_of(t, 0, &Pu::core), "0,2,4,6");
    EXPECT_EQ(group_of(t, 1, &Pu::core), "1,3,5,7");
    EXPECT_EQ(group_of(t, 9, &Pu::core), "9,11,13,15");
    EXPECT_EQ(t.smt().width, 4);
    EXPECT_EQ(t.smt().numbering, "strided");
    EXPECT_EQ(t.smt().stride, 2);
    const ClassPairs smt = choose_pairs(t).at(1);
    ASSERT_EQ(smt.cls, PlacementClass::kSmtSibling);
    EXPECT_EQ(smt.pairs, (std::vector<CpuPair>{{0, 2}}));
  }
  // The LLC: POWER9's L2 and L3 span the big core (two small cores), POWER10's the small core.
  EXPECT_EQ(group_of(lpar("power9-bigcore"), 0, &Pu::llc), "0-7");
  EXPECT_EQ(group_of(lpar("power10-smallcore"), 0, &Pu::llc), "0,2,4,6");
}

std::string levels(const SchedTopology& s, int cpu) {
  std::string out;
  for (const SchedDomain& d : s.domains(cpu))
    out += (out.empty() ? "" : " ") + d.name + "=" + format_cpu_list(d.span);
  return out;
}

// The stated domains (DOMAINS.md section 3, wblab/qemu.py PRESETS; NUMA with its distance).
TEST(PowerLpar, TheModelsDomainsAreTheStatedOnes) {
  const SchedTopology p9(lpar("power9-bigcore"));
  EXPECT_EQ(levels(p9, 0), "SMT=0,2,4,6 CACHE=0-7 PKG=0-15 NUMA(20)=0-31");
  EXPECT_EQ(levels(p9, 9), "SMT=9,11,13,15 CACHE=8-15 PKG=0-15 NUMA(20)=0-31");
  EXPECT_EQ(levels(p9, 30), "SMT=24,26,28,30 CACHE=24-31 PKG=16-31 NUMA(20)=0-31");
  EXPECT_EQ(p9.sd_llc(0)->name, "CACHE");
  EXPECT_EQ(p9.llc_size(0), 8);
  // POWER10: the LLC is the SMT level. The kernel's 0-15 level is MC (the coregroup, which hwloc
  // cannot see on 6.12); the model's PKG spans the same CPUs with the flags a wakeup reads.
  const SchedTopology p10(lpar("power10-smallcore"));
  EXPECT_EQ(levels(p10, 0), "SMT=0,2,4,6 PKG=0-15");
  EXPECT_EQ(levels(p10, 7), "SMT=1,3,5,7 PKG=0-15");
  EXPECT_EQ(p10.sd_llc(0)->name, "SMT");
  EXPECT_EQ(p10.llc_size(0), 4);
}

// A sync wake from CPU 0, running alone, of a wakee last on CPU 8 (another LLC), with `busy`
// running one task each: the CPUs mainline, sync-core and sync-core-v2 pick.
std::vector<int> picks(const SchedTopology& s, std::set<int> busy, std::optional<bool> hint) {
  WakeInput in;
  in.waker = 0;
  in.prev = 8;
  in.sync = true;
  for (int c : busy) in.nr_running[c] = 1;
  in.has_idle_cores = hint;
  std::vector<int> out;
  for (const char* id : {"mainline", "sync-core", "sync-core-v2"})
    out.push_back(predict_wakeup(s, in, policy_by_id(id)).cpu);
  return out;
}

// The scan starts at CPU 1, the big core's other small core: on POWER9 a fully idle one is found
// before the waker's own (sync-core's hook has nothing to add); a partly busy one sends mainline
// to its idle thread 1 and sync-core to the waker's sibling 2 (DOMAINS.md section 4).
// sync-core-v2 takes the waker's lowest sibling, 2. On POWER10 the LLC is the waker's small
// core: every policy stays there.
TEST(PowerLpar, TheIdleScanWalksCpuIdsOverSmallCores) {
  const SchedTopology p9(lpar("power9-bigcore"));
  EXPECT_EQ(picks(p9, {0}, std::nullopt), (std::vector<int>{1, 1, 2}));
  EXPECT_EQ(picks(p9, {0, 3}, true), (std::vector<int>{1, 2, 2}));  // a stale has_idle_cores
  const SchedTopology p10(lpar("power10-smallcore"));
  EXPECT_EQ(picks(p10, {0}, std::nullopt), (std::vector<int>{2, 2, 2}));
}

SearchOptions kernel_policies() {
  SearchOptions opt;
  opt.policies = registry().kernel_policy_ids();
  return opt;
}

// The pairs a search tells apart.
std::set<std::string> told_apart(const SearchResult& r) {
  std::set<std::string> out;
  for (const PairReport& p : r.pairs)
    if (p.chosen > 0) out.insert(p.a + "/" + p.b);
  return out;
}

// Where `policy` settles a pair started on a, b with every CPU allowed, as the search simulates it.
std::vector<int> settles(const SchedTopology& s, int a, int b, const std::string& policy) {
  const SearchCandidate c{s.cpus(), a, b, {}};
  for (const SteadyResult& r : candidate_steady_states(s, kernel_policies(), c))
    if (r.policy == policy) return r.cpus;
  return {};
}

const std::set<std::string> kSync2017Only = {"mainline/sync-2017", "sync-pair/sync-2017",
                                             "sync-core/sync-2017", "sync-core-v2/sync-2017"};

// Only sync-2017 is told apart, on both. POWER9: from 0,8 mainline settles on the two small cores
// of CPU 0's big core (0 and 1: llc), sync-core-v2 on CPU 0's small core (0,2); every candidate
// that parts mainline and sync-core lies within the range of a busy prev or a stale
// has_idle_cores hint. POWER10: the pair from 0,1 settles on CPU 0's small core.
TEST(PowerLpar, SearchTellsOnlySync2017Apart) {
  const SchedTopology p9(lpar("power9-bigcore"));
  const SearchResult r9 = search(p9, kernel_policies());
  EXPECT_EQ(told_apart(r9), kSync2017Only);
  EXPECT_EQ(settles(p9, 0, 8, "mainline"), (std::vector<int>{0, 1}));
  EXPECT_EQ(settles(p9, 0, 8, "sync-core-v2"), (std::vector<int>{0, 2}));
  for (const PairReport& p : r9.pairs) {
    if (p.a != "mainline" || p.b != "sync-core") continue;
    std::set<std::string> causes;
    for (const auto& [cause, n] : p.blocked_by) causes.insert(cause);
    EXPECT_EQ(causes, (std::set<std::string>{"busy-prev", "stale-idle-cores"}));
  }
  const SchedTopology p10(lpar("power10-smallcore"));
  EXPECT_EQ(told_apart(search(p10, kernel_policies())), kSync2017Only);
  EXPECT_EQ(settles(p10, 0, 1, "mainline"), (std::vector<int>{0, 2}));
}

}  // namespace
}  // namespace wb
