// Search by shape (analysis/model/symmetry.h, analysis/predict/search_orbits.h): the renamings it
// uses keep the model's answer, the ones that do not are refused, and the reduced search chooses
// what the exhaustive one does, on constructed machines of at most 8 PUs where a wrong symmetry
// would merge CPUs that differ: strided siblings, hybrid cores with an E-core cluster, asymmetric
// L3s, cores of three PUs, two NUMA packages.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "analysis/model/symmetry.h"
#include "analysis/predict/predict_results.h"
#include "analysis/predict/search.h"
#include "analysis/predict/search_shapes.h"
#include "common/schema/registry.h"
#include "runners/run/progress.h"
#include "tests/candidate_orbits.h"
#include "tests/support.h"

namespace wb {
namespace {

using test::CandidateOrbits;

// ---- constructed machines -------------------------------------------------------------------

using Core = std::vector<int>;    // its PUs' OS indexes
using L2 = std::vector<Core>;     // cores sharing an L2
using L3 = std::vector<L2>;       // L2s sharing an L3
using Package = std::vector<L3>;  // one NUMA node each
using Machine = std::vector<Package>;

std::string mask(const std::vector<int>& pus) {
  unsigned m = 0;
  for (int p : pus) m |= 1u << p;
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", m);
  return buf;
}

template <class T>
std::vector<int> pus_of(const T& parts) {
  std::vector<int> out;
  for (const auto& p : parts) {
    if constexpr (std::is_same_v<T, Core>) {
      out.push_back(p);
    } else {
      for (int x : pus_of(p)) out.push_back(x);
    }
  }
  return out;
}

// An hwloc 2 XML of `m`: one package and NUMA node per Package, then L3, L2, Core, PU objects.
std::string hwloc_xml(const Machine& m) {
  int gp = 1, core_id = 0, l2_id = 0, l3_id = 0;
  auto obj = [&](const std::string& type, int os, const std::vector<int>& pus,
                 const std::string& extra) {
    return "<object type=\"" + type + "\" os_index=\"" + std::to_string(os) + "\" cpuset=\"" +
           mask(pus) + "\" complete_cpuset=\"" + mask(pus) + "\" gp_index=\"" +
           std::to_string(gp++) + "\"" + extra;
  };
  auto cache = [](int depth) {
    return " cache_size=\"" + std::to_string(depth == 3 ? 8388608 : 1048576) + "\" depth=\"" +
           std::to_string(depth) + "\" cache_linesize=\"64\" cache_associativity=\"8\" " +
           "cache_type=\"0\">";
  };
  std::vector<int> all = pus_of(m);
  const std::string nodes = m.size() == 1 ? "0x1" : "0x3";
  std::string x =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
      "<topology version=\"2.0\">\n" +
      obj("Machine", 0, all, " nodeset=\"" + nodes + "\" complete_nodeset=\"" + nodes + "\">") +
      "<info name=\"Architecture\" value=\"x86_64\"/>\n";
  for (std::size_t p = 0; p < m.size(); ++p) {
    const std::vector<int> pp = pus_of(m[p]);
    const std::string node = "0x" + std::to_string(1 << p);
    x += obj("Package", static_cast<int>(p), pp,
             " nodeset=\"" + node + "\" complete_nodeset=\"" + node + "\">") +
         "<info name=\"CPUVendor\" value=\"GenuineIntel\"/>\n" +
         obj("NUMANode", static_cast<int>(p), pp,
             " nodeset=\"" + node + "\" complete_nodeset=\"" + node +
                 "\" local_memory=\"1073741824\"/>\n");
    for (const L3& l3 : m[p]) {
      x += obj("L3Cache", l3_id++, pus_of(l3), cache(3));
      for (const L2& l2 : l3) {
        x += obj("L2Cache", l2_id++, pus_of(l2), cache(2));
        for (const Core& core : l2) {
          x += obj("Core", core_id++, core, ">");
          for (int pu : core) x += obj("PU", pu, {pu}, "/>\n");
          x += "</object>\n";
        }
        x += "</object>\n";
      }
      x += "</object>\n";
    }
    x += "</object>\n";
  }
  return x + "</object>\n</topology>\n";
}

struct Named {
  std::string name;
  SchedTopology sched;
};

SchedTopology machine(const std::string& name, const Machine& m) {
  return SchedTopology(Topology::from_xml_buffer(hwloc_xml(m), "constructed:" + name));
}

// Each L2 of one core is that core's own; an L2 of several cores is a cluster. hybrid: two L3s of
// a P-core (SMT2) and a cluster of two E-cores; smt3: two L3s of one strided core of three PUs
// each.
std::vector<Named> constructed() {
  std::vector<Named> out;
  out.push_back(
      {"strided-smt2", machine("strided-smt2", {{{{{0, 4}}, {{1, 5}}, {{2, 6}}, {{3, 7}}}}})});
  out.push_back({"hybrid", machine("hybrid", {{{{{0, 1}}, {{2}, {3}}}, {{{4, 5}}, {{6}, {7}}}}})});
  out.push_back({"asym-l3", machine("asym-l3", {{{{{0}}, {{1}}, {{2}}},
                                                 {{{3}}, {{4}}, {{5}}, {{6}}, {{7}}}}})});
  out.push_back({"smt3", machine("smt3", {{{{{0, 2, 4}}}, {{{1, 3, 5}}}}})});
  out.push_back({"2-numa", machine("2-numa", {{{{{0, 1}}, {{2, 3}}}}, {{{{4, 5}}, {{6, 7}}}}})});
  return out;
}

// Two packages, each one L3 of three strided SMT2 cores (c, c+3) split into two NUMA nodes of two
// cores and one (SNC with unequal nodes, as Granite Rapids' 43/43/42): the nodes sit inside the
// L3, so no rotation of the L3 keeps them, and classify() never reads them (a node is compared
// only between CPUs that share no L3, which never share such a node).
SchedTopology snc_machine() {
  int gp = 1;
  auto obj = [&](const std::string& type, int os, const std::vector<int>& pus, int node,
                 const std::string& extra) {
    const std::string ns = node < 0 ? "0x3" : "0x" + std::to_string(1 << node);
    return "<object type=\"" + type + "\"" +
           (os >= 0 ? " os_index=\"" + std::to_string(os) + "\"" : "") + " cpuset=\"" + mask(pus) +
           "\" complete_cpuset=\"" + mask(pus) + "\" nodeset=\"" + ns + "\" complete_nodeset=\"" +
           ns + "\" gp_index=\"" + std::to_string(gp++) + "\"" + extra;
  };
  std::string x =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
      "<topology version=\"2.0\">\n" +
      obj("Machine", 0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, -1, ">") +
      "<info name=\"Architecture\" value=\"x86_64\"/>\n";
  int core_id = 0;
  for (int p = 0; p < 2; ++p) {
    const int b = 6 * p;
    const std::vector<int> pkg = {b, b + 1, b + 2, b + 3, b + 4, b + 5};
    x += obj("Package", p, pkg, -1, ">") + "<info name=\"CPUVendor\" value=\"GenuineIntel\"/>\n" +
         obj("L3Cache", -1, pkg, -1,
             " cache_size=\"8388608\" depth=\"3\" cache_linesize=\"64\" "
             "cache_associativity=\"8\" cache_type=\"0\">");
    for (int node = 0; node < 2; ++node) {
      const std::vector<std::vector<int>> cores =
          node == 0 ? std::vector<std::vector<int>>{{b, b + 3}, {b + 1, b + 4}}
                    : std::vector<std::vector<int>>{{b + 2, b + 5}};
      std::vector<int> pus;
      for (const auto& c : cores) pus.insert(pus.end(), c.begin(), c.end());
      const int id = 2 * p + node;
      x += obj("Group", -1, pus, id, " kind=\"1001\" subkind=\"0\">") +
           obj("NUMANode", id, pus, id, " local_memory=\"1073741824\"/>\n");
      for (const auto& c : cores) {
        x += obj("Core", core_id++, c, id, ">");
        for (int pu : c) x += obj("PU", pu, {pu}, id, "/>\n");
        x += "</object>\n";
      }
      x += "</object>\n";
    }
    x += "</object>\n</object>\n";
  }
  return SchedTopology(
      Topology::from_xml_buffer(x + "</object>\n</topology>\n", "constructed:snc"));
}

// ---- what the search reads of a candidate -------------------------------------------------

SearchOptions options(bool sync) {
  SearchOptions o;
  o.policies = registry().kernel_policy_ids();
  o.sync = sync;
  return o;
}

// What the search reads of a candidate, under every policy.
std::vector<std::string> answer(const SchedTopology& t, const SearchOptions& opt,
                                const SearchCandidate& c) {
  SearchOptions all = opt;
  all.policies.clear();
  for (const WakeupPolicy* p : all_policies()) all.policies.emplace_back(p->id());
  return search_answer(candidate_steady_states(t, all, c));
}

// The first orbit (under `gens`) whose first member answers differently from its last (from
// another, with `every`); -1 if none. `checked` counts the orbits of two or more members.
long long first_disagreement(const SchedTopology& t, const SearchOptions& opt,
                             const std::vector<CpuMap>& gens, int& checked, bool every = false) {
  const CandidateSpace space(t);
  const CandidateOrbits orbits(space, gens);
  checked = 0;
  for (std::size_t k = 0; k < orbits.count(); ++k) {
    if (orbits.size(k) < 2) continue;
    ++checked;
    const std::vector<std::int64_t> m = orbits.members(k);
    const std::vector<std::string> first = answer(t, opt, space.at(m.front()));
    for (std::size_t i = every ? 1 : m.size() - 1; i < m.size(); ++i)
      if (answer(t, opt, space.at(m[i])) != first) return static_cast<long long>(k);
  }
  return -1;
}

CpuMap renamed(const SchedTopology& t, const std::vector<std::pair<int, int>>& moves) {
  CpuMap m = identity_map(t);
  for (const auto& [from, to] : moves) m[from] = to;
  return m;
}

// ---- tests ----------------------------------------------------------------------------------

// CandidateSpace numbers exactly the list search_candidates() enumerates, and back.
// CI: < 0.1 s release, ~1 s ASan.
TEST(SearchShape, TheSpaceNumbersEveryCandidate) {
  for (const Named& n : constructed()) {
    const std::vector<SearchCandidate> all = search_candidates(n.sched);
    const CandidateSpace space(n.sched);
    ASSERT_EQ(space.size(), static_cast<std::int64_t>(all.size())) << n.name;
    for (std::size_t i = 0; i < all.size(); ++i) {
      ASSERT_EQ(space.at(static_cast<std::int64_t>(i)), all[i]) << n.name << " " << i;
      ASSERT_EQ(space.index(space.parts(static_cast<std::int64_t>(i))),
                static_cast<std::int64_t>(i));
    }
  }
}

// A policy whose hooks cannot act on a machine (sync-pair with SMT, sync-core and sync-core-v2
// without), or act at no wake of mainline's walks (decides_as()), gets mainline's steady state in
// the search: exactly its own, simulated directly. Fails when decides_as() ignores any one of the
// five hook sites (each tried). CI: ~0.2 s release, ~2 s ASan.
TEST(SearchShape, PoliciesThatDecideAsMainlineShareItsWalksExactly) {
  int shortcuts = 0;
  for (const Named& n : constructed()) {
    SearchOptions all = options(true);
    all.policies.clear();
    for (const WakeupPolicy* p : all_policies()) {
      all.policies.emplace_back(p->id());
      shortcuts += !p->acts_on(n.sched);
    }
    const std::vector<SearchCandidate> c = search_candidates(n.sched);
    for (std::size_t i = 0; i < c.size(); i += 17) {
      SteadyOptions so;
      so.start_a = c[i].start_a;
      so.start_b = c[i].start_b;
      so.busy = c[i].busy;
      so.allowed = c[i].allowed;
      std::vector<SteadyResult> direct;
      for (const WakeupPolicy* p : all_policies())
        direct.push_back(simulate_steady_state(n.sched, so, *p));
      ASSERT_EQ(search_answer(candidate_steady_states(n.sched, all, c[i])), search_answer(direct))
          << n.name << " candidate " << i;
    }
  }
  EXPECT_EQ(shortcuts, 6);  // sync-pair on the 4 SMT machines, the sync-cores on asym-l3
}

// Two members of every orbit answer alike, for sync and non-sync wakes; the symmetric machines
// fold (fewer shapes than candidates), and a reflection of the strided LLC, a renaming that keeps
// the topology but walks the idle scan the other way, is refused and, let in, splits an orbit.
// CI: ~0.5 s release, ~5 s ASan.
TEST(SearchShape, MembersOfAnOrbitAnswerAlike) {
  for (const Named& n : constructed())
    for (bool sync : {true, false}) {
      if (!sync && n.name != "strided-smt2" && n.name != "2-numa") continue;  // CI time
      const std::vector<CpuMap> gens = model_symmetries(n.sched);
      for (const CpuMap& g : gens) EXPECT_EQ(symmetry_violation(n.sched, g), "") << n.name;
      int checked = 0;
      EXPECT_EQ(first_disagreement(n.sched, options(sync), gens, checked), -1)
          << n.name << (sync ? " sync" : " no-sync");
      EXPECT_GT(checked, 0) << n.name;
    }
  // The LLC of the first package of 2-numa (cores 0-1, 2-3) mirrored: cores stay cores, the
  // scans run the other way.
  const SchedTopology numa = constructed()[4].sched;
  const CpuMap mirror = renamed(numa, {{0, 3}, {1, 2}, {2, 1}, {3, 0}});
  EXPECT_NE(symmetry_violation(numa, mirror).find("cyclic order"), std::string::npos);
  std::vector<CpuMap> wrong = model_symmetries(numa);
  wrong.push_back(mirror);
  int checked = 0;
  EXPECT_GE(first_disagreement(numa, options(true), wrong, checked, true), 0);
}

// Renamings that look harmless and are not: each refused, with its reason.
TEST(SearchShape, RenamingsThatChangeTheModelAreRefused) {
  const std::vector<Named> m = constructed();
  const SchedTopology &hybrid = m[1].sched, &asym = m[2].sched, &smt3 = m[3].sched,
                      &numa = m[4].sched;
  // A P-core PU for an E-core PU.
  EXPECT_NE(symmetry_violation(hybrid, renamed(hybrid, {{0, 2}, {2, 0}})), "");
  // The two E-cores of a cluster swapped: the LLC's cyclic order breaks.
  EXPECT_NE(symmetry_violation(hybrid, renamed(hybrid, {{2, 3}, {3, 2}})).find("cyclic"),
            std::string::npos);
  // The two hybrid L3s swapped whole: kept.
  EXPECT_EQ(symmetry_violation(
                hybrid,
                renamed(hybrid, {{0, 4}, {1, 5}, {2, 6}, {3, 7}, {4, 0}, {5, 1}, {6, 2}, {7, 3}})),
            "");
  // A core of the 3-core L3 for one of the 5-core L3.
  EXPECT_NE(symmetry_violation(asym, renamed(asym, {{0, 3}, {3, 0}})), "");
  // The core 0,2,4 (its own LLC) rotated: the LLC's cyclic order is kept, the core's id order,
  // which decides the idle sibling taken, is not.
  EXPECT_NE(
      symmetry_violation(smt3, renamed(smt3, {{0, 2}, {2, 4}, {4, 0}})).find("order of the core"),
      std::string::npos);
  // The two cores swapped in id order: accepted.
  EXPECT_EQ(
      symmetry_violation(smt3, renamed(smt3, {{0, 1}, {2, 3}, {4, 5}, {1, 0}, {3, 2}, {5, 4}})),
      "");
  // Cores of the two NUMA packages swapped alone: the nodes' spans break.
  EXPECT_NE(symmetry_violation(numa, renamed(numa, {{0, 4}, {1, 5}, {4, 0}, {5, 1}})), "");
  // The packages swapped whole: kept.
  EXPECT_EQ(
      symmetry_violation(
          numa, renamed(numa, {{0, 4}, {1, 5}, {2, 6}, {3, 7}, {4, 0}, {5, 1}, {6, 2}, {7, 3}})),
      "");
  // Not a permutation; and the slow switch-out alternatives read ids in order.
  EXPECT_NE(symmetry_violation(numa, renamed(numa, {{0, 1}})), "");
  EXPECT_NE(symmetry_violation(numa, renamed(numa, {{0, 2}, {1, 3}, {2, 0}, {3, 1}}),
                               SymmetryRules{true}),
            "");
  EXPECT_TRUE(model_symmetries(numa, SymmetryRules{true}).empty());
}

// The reduced search chooses the very cases of the exhaustive one (the first member of a shape
// in candidate order, as the exhaustive search takes the first of equals), with the same counts
// and reasons. CI: ~1 s release, ~10 s ASan.
TEST(SearchShape, ReducedChoosesAsExhaustive) {
  for (const Named& n : constructed()) {
    SearchOptions o = options(true);
    const SearchResult reduced = search(n.sched, o);
    o.exhaustive = true;
    const SearchResult all = search(n.sched, o);
    const std::string& what = n.name;
    EXPECT_EQ(reduced.candidates, all.candidates) << what;
    EXPECT_LE(reduced.shapes, all.shapes) << what;
    ASSERT_EQ(reduced.chosen.size(), all.chosen.size()) << what;
    for (std::size_t k = 0; k < all.chosen.size(); ++k) {
      EXPECT_EQ(reduced.chosen[k].candidate, all.chosen[k].candidate) << what << " " << k;
      EXPECT_EQ(reduced.chosen[k].pairs, all.chosen[k].pairs) << what << " " << k;
    }
    for (std::size_t k = 0; k < all.pairs.size(); ++k) {
      EXPECT_EQ(reduced.pairs[k].candidates, all.pairs[k].candidates) << what;
      EXPECT_EQ(reduced.pairs[k].chosen, all.pairs[k].chosen) << what;
      EXPECT_EQ(reduced.pairs[k].best_tv, all.pairs[k].best_tv) << what;
      EXPECT_EQ(reduced.pairs[k].blocked_by, all.pairs[k].blocked_by) << what;
    }
    const std::string a = render_search_text(reduced, o), b = render_search_text(all, o);
    EXPECT_EQ(a.substr(a.find('\n')), b.substr(b.find('\n'))) << what;
  }
}

// SearchShapes, which visits only the candidates of one start per orbit of its cpuset's
// stabilizer, finds the very orbits of the union-find over every candidate: the same count, first
// members and sizes, every candidate in the same shape, every shape's members in the same order;
// on the constructed machines, one with a core offline in one L3 of strided siblings (asymmetric),
// and two fixtures. CI: ~1 s release.
TEST(SearchShape, DirectShapesAreTheUnionFindOrbits) {
  std::vector<Named> machines = constructed();
  machines.push_back(
      {"strided-offline", machine("strided-offline", {{{{{0, 4}}, {{1, 5}}}, {{{2, 6}}, {{3}}}}})});
  for (const std::string name : {"xeon-silver4108-skylake-smt2-2pkg-2numa-32pu.xml",
                                 "amd-ryzen-ai9-hx370-zen5-strixpoint-smt2-2l3-asym.xml"})
    machines.push_back({name, SchedTopology(test::fixture_topology(name))});
  for (const Named& n : machines) {
    const CandidateSpace space(n.sched);
    const std::vector<CpuMap> gens = model_symmetries(n.sched);
    const CandidateOrbits all(space, gens);
    const SearchShapes direct(space, gens);
    ASSERT_EQ(direct.count(), all.count()) << n.name;
    for (std::size_t k = 0; k < all.count(); ++k) {
      ASSERT_EQ(direct.first(k), all.first(k)) << n.name << " shape " << k;
      ASSERT_EQ(direct.size(k), all.size(k)) << n.name << " shape " << k;
    }
    if (all.count() < static_cast<std::size_t>(space.size())) {
      EXPECT_LT(direct.visited(), space.size()) << n.name;
    }
    const std::int64_t step = std::max<std::int64_t>(1, space.size() / 4000);
    for (std::int64_t i = 0; i < space.size(); i += step)
      ASSERT_EQ(direct.shape_of(i), all.orbit_of(i)) << n.name << " candidate " << i;
    const std::size_t every = std::max<std::size_t>(1, all.count() / 100);
    for (std::size_t k = 0; k < all.count(); k += every) {
      const std::vector<std::int64_t> m = all.members(k);
      ASSERT_EQ(direct.first_members(k, m.size()), m) << n.name << " shape " << k;
      ASSERT_EQ(
          direct.first_members(k, 2),
          std::vector<std::int64_t>(m.begin(), m.begin() + std::min<std::size_t>(2, m.size())));
    }
  }
}

// The check for machines the exhaustive search cannot finish: random candidates answer as their
// shape's first member; with a wrong renaming among the generators (the mirror of an LLC, which
// walks the idle scan the other way) it finds one that does not.
TEST(SearchShape, RandomCandidatesCheckFailsOnAWrongRenaming) {
  const SchedTopology numa = constructed()[4].sched;
  const ShapeCheck ok = check_shapes(numa, options(true), 300, 55);
  EXPECT_EQ(ok.differs, -1);
  EXPECT_EQ(ok.checked, 300);
  EXPECT_GT(ok.moved, 150);
  std::vector<CpuMap> wrong = model_symmetries(numa);
  wrong.push_back(renamed(numa, {{0, 3}, {1, 2}, {2, 1}, {3, 0}}));
  const ShapeCheck bad = check_shapes(numa, options(true), 300, 55, &wrong);
  EXPECT_GE(bad.differs, 0);
  EXPECT_LT(bad.shapes, ok.shapes);
}

// NUMA nodes inside one L3 (snc_machine()): the model never reads them, so the L3 rotates as if
// they were not there (one PU along its cyclic order), while a node that spans two L3s is still
// kept (2-numa's packages swapped alone stay refused, above). Every orbit's members answer alike,
// for sync and non-sync wakes, and the reduced search chooses what the exhaustive one does.
TEST(SearchShape, NodesInsideOneL3AreNotReadAndItRotates) {
  const SchedTopology t = snc_machine();
  ASSERT_EQ(t.topology().find(2)->numa, 1);
  ASSERT_EQ(t.topology().find(1)->numa, 0);
  EXPECT_EQ(symmetry_violation(t, renamed(t, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}})),
            "");
  // Across the two L3s the nodes still decide cross-numa: a core moved to the other package
  // alone is refused.
  EXPECT_NE(symmetry_violation(t, renamed(t, {{0, 6}, {3, 9}, {6, 0}, {9, 3}})), "");
  const std::vector<CpuMap> gens = model_symmetries(t);
  for (bool sync : {true, false}) {
    int checked = 0;
    EXPECT_EQ(first_disagreement(t, options(sync), gens, checked, true), -1) << sync;
    EXPECT_GT(checked, 0);
  }
  SearchOptions o = options(true);
  const SearchResult reduced = search(t, o);
  o.exhaustive = true;
  const SearchResult all = search(t, o);
  EXPECT_LT(reduced.shapes * 4, all.shapes);
  ASSERT_EQ(reduced.chosen.size(), all.chosen.size());
  for (std::size_t k = 0; k < all.chosen.size(); ++k)
    EXPECT_EQ(reduced.chosen[k].candidate, all.chosen[k].candidate) << k;
  for (std::size_t k = 0; k < all.pairs.size(); ++k) {
    EXPECT_EQ(reduced.pairs[k].candidates, all.pairs[k].candidates);
    EXPECT_EQ(reduced.pairs[k].blocked_by, all.pairs[k].blocked_by);
  }
  const std::string a = render_search_text(reduced, o), b = render_search_text(all, o);
  EXPECT_EQ(a.substr(a.find('\n')), b.substr(b.find('\n')));
}

// A control that says stop: the search chooses among what it simulated and says it was cut.
TEST(SearchShape, ACutSearchSaysSo) {
  const SchedTopology t = constructed()[0].sched;
  const SearchOptions o = options(true);
  std::int64_t seen_total = 0;
  const SearchResult r = search(t, o, [&](std::int64_t done, std::int64_t total) {
    seen_total = total;
    return done < 3;
  });
  EXPECT_TRUE(r.cut);
  EXPECT_EQ(r.simulated, 3);
  EXPECT_EQ(seen_total, r.shapes);
  EXPECT_NE(render_search_text(r, o).find("INCOMPLETE, cut short after 3 of "), std::string::npos);
  EXPECT_FALSE(search(t, o, [](std::int64_t, std::int64_t) { return true; }).cut);
  EXPECT_EQ(search_progress_line(30, 120, 10),
            "search: 30/120 shapes simulated, 0:10 spent  ETA 0:30\n");
  // One of 45,924,864 shapes after 36 s (a 512-PU machine) printed "ETA -35791394:-8".
  EXPECT_EQ(search_progress_line(1, 45924864, 36),
            "search: 1/45924864 shapes simulated, 0:36 spent  ETA 6000000:00\n");
}

// On the 128- and 176-PU fixtures, 200 random candidates each answer as their orbit's first
// member (2 s in the release build).
TEST(SearchShapeLong, RandomCandidatesOnLargeMachinesAnswerAsTheirShape) {
  for (const std::string name : {"arm64-kunpeng920-nosmt-2pkg-4numa-128c.xml",
                                 "power9-smt4-2pkg-2numa-176pu-sierra-asym-l3.xml"}) {
    const SchedTopology t(test::fixture_topology(name));
    const CandidateSpace space(t);
    const CandidateOrbits orbits(space, model_symmetries(t));
    EXPECT_LT(static_cast<std::int64_t>(orbits.count()) * 20, space.size()) << name;
    std::mt19937_64 rng(38);
    std::uniform_int_distribution<std::int64_t> pick(0, space.size() - 1);
    int moved = 0;
    for (int k = 0; k < 200; ++k) {
      const std::int64_t i = pick(rng);
      const std::int64_t first = orbits.first(orbits.orbit_of(i));
      moved += first != i;
      EXPECT_EQ(answer(t, options(true), space.at(i)), answer(t, options(true), space.at(first)))
          << name << " candidate " << i;
    }
    EXPECT_GT(moved, 150) << name;
  }
}

}  // namespace
}  // namespace wb
