// The renderers of a result set's predictions (analysis/predict/predict_results.h): the JSON of
// docs/result-set.md#predictions and the text `run` and `predict --results` print. The only place
// a prediction becomes words.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "analysis/model/model_kernel.h"
#include "analysis/predict/predict_results.h"
#include "common/schema/wakeup_trace.h"  // kPathSelection, ...
#include "common/util/cpulist.h"
#include "common/util/text.h"

namespace wb {

namespace {

using nlohmann::json;

// An alternative with less weight than this in the closest mix is not named.
constexpr double kNamedWeight = 0.005;

double round2(double v) { return std::round(v * 100.0) / 100.0; }
double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

json rtt_json(const std::optional<double>& ns) { return ns ? json(round2(*ns)) : json(nullptr); }

// The count under `key`, 0 when there is none.
int64_t count_in(const std::map<std::string, int64_t>& counts, const std::string& key) {
  const auto it = counts.find(key);
  return it == counts.end() ? 0 : it->second;
}

// What the case's --trace-wakeups summary shows of an alternative's cause ("" when it shows
// nothing of it): the counters docs/result-set.md#trace defines for each.
std::string trace_evidence(AltCause::Kind kind, const std::optional<TraceView>& t) {
  if (!t) return "";
  const auto n = [](int64_t x) { return std::to_string(x); };
  switch (kind) {
    case AltCause::Kind::kBusyPrev:
      return "traced: " + n(t->moved) + " of " + n(t->wakeups) + " wakes moved the wakee; " +
             n(t->foreign_wakeups) + " wakes by other tasks";
    case AltCause::Kind::kBusyPrevStays:
      return "traced: " + n(t->stacked_wakes) +
             " wakes onto the waker's CPU, the waker preempted after " +
             n(t->stacked_waker_preempted);
    case AltCause::Kind::kStaleIdleCores: {
      int64_t onto_sibling = 0;
      if (t->classes_by_path && t->classes_by_path->count(kPathSelection))
        onto_sibling = count_in(t->classes_by_path->at(kPathSelection), "smt-sibling");
      return "traced: " + n(onto_sibling) + " selections onto the waker's sibling";
    }
    case AltCause::Kind::kHeldAtStart:
      return "traced: " + n(count_in(t->paths, kPathQueuedRemote)) +
             " wakes queued on a CPU still switching out";
    case AltCause::Kind::kBalancerPull:
      return "traced: " + n(t->migrations_other) + " migrations outside wakeups";
    case AltCause::Kind::kReversedStart:
      return "";
  }
  return "";
}

json fit_json(const RangeFit& f) {
  json w = json::array();
  for (double x : f.weights) w.push_back(round3(x));
  return {{"strict", round3(f.strict)},
          {"best", round3(f.best)},
          {"share", round3(f.share)},
          {"alternative", f.alternative ? json(*f.alternative) : json(nullptr)},
          {"weights", w}};
}

// The alternatives a fit's mix names (weight at least kNamedWeight), with the trace's evidence.
json explained_by_json(const PolicyPrediction& p, const std::optional<TraceView>& trace) {
  json out = json::array();
  for (size_t i = 0; p.fit && i < p.fit->weights.size(); ++i) {
    if (p.fit->weights[i] < kNamedWeight) continue;
    const AltCause& cause = p.steady.alternatives[i].cause;
    json a = {
        {"alternative", i}, {"weight", round3(p.fit->weights[i])}, {"cause", cause_json(cause)}};
    if (std::string ev = trace_evidence(cause.kind, trace); !ev.empty()) a["evidence"] = ev;
    out.push_back(a);
  }
  return out;
}

json policy_json(const PolicyPrediction& p, const std::optional<TraceView>& trace) {
  json j = {{"classes", classes_json(p.steady.classes)},
            {"cpus", p.steady.cpus},
            {"settled", p.steady.settled},
            {"first_paths", p.steady.first_paths},
            {"predicted_rtt_ns", rtt_json(p.rtt_ns)},
            {"coverage", round3(p.coverage)}};
  if (!p.missing.empty()) {
    j["missing_classes"] = p.missing;
    j["unpriced"] = p.unpriced;
  }
  if (!p.steady.alternatives.empty()) {
    json alts = json::array();
    for (const auto& a : p.steady.alternatives)
      alts.push_back(
          {{"cause", cause_json(a.cause)}, {"classes", classes_json(a.classes)}, {"cpus", a.cpus}});
    json bounds = json::object();
    for (const auto& [c, lh] : share_bounds(p.steady)) bounds[c] = {lh.first, lh.second};
    j["uncertain"] = {{"alternatives", alts}, {"bounds", bounds}};
  }
  if (p.fit) j["distance"] = fit_json(*p.fit);
  if (p.verdict) {
    j["verdict"] = std::string(verdict_word(*p.verdict));
    if (*p.verdict == Verdict::kExplained) j["explained_by"] = explained_by_json(p, trace);
  }
  return j;
}

json measured_json(const MeasuredPlacement& m) {
  json j = {{"status", m.status}};
  if (m.rtt_ns) j["rtt_ns"] = *m.rtt_ns;
  if (!m.histogram.empty() || !m.classes.empty()) {
    json h = json::object();
    for (const auto& [c, n] : m.histogram) h[c] = n;
    j["histogram"] = h;
    j["classes"] = m.classes;
    if (!m.migrations.is_null()) j["migrations"] = m.migrations;
  }
  if (m.trace) {
    j["trace"] = {
        {"wakeups", m.trace->wakeups}, {"paths", m.trace->paths}, {"dropped", m.trace->dropped}};
    if (m.trace->classes_by_path) j["trace"]["classes_by_path"] = *m.trace->classes_by_path;
  }
  return j;
}

json group_json(const CasePrediction& e, const PolicyGroup& g) {
  json members = json::array();
  for (size_t i : g.members) members.push_back(e.policies[i].steady.policy);
  const PolicyPrediction& p = e.first_of(g);
  json j = {{"name", g.name},
            {"policies", members},
            {"classes", classes_json(p.steady.classes)},
            {"predicted_rtt_ns", rtt_json(p.rtt_ns)},
            {"coverage", round3(p.coverage)}};
  if (!p.steady.alternatives.empty()) {
    json alts = json::array();
    for (const auto& a : p.steady.alternatives) alts.push_back(classes_json(a.classes));
    j["alternatives"] = alts;
  }
  if (!p.unpriced.empty()) j["unpriced"] = p.unpriced;
  if (p.fit) j["distance"] = fit_json(*p.fit);
  if (p.verdict) j["verdict"] = std::string(verdict_word(*p.verdict));
  return j;
}

json case_json_of(const CasePrediction& e) {
  json j = {{"case", e.label},          {"mechanism", e.mechanism}, {"mode", e.mode},
            {"placement", e.placement}, {"params", e.params},       {"pinned_rtt_ns", e.pinned}};
  if (e.skipped) {
    j["skipped"] = *e.skipped;
    return j;
  }
  const std::optional<TraceView> trace = e.measured ? e.measured->trace : std::nullopt;
  j["wake_flags"] = std::string(wake_flags_id(e.wake_flags));
  j["start"] = {e.start.first, e.start.second};
  j["allowed"] = e.allowed.empty() ? std::string("all") : format_cpu_list(e.allowed);
  j["busy"] = e.busy;
  j["classes"] = e.classes;
  json policies = json::object();
  for (const auto& p : e.policies) policies[p.steady.policy] = policy_json(p, trace);
  j["policies"] = policies;
  j["measured"] = e.measured ? measured_json(*e.measured) : json(nullptr);
  json groups = json::array(), matching = json::array();
  for (const auto& g : e.groups) {
    groups.push_back(group_json(e, g));
    if (e.first_of(g).verdict == Verdict::kMatch) matching.push_back(g.name);
  }
  j["groups"] = groups;
  j["consistent_with"] = matching;
  j["discriminates"] = e.discriminates;
  if (e.discriminates_native) j["discriminates_native"] = *e.discriminates_native;
  if (e.replay)
    j["replay"] = {{"wakeups", e.replay->wakeups},
                   {"reproduced", e.replay->reproduced},
                   {"common_disagreement", e.replay->common},
                   {"common_count", e.replay->common_count}};
  const auto& nearest = e.first_of(e.groups.front());
  j["verdict"] =
      nearest.verdict ? json(std::string(verdict_word(*nearest.verdict))) : json(nullptr);
  return j;
}

// The change a against b in percent (+ = a cheaper) and its interval, from the judged cell.
std::pair<double, double> premise_interval(const CompareCell& j) {
  return {(1 - j.interval->hi) * 100, (1 - j.interval->lo) * 100};
}

// compare's verdict of a check (PremiseCheck::verdict) and the numbers behind it.
void add_premise_verdict(const PremiseCheck& c, PremiseVerdict v, json& k) {
  const CompareCell& j = *c.judged;
  const Decision& d = *j.decision;
  k["verdict"] = premise_verdict_word(v);
  k["compare_verdict"] = verdict_id(d.verdict);
  k["q_value"] = j.q_value ? json(*j.q_value) : json(nullptr);
  k["change_interval_pct"] = nullptr;
  if (j.interval) {
    const auto [lo, hi] = premise_interval(j);
    k["change_interval_pct"] = {round2(lo), round2(hi)};
  }
  k["detectable_pct"] = d.detectable ? json(round2(std::expm1(*d.detectable) * 100)) : json();
  k["why"] = d.why.empty() ? json() : json(d.why);
}

json premise_json(const Premise& p) {
  json checks = json::array();
  for (const auto& c : p.checks) {
    json k = {{"case", c.label},
              {"mechanism", c.mechanism},
              {"mode", c.mode},
              {"params", c.params},
              {"a", c.a},
              {"b", c.b},
              {"a_rtt_ns", rtt_json(c.a_rtt_ns)},
              {"b_rtt_ns", rtt_json(c.b_rtt_ns)}};
    if (c.a_rtt_ns && c.b_rtt_ns && *c.b_rtt_ns > 0) {
      k["saving_ns"] = round2(*c.b_rtt_ns - *c.a_rtt_ns);
      k["saving_pct"] = round2(100.0 * (*c.b_rtt_ns - *c.a_rtt_ns) / *c.b_rtt_ns);
      k["holds"] = *c.a_rtt_ns < *c.b_rtt_ns;
    }
    if (const auto v = c.verdict()) add_premise_verdict(c, *v, k);
    checks.push_back(k);
  }
  json j = {{"premise", p.text}, {"checks", checks}};
  if (p.not_measurable) j["not_measurable"] = *p.not_measurable;
  return j;
}

// ---- text ------------------------------------------------------------------------------------

std::string us_text(double ns) { return us_figure(ns) + " us"; }

std::string pct_text(const ClassShares& shares) {
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [c, f] : shares) order.push_back({-f, c});
  std::sort(order.begin(), order.end());
  std::string out;
  for (const auto& [f, c] : order)
    out += (out.empty() ? "" : " ") + c + " " + std::to_string(std::lround(-f * 100)) + "%";
  return out;
}

// `text` after `first`, the next lines after `indent` spaces; kept as it is (spaces too) when it
// fits on the first line.
std::string wrapped(const std::string& first, const std::string& text, size_t indent) {
  if (first.size() + text.size() <= kTextWidth) return first + text + "\n";
  return wrap_hanging(first, text, std::string(indent, ' '));
}

// Footnotes: each cause's text once for the whole output, lettered in order of first use.
class Footnotes {
 public:
  std::string mark(const std::string& text) {
    auto it = std::find(texts_.begin(), texts_.end(), text);
    if (it == texts_.end()) it = texts_.insert(texts_.end(), text);
    return label(static_cast<size_t>(it - texts_.begin()));
  }
  std::string render() const {
    std::string out;
    for (size_t i = 0; i < texts_.size(); ++i) out += wrapped("[" + label(i) + "] ", texts_[i], 4);
    return out;
  }

 private:
  static std::string label(size_t i) {
    return i < 26 ? std::string(1, static_cast<char>('A' + i)) : "Z" + std::to_string(i - 25);
  }
  std::vector<std::string> texts_;
};

std::string group_line(const CasePrediction& e, const PolicyGroup& g, Footnotes& notes) {
  const PolicyPrediction& p = e.first_of(g);
  char tv[16] = "";
  if (p.fit) std::snprintf(tv, sizeof tv, "TV %.2f", p.fit->strict);
  char head[64];
  std::snprintf(head, sizeof head, "  %-13s  %-7s  %8s  ",
                p.verdict ? std::string(verdict_word(*p.verdict)).c_str() : "predicted", tv,
                p.rtt_ns ? us_text(*p.rtt_ns).c_str() : "n/a");
  std::string extra;
  if (p.verdict == Verdict::kNoPrediction)
    extra = "(range admits " + std::to_string(std::lround(p.coverage * 100)) + "%)";
  if (p.verdict == Verdict::kExplained) {
    std::string marks;
    for (size_t i = 0; i < p.fit->weights.size(); ++i)
      if (p.fit->weights[i] >= kNamedWeight)
        marks += (marks.empty() ? "" : ",") +
                 notes.mark(cause_text(p.steady.alternatives[i].cause)) + ":" +
                 std::to_string(std::lround(p.fit->weights[i] * 100)) + "%";
    extra = "[" + marks + "]";
  }
  if (!p.verdict && !p.steady.alternatives.empty()) extra = "(uncertain)";
  if (!p.rtt_ns && !p.unpriced.empty()) extra += (extra.empty() ? "(" : " (") + p.unpriced + ")";
  return wrapped(
      head,
      g.name + ": " + pct_text(class_shares(p.steady.classes)) + (extra.empty() ? "" : " " + extra),
      std::string(head).size());
}

// The path counts of a traced case, one line.
std::string trace_line(const TraceView& t) {
  std::string out = "  traced " + std::to_string(t.wakeups) + " wakeups:";
  for (const char* path : {kPathSelection, kPathTtwuRunnable, kPathQueuedRemote})
    if (auto it = t.paths.find(path); it != t.paths.end())
      out += std::string(" ") + path + " " + std::to_string(it->second);
  if (t.dropped != 0) out += " (" + std::to_string(t.dropped) + " events dropped)";
  return out + "\n";
}

// "replay: 19 of 21 wakeups reproduced (90.48%); most common disagreement (1): model sis_prev ->
// prev, kernel -> cpu 2".
std::string replay_line(const ReplayDigest& d) {
  std::string line = "replay: " + std::to_string(d.reproduced) + " of " +
                     std::to_string(d.wakeups) + " wakeups reproduced";
  if (d.wakeups > 0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%.2f%%)", 100.0 * d.reproduced / d.wakeups);
    line += pct;
  }
  if (!d.common.empty())
    line += "; most common disagreement (" + std::to_string(d.common_count) + "): " + d.common;
  return wrapped("    ", line, 8);
}

std::string render_case(const CasePrediction& e, Footnotes& notes) {
  if (e.skipped) return wrapped(e.label + ": ", *e.skipped, 4);
  std::string head = e.label + "  " + std::string(wake_flags_id(e.wake_flags)) + "  ";
  if (!e.measured) {
    head += "no kernel case";
  } else if (e.measured->classes.empty()) {
    head += e.measured->status + ", no observed placement";
  } else {
    head += (e.measured->rtt_ns ? us_text(*e.measured->rtt_ns) : std::string("n/a")) +
            "  wakee: " + pct_text(e.measured->classes);
  }
  std::string out = wrapped("", head, 4);
  for (const auto& g : e.groups) out += group_line(e, g, notes);
  if (e.measured && e.measured->trace) out += trace_line(*e.measured->trace);
  if (e.replay) out += replay_line(*e.replay);
  for (const auto& g : e.groups) {
    const PolicyPrediction& p = e.first_of(g);
    if (p.verdict != Verdict::kExplained) continue;
    for (size_t i = 0; i < p.fit->weights.size(); ++i) {
      if (p.fit->weights[i] < kNamedWeight) continue;
      const AltCause& c = p.steady.alternatives[i].cause;
      if (const std::string ev = trace_evidence(c.kind, e.measured->trace); !ev.empty())
        out += wrapped("    [" + notes.mark(cause_text(c)) + "] ", ev, 8);
    }
  }
  return out;
}

// "holds, 95.91% [+95.5, +96.2]", "fails: the same within +-5%, 1.20% [-2.1, +3.4]",
// "cannot tell, 3.08%; it detects changes beyond 13.2%".
std::string premise_reading(const PremiseCheck& c, PremiseVerdict v) {
  const CompareCell& j = *c.judged;
  const Decision& d = *j.decision;
  std::string pct = fmt("%.2f%%", *j.change_pct);
  if (j.interval) {
    const auto [lo, hi] = premise_interval(j);
    pct += " [" + fmt("%+.1f", lo) + ", " + fmt("%+.1f", hi) + "]";
  }
  if (v == PremiseVerdict::kHolds) return "holds, " + pct;
  if (v == PremiseVerdict::kFails)
    return d.verdict == CompareVerdict::kSame
               ? "fails: the same within +-" + fmt("%.0f", CompareOptions{}.margin * 100) + "%, " +
                     pct
               : "fails, " + pct;
  if (!d.detectable) return "cannot tell, " + pct + ": too few repetitions to test";
  return "cannot tell, " + pct + "; it detects changes beyond " +
         fmt("%.1f", std::expm1(*d.detectable) * 100) + "%";
}

std::string render_premise(const Premise& p) {
  std::string out =
      "    " + p.policy + std::string(p.policy.size() < 13 ? 13 - p.policy.size() : 1, ' ');
  if (p.not_measurable) return wrapped(out, *p.not_measurable, 17);
  out = wrapped(out, p.text + ":", 17);
  for (const auto& c : p.checks) {
    std::string line = c.label + " " + c.a + " " + (c.a_rtt_ns ? us_text(*c.a_rtt_ns) : "n/a") +
                       " vs " + c.b + " " + (c.b_rtt_ns ? us_text(*c.b_rtt_ns) : "n/a");
    if (const auto v = c.verdict()) line += " (" + premise_reading(c, *v) + ")";
    out += wrapped("      ", line, 8);
  }
  return out;
}

std::string premise_legend() {
  return "holds / fails: compare's verdict on the two cases' repetitions in this run is decided "
         "(DIFFERENT one way; SAME within +-" +
         fmt("%.0f", CompareOptions{}.margin * 100) +
         "% fails); else cannot tell, with the change it detects. [lo, hi]: the change's 95% "
         "interval. One run: how much the premise moves between runs is not in it";
}

// "3 kernel cases by the nearest group's word: 1 MATCH, 0 EXPLAINED, 2 NO-PREDICTION, 0 MISS".
std::string verdict_counts(const ResultsPrediction& p) {
  std::map<Verdict, int> n;
  int cases = 0;
  for (const auto& e : p.cases) {
    if (e.groups.empty() || !e.first_of(e.groups.front()).verdict) continue;
    ++cases;
    ++n[*e.first_of(e.groups.front()).verdict];
  }
  std::string out = std::to_string(cases) + " observed kernel cases by the nearest group's word:";
  for (Verdict v : {Verdict::kMatch, Verdict::kExplained, Verdict::kNoPrediction, Verdict::kMiss})
    out += std::string(v == Verdict::kMatch ? " " : ", ") + std::to_string(n[v]) + " " +
           std::string(verdict_word(v));
  return out + "\n";
}

}  // namespace

ClassShares class_shares(const std::map<PlacementClass, double>& classes) {
  ClassShares out;
  for (const auto& [c, f] : classes) out[std::string(class_id(c))] = f;
  return out;
}

std::vector<ClassShares> alternatives_of(const SteadyResult& r) {
  std::vector<ClassShares> out;
  for (const auto& a : r.alternatives) out.push_back(class_shares(a.classes));
  return out;
}

namespace {

json domains_json(const std::map<int, std::vector<SchedDomain>>& domains) {
  json out = json::array();
  for (const auto& [cpu, levels] : domains)
    for (size_t i = 0; i < levels.size(); ++i)
      out.push_back({{"cpu", cpu},
                     {"domain", i},
                     {"name", levels[i].name},
                     {"span", format_cpu_list(levels[i].span)},
                     {"share_llc", levels[i].share_llc}});
  return out;
}

}  // namespace

json to_json(const ResultsPrediction& p) {
  json cases = json::array();
  for (const auto& e : p.cases) cases.push_back(case_json_of(e));
  json premises = json::object();
  for (const auto& pr : p.premises) premises[pr.policy] = premise_json(pr);
  json out = {
      {"topology", p.topology},
      {"llc", std::string(llc_source_name(p.llc))},
      {"llc_from", p.llc_from},
      {"node_reclaim_distance", p.node_reclaim_distance},
      {"domains", domains_json(p.domains)},
      {"emulated", p.emulated},
      {"model_kernel",
       {{"follows", model_kernel_range()},
        {"set_kernel", p.kernel_release},
        {"same_version", model_follows(p.kernel_release)}}},
      {"model",
       "docs/policy-model.md#steady-state: steady state of an otherwise idle box but for the "
       "case's busy CPUs; no delayed-dequeue or wakelist races (#bypasses)"},
      {"match_distance", kMatchDistance},
      {"no_prediction_coverage", kNoPredictionCoverage},
      {"cases", cases},
      {"premises", premises}};
  // Only a set with a feature off its default says so: every other set's block is unchanged.
  if (!p.features.notes.empty()) out["sched_features"] = features_json(p.features);
  if (!p.not_fair.empty()) out["fair_placement"] = {{"applies", false}, {"why", p.not_fair}};
  return out;
}

std::string render_results_text(const ResultsPrediction& p) {
  std::string out = "policy predictions (" + p.topology + ")\n" +
                    wrapped("  ", "LLC from " + p.llc_from + (p.emulated ? "; emulated" : ""), 4) +
                    wrapped("  ", model_kernel_line(p.kernel_release), 4);
  if (!p.not_fair.empty())
    out +=
        wrapped("  ", "the predictions do not apply here, no verdict is scored: " + p.not_fair, 4);
  for (const std::string& line : feature_lines(p.features)) out += wrapped("  ", line, 4);
  if (!p.replay_unavailable.empty()) out += wrapped("  ", p.replay_unavailable, 4);
  char legend[400];
  std::snprintf(legend, sizeof legend,
                "MATCH: the steady state within TV %.2f of the kernel's placements. EXPLAINED: a "
                "mix with the marked alternatives [footnote:weight] is. NO-PREDICTION: the range "
                "admits %.0f%% or more of what the cpuset allows (it could not fail). MISS: "
                "neither. docs/policy-model.md#verdicts",
                kMatchDistance, kNoPredictionCoverage * 100);
  out += verdict_counts(p) + wrapped("", legend, 0);
  Footnotes notes;
  for (const auto& e : p.cases) out += render_case(e, notes);
  out += notes.render();
  out += "  premises:\n" + wrapped("    ", premise_legend(), 4);
  for (const auto& pr : p.premises) out += render_premise(pr);
  return out;
}

std::string classes_text(const ClassShares& classes) {
  std::ostringstream o;
  bool first = true;
  for (const auto& [c, f] : classes) {
    o << (first ? "" : " ") << c << " " << std::lround(f * 100) << "%";
    first = false;
  }
  return o.str();
}

}  // namespace wb
