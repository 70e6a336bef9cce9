// `wakebench predict --results R.json` and the predictions block of `wakebench run`
// (docs/policy-model.md#results): every kernel-placed case predicted as it ran, priced with the
// pinned cases of its own params point, judged per policy (docs/policy-model.md#verdicts), and
// each patch's premise on this machine.
#include "analysis/predict/predict_results.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "analysis/predict/discriminate.h"
#include "analysis/predict/intermittent.h"
#include "analysis/predict/replay_io.h"
#include "analysis/results/resultset_io.h"
#include "common/schema/registry.h"
#include "common/util/cpulist.h"

namespace wb {

namespace {

using nlohmann::json;

// Wake flags a mechanism carries on a real kernel (docs/policy-model.md#wake-flags, the registry),
// used when a case lacks the tag.
std::optional<WakeFlags> default_wake_flags(const std::string& mechanism) {
  const MechanismEntry* m = registry().find_mechanism(mechanism);
  if (!m || m->no_kernel_wakeup) return std::nullopt;
  return m->wake_flags;
}

// Why a mechanism's tasks never block ("busy-poll"); nullopt: they block (or it is unknown).
std::optional<std::string> no_kernel_wakeup(const std::string& mechanism) {
  const MechanismEntry* m = registry().find_mechanism(mechanism);
  return m ? m->no_kernel_wakeup : std::nullopt;
}

// Why the model does not describe a mechanism's cases (fanout); nullopt: it does.
std::optional<std::string> not_modelled(const std::string& mechanism) {
  const MechanismEntry* m = registry().find_mechanism(mechanism);
  return m ? m->not_modelled : std::nullopt;
}

// Why a side of the pair is in another class than fair (the `sched` knob: SCHED_FIFO), whose
// wakes the RT class places (docs/policy-model.md#not-fair); nullopt: both are fair tasks.
std::optional<std::string> other_class(const Params& params) {
  for (int side = 0; side < 2; ++side)
    if (params.sched[side] && params.sched[side]->kind == SchedPolicy::kFifo)
      return std::string(side == 0 ? "the waker" : "the wakee") +
             " runs SCHED_FIFO: the RT class places its wakes (select_task_rq_rt), not fair.c";
  return std::nullopt;
}

// The cases of one params point: one mechanism and mode at one set of knob values
// (CaseView::same_point). A kernel case is predicted and costed from its own point's pinned cases.
struct Point {
  std::vector<const CaseView*> cases;
  std::map<std::string, double> pinned;  // class -> median of its first ok pinned case
  std::map<std::string, const CaseView*> pinned_case;  // class -> that case
  std::optional<WakeFlags> flags;
  std::optional<double> kernel_rtt;       // the default-cpuset kernel case's median, else the first
  const CaseView* kernel_case = nullptr;  // that case
  const CaseView& first() const { return *cases.front(); }
  // "pipe/threads/work=500ns", "binder-like/processes/w2s4", "pipe/threads" at the defaults.
  std::string label() const { return first().mech_mode() + first().suffix; }
  std::optional<double> pinned_at(const std::string& cls) const {
    auto it = pinned.find(cls);
    if (it == pinned.end()) return std::nullopt;
    return it->second;
  }
  // Why class `cls` has no cost here: "n/a: no pinned llc case with work=10000ns", or what
  // happened to that pinned case. Never another point's cost.
  std::string no_cost(const std::string& cls) const {
    const std::string what = "pinned " + cls + " case with " + params_text(first().params);
    for (const CaseView* c : cases)
      if (c->kind == PlacementKind::kPinned && class_id(*c->cls) == cls && !c->ok())
        return "n/a: " + what + " " + std::string(status_id(c->status)) +
               (c->reason.empty() ? "" : ": " + c->reason);
    return "n/a: no " + what;
  }
};

std::vector<Point> points_of(const std::vector<CaseView>& views) {
  std::vector<Point> points;
  for (const CaseView& c : views) {
    auto it = std::find_if(points.begin(), points.end(),
                           [&](const Point& p) { return p.first().same_point(c); });
    if (it == points.end()) {
      points.push_back({});
      it = points.end() - 1;
    }
    it->cases.push_back(&c);
  }
  for (Point& pt : points) {
    for (const CaseView* c : pt.cases) {
      if (c->wake_flags && !pt.flags) pt.flags = c->wake_flags;
      if (c->kind == PlacementKind::kKernel) {
        // The premises compare with the default-cpuset kernel case when there are several.
        if (c->ok() && (c->placement == "kernel" || !pt.kernel_rtt)) {
          pt.kernel_rtt = c->rtt.get("median");
          pt.kernel_case = c;
        }
      } else if (c->kind == PlacementKind::kPinned && c->ok()) {
        const std::string cls(class_id(*c->cls));
        if (pt.pinned.try_emplace(cls, *c->rtt.get("median")).second) pt.pinned_case[cls] = c;
      }
    }
    if (!pt.flags) pt.flags = default_wake_flags(pt.first().mechanism);
  }
  return points;
}

// The LLC as the measured kernel drew it: the highest SD_SHARE_LLC level of the lowest CPU in the
// recorded sched domains (environment.sched_domains), else the XML's L3/L2 rule, saying why.
std::pair<LlcSource, std::string> recorded_llc(const EnvironmentView& env) {
  if (env.no_sched_domains) {
    std::string why = "the set records no sched domains";
    if (!env.no_sched_domains->empty()) why += " (" + *env.no_sched_domains + ")";
    return {LlcSource::kAuto, "the XML's L3/L2 rule: " + why};
  }
  std::optional<int> cpu;
  for (const RecordedDomain& d : env.sched_domains) cpu = std::min(cpu.value_or(INT32_MAX), d.cpu);
  std::vector<std::pair<int, std::pair<std::string, std::string>>> levels;
  for (const RecordedDomain& d : env.sched_domains)
    if (d.cpu == cpu && d.domain && d.name) levels.push_back({*d.domain, {*d.name, d.flags}});
  if (levels.empty())
    return {LlcSource::kAuto,
            "the XML's L3/L2 rule: the recorded sched domains have no CPU's "
            "levels with a name and a number"};
  std::sort(levels.begin(), levels.end());
  std::vector<std::pair<std::string, std::string>> domains;
  std::string names;
  for (const auto& [i, nf] : levels) {
    domains.push_back(nf);
    names += (names.empty() ? "" : " ") + (nf.first.empty() ? "?" : nf.first);
  }
  if (auto llc = llc_source_from_domains(domains))
    return {*llc, "the recorded sched domains of CPU " + std::to_string(*cpu) + " (" + names + ")"};
  return {LlcSource::kAuto, "the XML's L3/L2 rule: the recorded sched domains of CPU " +
                                std::to_string(*cpu) + " (" + names +
                                ") name no level this model knows as the LLC"};
}

// The classes a pair confined to `allowed` (empty: every CPU) can be observed in, nearest first.
std::vector<std::string> cpuset_classes(const SchedTopology& sched,
                                        const std::vector<int>& allowed) {
  const std::vector<int>& cpus = allowed.empty() ? sched.cpus() : allowed;
  std::set<PlacementClass> seen;
  for (int a : cpus)
    for (int b : cpus) seen.insert(classify(sched.topology(), a, b));
  std::vector<std::string> out;
  for (PlacementClass c : kAllClasses)
    if (seen.count(c)) out.emplace_back(class_id(c));
  return out;
}

MeasuredPlacement measured_of(const CaseView& kc) {
  MeasuredPlacement m{
      std::string(status_id(kc.status)), kc.rtt.get("median"), {}, {}, nullptr, std::nullopt};
  if (kc.observed.recorded) {
    m.histogram = kc.observed.histogram;
    m.migrations = kc.observed.migrations_json;
    double total = 0;
    for (const auto& [c, n] : m.histogram) total += n;
    if (total > 0)
      for (const auto& [c, n] : m.histogram)
        if (n > 0) m.classes[c] += n / total;
  }
  if (kc.trace && kc.trace->counted()) m.trace = kc.trace;
  return m;
}

// Predicted RTT = sum over classes of share x the point's pinned median of that class.
void price(PolicyPrediction& p, const Point& pt) {
  double rtt = 0;
  for (const auto& [cls, f] : p.steady.classes) {
    const std::string id(class_id(cls));
    if (auto m = pt.pinned_at(id)) {
      rtt += f * *m;
    } else {
      p.missing.push_back(id);
      p.unpriced += (p.unpriced.empty() ? "" : "; ") + pt.no_cost(id);
    }
  }
  if (p.missing.empty()) p.rtt_ns = rtt;
}

// Memoised range_coverage(): many cases share a range.
class CoverageCache {
 public:
  double get(const SteadyResult& r, const std::vector<std::string>& classes) {
    const ClassShares steady = class_shares(r.classes);
    const std::vector<ClassShares> alts = alternatives_of(r);
    const std::string key = json(steady).dump() + json(alts).dump() + json(classes).dump();
    auto it = memo_.find(key);
    if (it == memo_.end())
      it = memo_.emplace(key, range_coverage(steady, alts, classes, kMatchDistance)).first;
    return it->second;
  }

 private:
  std::map<std::string, double> memo_;
};

// Whether the case's `sched` knob made both tasks SCHED_IDLE.
bool both_sched_idle(const Params& knobs) {
  const auto idle = [](const std::optional<SchedPolicy>& p) {
    return p && p->kind == SchedPolicy::kIdle;
  };
  return idle(knobs.sched[0]) && idle(knobs.sched[1]);
}

// The steady-state options of the case that ran: flags, cpuset, start, busy CPUs and SCHED_IDLE.
SteadyOptions options_for(const CasePrediction& e, bool emulated, const ModelFeatures& features) {
  SteadyOptions opt;
  opt.features = features;
  opt.sync = e.wake_flags == WakeFlags::kSync;
  opt.current_cpu = e.wake_flags == WakeFlags::kCurrentCpu;
  // Without TTWU_QUEUE no wake is queued on a CPU still switching out: nothing to add.
  opt.slow_switch_out = features.ttwu_queue && slow_switch_out_applies(emulated, e.knobs.work_ns);
  opt.allowed = e.allowed;
  opt.busy = e.busy;
  opt.sched_idle = both_sched_idle(e.knobs);
  if (e.start.first >= 0) std::tie(opt.start_a, opt.start_b) = e.start;
  return opt;
}

// Groups nearest first by strict distance; equal distances keep policy order.
void rank_groups(CasePrediction& e) {
  if (!e.measured || e.measured->classes.empty()) return;
  std::stable_sort(e.groups.begin(), e.groups.end(),
                   [&](const PolicyGroup& a, const PolicyGroup& b) {
                     return e.first_of(a).fit->strict < e.first_of(b).fit->strict;
                   });
}

void set_case_setup(CasePrediction& e, const CaseView* kc, const SchedTopology& sched) {
  if (!kc) return;
  const KernelSetup k = kernel_setup(*kc, sched.topology());
  e.allowed = k.allowed;
  if (k.start) e.start = {k.start->first, k.start->second};
  e.busy = kc->background;
  for (int c : e.busy)
    if (!sched.has_cpu(c))
      throw std::invalid_argument("case " + kc->name + ": background CPU " + std::to_string(c) +
                                  " is not in topology " + sched.topology().source());
}

// With the background busy part of the time (the duty knob), each policy's intermittent mix
// (docs/policy-model.md#intermittent) in place of its steady state with the background on.
void put_duty_mixes(const CasePrediction& e, const SchedTopology& sched, const SteadyOptions& opt,
                    std::vector<SteadyResult>& results) {
  if (!e.knobs.duty || opt.busy.empty()) return;
  std::vector<const WakeupPolicy*> policies;
  for (const SteadyResult& r : results) policies.push_back(&policy_by_id(r.policy));
  const int period_ms = static_cast<int>(duty_period_ns(e.knobs) / 1000000);
  const Intermittent load{*e.knobs.duty, period_wakes(period_ms)};
  std::vector<IntermittentResult> mixes = simulate_intermittent(sched, opt, policies, load);
  put_mixes(results, mixes);
}

CasePrediction::IdPairs id_pairs(const std::vector<SteadyResult>& results) {
  CasePrediction::IdPairs out;
  for (const auto& [i, j] : discriminated_pairs(results))
    out.emplace_back(results[i].policy, results[j].policy);
  return out;
}

void set_discriminated(CasePrediction& e, const SchedTopology& sched, const SteadyOptions& opt,
                       const std::vector<SteadyResult>& results) {
  e.discriminates = id_pairs(results);
  if (!opt.slow_switch_out) return;
  SteadyOptions native = opt;
  native.slow_switch_out = false;
  e.discriminates_native = id_pairs(simulate_steady_state(sched, native));
}

CasePrediction predict_case(const SchedTopology& sched, const Point& pt, const CaseView* kc,
                            bool emulated, const ModelFeatures& features, CoverageCache& coverage) {
  const CaseView& first = pt.first();
  CasePrediction e{kc ? kc->name : pt.label(),
                   first.mechanism,
                   std::string(mode_id(first.mode)),
                   kc ? kc->placement : "kernel",
                   first.params_json,
                   first.params,
                   pt.pinned};
  if (const auto busy = no_kernel_wakeup(first.mechanism)) {
    e.skipped = *busy + ": no kernel wakeup to model";
    return e;
  }
  if (const auto why = not_modelled(first.mechanism)) {
    e.skipped = "not compared: " + *why;
    return e;
  }
  if (const auto why = other_class(first.params)) {
    e.skipped = "not compared: " + *why;
    return e;
  }
  if (!pt.flags) {
    e.skipped = "no kernel wakeup to model (wake_flags unknown)";
    return e;
  }
  e.wake_flags = *pt.flags;
  set_case_setup(e, kc, sched);
  const SteadyOptions opt = options_for(e, emulated, features);
  std::vector<SteadyResult> results = simulate_steady_state(sched, opt);
  put_duty_mixes(e, sched, opt, results);
  set_discriminated(e, sched, opt, results);
  const auto [def_a, def_b] = default_start_pair(sched, opt.allowed);
  e.start = {opt.start_a.value_or(def_a), opt.start_b.value_or(def_b)};
  e.classes = cpuset_classes(sched, e.allowed);
  if (kc) e.measured = measured_of(*kc);
  for (SteadyResult& r : results) {
    PolicyPrediction p{std::move(r)};
    price(p, pt);
    p.coverage = coverage.get(p.steady, e.classes);
    if (e.measured && !e.measured->classes.empty()) {
      p.fit = closest_in_range(e.measured->classes, class_shares(p.steady.classes),
                               alternatives_of(p.steady));
      p.verdict = judge(*p.fit, p.coverage);
    }
    e.policies.push_back(std::move(p));
  }
  std::vector<SteadyResult> steady;
  for (const auto& p : e.policies) steady.push_back(p.steady);
  e.groups = group_policies(steady);
  rank_groups(e);
  return e;
}

// A patch's premise at each params point apart: is `a` cheaper than `b` (medians of that
// point's cases; the verdict over their repetitions: judge_premises).
PremiseCheck check_at(const Point& pt, const std::string& a, const CaseView* a_case,
                      const std::string& b, const CaseView* b_case) {
  const auto median = [](const CaseView* c) { return c ? c->rtt.get("median") : std::nullopt; };
  PremiseCheck check{.label = pt.label(),
                     .mechanism = pt.first().mechanism,
                     .mode = std::string(mode_id(pt.first().mode)),
                     .params = pt.first().params_json,
                     .a = a,
                     .b = b,
                     .a_rtt_ns = median(a_case),
                     .b_rtt_ns = median(b_case)};
  if (a_case && b_case) {
    const Metric metric = parse_metric("median");
    check.base = case_cell(*b_case, metric);
    check.judged = case_cell(*a_case, metric);
  }
  return check;
}

const CaseView* pinned_case_at(const Point& pt, const std::string& cls) {
  const auto it = pt.pinned_case.find(cls);
  return it == pt.pinned_case.end() ? nullptr : it->second;
}

// compare's verdict on every check, a against b, Benjamini-Hochberg across the set's distinct
// checks (sync-core and sync-core-v2 share theirs: judged once, copied).
void judge_premises(std::vector<Premise>& premises) {
  std::map<std::string, PremiseCheck*> first;
  std::vector<CellPair> family;
  for (Premise& p : premises)
    for (PremiseCheck& c : p.checks)
      if (c.judged && first.try_emplace(c.label + " " + c.a + " " + c.b, &c).second)
        family.push_back({&*c.base, &*c.judged});
  judge_family(family, CompareOptions{}, false);
  for (Premise& p : premises)
    for (PremiseCheck& c : p.checks)
      if (PremiseCheck* j = first[c.label + " " + c.a + " " + c.b]; c.judged && j != &c)
        c.judged = j->judged;
}

// Why a class has no measurement: the skipped case's reason, else the topology's.
std::string missing_reason(const SchedTopology& sched, const std::vector<CaseView>& views,
                           const std::string& cls) {
  for (const CaseView& c : views)
    if (c.kind == PlacementKind::kPinned && class_id(*c.cls) == cls && !c.ok() && !c.reason.empty())
      return c.reason;
  for (const auto& cp : choose_pairs(sched.topology())) {
    if (std::string(class_id(cp.cls)) == cls && !cp.available) return cp.reason;
  }
  return "no ok " + cls + " case in the result set";
}

// Whether the point's wakes are those the premise is about.
bool premise_wakes(const PolicyPremise& pr, const Point& pt) {
  if (!pt.flags) return false;
  if (pr.wakes == PolicyPremise::Wakes::kSync) return *pt.flags == WakeFlags::kSync;
  const MechanismEntry* e = registry().find_mechanism(pt.first().mechanism);
  return e && e->futex_handoff;
}

// One pinned class against another (sync-pair's same-cpu vs llc).
Premise class_premise(const std::string& policy, const PolicyPremise& pr,
                      const std::vector<Point>& points, const SchedTopology& sched,
                      const std::vector<CaseView>& views) {
  Premise p{policy, pr.text, {}, std::nullopt};
  const std::string& a = pr.cheaper;
  const std::string& b = pr.than;
  for (const Point& pt : points)
    if (premise_wakes(pr, pt))
      p.checks.push_back(check_at(pt, a, pinned_case_at(pt, a), b, pinned_case_at(pt, b)));
  for (const auto& cls : {a, b}) {
    const bool any = std::any_of(points.begin(), points.end(), [&](const Point& pt) {
      return premise_wakes(pr, pt) && pt.pinned_at(cls).has_value();
    });
    if (!any)
      p.not_measurable =
          "not measurable here: no " + cls + " class (" + missing_reason(sched, views, cls) + ")";
  }
  if (p.checks.empty())
    p.not_measurable = std::string("not measurable here: no ") +
                       (pr.wakes == PolicyPremise::Wakes::kSync ? "sync" : "futex handoff") +
                       " mechanism";
  return p;
}

// A pinned class (stacking on the waker) against what the running kernel chose.
Premise kernel_premise(const std::string& policy, const PolicyPremise& pr,
                       const std::vector<Point>& points, const SchedTopology& sched,
                       const std::vector<CaseView>& views) {
  Premise p{policy, pr.text, {}, std::nullopt};
  const std::string& a = pr.cheaper;
  for (const Point& pt : points)
    if (premise_wakes(pr, pt))
      p.checks.push_back(check_at(pt, a, pinned_case_at(pt, a), "kernel", pt.kernel_case));
  if (p.checks.empty()) {
    p.not_measurable = "not measurable here: no matching mechanism";
  } else if (std::none_of(p.checks.begin(), p.checks.end(),
                          [](const PremiseCheck& c) { return c.a_rtt_ns.has_value(); })) {
    p.not_measurable =
        "not measurable here: no " + a + " class (" + missing_reason(sched, views, a) + ")";
  }
  return p;
}

// Each patch's premise (registry/registry.json) with the measured numbers
// (docs/policy-model.md#policies; the seeds' claims).
std::vector<Premise> premises_of(const std::vector<Point>& points, const SchedTopology& sched,
                                 const std::vector<CaseView>& views) {
  std::vector<Premise> premises;
  for (const PolicyEntry& e : registry().policies) {
    if (!e.premise) continue;
    premises.push_back(e.premise->than == "kernel"
                           ? kernel_premise(e.id, *e.premise, points, sched, views)
                           : class_premise(e.id, *e.premise, points, sched, views));
  }
  judge_premises(premises);
  return premises;
}

}  // namespace

SchedTopology sched_topology_of(const ResultSet& rs) {
  if (!rs.set.topology || !rs.set.topology->xml)
    throw std::invalid_argument("result set: no embedded topology XML at topology.xml");
  const std::string source =
      rs.machine.topology_source.empty() ? "result set" : rs.machine.topology_source;
  return SchedTopology(Topology::from_xml_buffer(*rs.set.topology->xml, source),
                       recorded_llc(rs.machine).first);
}

SetFeatures set_features(const ResultSet& rs) {
  const auto& recorded = rs.machine.sched_features;
  return set_features(recorded ? &*recorded : nullptr, rs.set.ab ? &rs.set.ab->values : nullptr);
}

namespace {

ResultsPrediction predict(const ResultSet& rs) {
  const std::vector<CaseView>& views = rs.views;
  const SchedTopology sched = sched_topology_of(rs);
  const auto [llc, llc_from] = recorded_llc(rs.machine);
  ResultsPrediction out{sched.topology().source(), llc, llc_from, sched.node_reclaim_distance()};
  for (int cpu : sched.cpus()) out.domains[cpu] = sched.domains(cpu);
  // A guest under qemu TCG (environment.emulated, set by the lab) switches tasks out slowly next
  // to its partner's reaction (docs/policy-model.md#switching-out).
  out.emulated = rs.machine.emulated;
  out.features = set_features(rs);
  const std::vector<Point> points = points_of(views);
  CoverageCache coverage;
  for (const Point& pt : points) {
    std::vector<const CaseView*> kernel_cases;
    for (const CaseView* c : pt.cases)
      if (c->kind == PlacementKind::kKernel) kernel_cases.push_back(c);
    if (kernel_cases.empty()) kernel_cases.push_back(nullptr);  // predicted, not measured
    for (const CaseView* kc : kernel_cases)
      out.cases.push_back(predict_case(sched, pt, kc, out.emulated, out.features.model, coverage));
  }
  // A premise is about one waker handing off to one wakee: not checked on the cases the model
  // does not describe.
  std::vector<Point> modelled;
  for (const Point& pt : points)
    if (!not_modelled(pt.first().mechanism)) modelled.push_back(pt);
  out.premises = premises_of(modelled, sched, views);
  return out;
}

}  // namespace

std::string_view premise_verdict_word(PremiseVerdict v) {
  switch (v) {
    case PremiseVerdict::kHolds:
      return "holds";
    case PremiseVerdict::kFails:
      return "fails";
    case PremiseVerdict::kCannotTell:
      break;
  }
  return "cannot tell";
}

std::optional<PremiseVerdict> PremiseCheck::verdict() const {
  if (!judged || !judged->decision) return std::nullopt;
  switch (judged->decision->verdict) {
    case CompareVerdict::kDifferent:
      return judged->slower() ? PremiseVerdict::kFails : PremiseVerdict::kHolds;
    case CompareVerdict::kSame:
      return PremiseVerdict::kFails;
    case CompareVerdict::kUnknown:
      break;
  }
  return PremiseVerdict::kCannotTell;
}

std::string_view verdict_word(Verdict v) {
  switch (v) {
    case Verdict::kMatch:
      return "MATCH";
    case Verdict::kExplained:
      return "EXPLAINED";
    case Verdict::kNoPrediction:
      return "NO-PREDICTION";
    case Verdict::kMiss:
      return "MISS";
  }
  return "?";
}

std::optional<Verdict> parse_verdict(std::string_view word) {
  for (Verdict v : {Verdict::kMatch, Verdict::kExplained, Verdict::kNoPrediction, Verdict::kMiss})
    if (verdict_word(v) == word) return v;
  return std::nullopt;
}

Verdict judge(const RangeFit& fit, double coverage) {
  if (fit.strict <= kMatchDistance) return Verdict::kMatch;
  if (coverage >= kNoPredictionCoverage) return Verdict::kNoPrediction;
  if (fit.best <= kMatchDistance) return Verdict::kExplained;
  return Verdict::kMiss;
}

ResultsPrediction predict_for_results(const ResultSet& rs) {
  ResultsPrediction out = predict(rs);
  out.kernel_release = rs.machine.kernel_release;
  out.not_fair = rs.machine.not_fair;
  if (!out.not_fair.empty())  // placements the model does not describe: nothing is scored
    for (CasePrediction& e : out.cases)
      for (PolicyPrediction& p : e.policies) p.verdict.reset();
  return out;
}

ResultsPrediction predict_for_results(const json& doc) {
  ResultSet rs;
  try {
    rs = check_result_set(doc);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("result set: ") + e.what());
  }
  return predict_for_results(rs);
}

void attach_replays(ResultsPrediction& p, const CaseReplays& replays) {
  for (CasePrediction& e : p.cases)
    for (const auto& [name, r] : replays.cases)
      if (name == e.label) e.replay = digest_of(r);
}

ResultsPrediction predict_for_results_file(const std::string& path) {
  // The loader compare and report use: the same schema checks and messages for every command.
  const ResultSet rs = load_result_set(path);
  ResultsPrediction p;
  try {
    p = predict_for_results(rs);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("results " + path + ": " + e.what());
  }
  if (rs.set.decisions) try {
      attach_replays(p, replay_recorded(rs, path));
    } catch (const std::exception& e) {
      p.replay_unavailable = e.what();
    }
  return p;
}

}  // namespace wb
