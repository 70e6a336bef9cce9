#include "analysis/predict/decision_diff.h"

#include <algorithm>
#include <sstream>

#include "analysis/model/replay.h"
#include "analysis/predict/closed_loop.h"
#include "common/schema/placement.h"
#include "common/util/text.h"

namespace wb {
namespace {

constexpr std::pair<SplitState, std::string_view> kStates[] = {
    {SplitState::kPrevBusy, "prev-busy"},       {SplitState::kPrevIsWaker, "prev-is-waker"},
    {SplitState::kWakerQueued, "waker-queued"}, {SplitState::kHintStale, "hint-stale"},
    {SplitState::kRecentStale, "recent-busy"},  {SplitState::kSync, "sync"}};

bool holds(SplitState s, const DecisionRecord& d, const WakeInput& in, const SchedTopology& sched) {
  switch (s) {
    case SplitState::kPrevBusy:
      return !listed_idle(d, d.prev);
    case SplitState::kPrevIsWaker:
      return d.prev == d.waker_cpu;
    case SplitState::kWakerQueued:
      return d.waker_nr_running > 1;
    case SplitState::kHintStale:
      return exact_has_idle_cores(sched, in, d.waker_cpu) != d.has_idle_cores;
    case SplitState::kRecentStale:
      return d.recent_used_cpu >= 0 && d.recent_used_cpu != d.prev &&
             !listed_idle(d, d.recent_used_cpu);
    case SplitState::kSync:
      return (d.wake_flags & kWfSync) != 0;
  }
  return false;
}

std::string class_of(const SchedTopology& sched, int waker, int cpu) {
  return std::string(class_id(classify(sched.topology(), waker, cpu)));
}

// One record's split between pair p's models, counted into p.
void count_split(PairSplit& p, const SplitRecord& s, const DecisionRecord& d, const WakeInput& in,
                 const SchedTopology& sched, const std::map<std::string, double>& pinned) {
  ++p.split;
  ++p.by_rule[s.a.rule];
  for (const auto& [st, id] : kStates)
    if (holds(st, d, in, sched)) ++p.by_state[st];
  const std::string ca = class_of(sched, d.waker_cpu, s.a.cpu);
  const std::string cb = class_of(sched, d.waker_cpu, s.b.cpu);
  ++p.by_classes[{ca, cb}];
  p.kernel_a += d.cpu == s.a.cpu;
  p.kernel_b += d.cpu == s.b.cpu;
  const auto ia = pinned.find(ca), ib = pinned.find(cb);
  if (ia == pinned.end() || ib == pinned.end())
    ++p.unpriced;
  else
    p.cost_sum_ns += ib->second - ia->second;
  if (p.first.size() < kFirstSplits) p.first.push_back(s);
}

std::string pct(int64_t n, int64_t of) {
  return of > 0 ? fmt("%.2f%%", 100.0 * static_cast<double>(n) / static_cast<double>(of)) : "-";
}

template <class Map, class Name>
std::string counts_text(const Map& m, Name name) {
  std::vector<std::pair<int64_t, std::string>> v;
  for (const auto& [k, n] : m) v.emplace_back(n, name(k));
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> parts;
  for (const auto& [n, s] : v) parts.push_back(s + " " + std::to_string(n));
  return join(parts, ", ");
}

std::string verdict_line(const PairSplit& p) {
  std::string line = p.a + " vs " + p.b + ": " + std::to_string(p.split) + " of " +
                     std::to_string(p.records) + " recorded wakeups split (" +
                     pct(p.split, p.records) + ")";
  if (p.split == 0) return line;
  line += "; the kernel chose " + p.a + "'s CPU in " + std::to_string(p.kernel_a) + ", " + p.b +
          "'s in " + std::to_string(p.kernel_b) + ": ";
  const std::string n = p.named();
  if (!n.empty()) return line + "named " + n;
  if (p.split < kMinSplitToName)
    return line + "not named (fewer than " + std::to_string(kMinSplitToName) + " split)";
  return line + "not named (neither followed on " + fmt("%.0f%%", 100 * kNameShare) + ")";
}

// A split's rule, state, class and cost lines; `what` names its records ("split", "changed").
std::string split_lines(const PairSplit& p, const std::string& what) {
  const auto rule = [](DecisionRule r) { return std::string(decision_rule_id(r)); };
  std::string out = wrap(p.a + "'s rule: " + counts_text(p.by_rule, rule), "  ");
  out +=
      wrap("states: " + counts_text(p.by_state,
                                    [](SplitState st) { return std::string(split_state_id(st)); }),
           "  ");
  out +=
      wrap("classes (" + p.a + " -> " + p.b + "): " +
               counts_text(p.by_classes, [](const auto& c) { return c.first + " -> " + c.second; }),
           "  ");
  const std::optional<double> cost = p.cost_ns();
  return out +
         wrap(cost ? "first-order cost of " + p.b + "'s choice: " + fmt("%+.2f", *cost / 1000) +
                         " us per " + what +
                         " wakeup (the set's pinned medians per class; a model's sum, not a "
                         "measurement)"
                   : std::string("first-order cost: not priced (a class has no pinned median)"),
              "  ");
}

std::string pair_text(const PairSplit& p, const CaseSplits& s, std::size_t k) {
  std::string out = wrap(verdict_line(p), "");
  if (p.split == 0) return out;
  out += split_lines(p, "split");
  std::vector<std::string> cases;
  for (const auto& [name, c] : s.cases)
    if (c.pairs[k].split > 0) cases.push_back(name + " " + std::to_string(c.pairs[k].split));
  if (!cases.empty()) out += wrap("cases: " + join(cases, ", "), "  ");
  return out;
}

// A set's JSON: `of` its total, then "cases": `of` each case with its name.
template <class Cases, class Of>
nlohmann::ordered_json with_cases(const Cases& c, Of of) {
  nlohmann::ordered_json j = of(c.total);
  j["cases"] = nlohmann::ordered_json::array();
  for (const auto& [name, one] : c.cases) {
    nlohmann::ordered_json x = of(one);
    x["case"] = name;
    j["cases"].push_back(x);
  }
  return j;
}

nlohmann::ordered_json pair_json(const PairSplit& p) {
  nlohmann::ordered_json j = {
      {"a", p.a},
      {"b", p.b},
      {"records", p.records},
      {"split", p.split},
      {"kernel_a", p.kernel_a},
      {"kernel_b", p.kernel_b},
      {"named", p.named().empty() ? nullptr : nlohmann::ordered_json(p.named())}};
  for (const auto& [r, n] : p.by_rule) j["by_rule"][std::string(decision_rule_id(r))] = n;
  for (const auto& [st, n] : p.by_state) j["by_state"][std::string(split_state_id(st))] = n;
  for (const auto& [c, n] : p.by_classes) j["by_classes"][c.first + "->" + c.second] = n;
  const std::optional<double> cost = p.cost_ns();
  j["cost_ns"] = cost ? nlohmann::ordered_json(*cost) : nullptr;
  for (const SplitRecord& r : p.first)
    j["first"].push_back({{"index", r.index},
                          {"a", {{"rule", decision_rule_id(r.a.rule)}, {"cpu", r.a.cpu}}},
                          {"b", {{"rule", decision_rule_id(r.b.rule)}, {"cpu", r.b.cpu}}}});
  return j;
}

std::string mix_line(const PolicyMix& m) {
  std::vector<std::pair<double, std::string>> v;
  for (const auto& [c, share] : m.shares()) v.emplace_back(share, c);
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> parts;
  for (const auto& [share, c] : v) parts.push_back(c + " " + fmt("%.0f%%", 100 * share));
  const std::optional<double> rtt = m.rtt_ns();
  return align_left(m.policy, 14) + join(parts, " ") +
         (rtt ? "  ~" + us_figure(*rtt) + " us" : std::string());
}

nlohmann::ordered_json mixes_json(const std::vector<PolicyMix>& mixes) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const PolicyMix& m : mixes) {
    const std::optional<double> rtt = m.rtt_ns();
    j.push_back({{"policy", m.policy},
                 {"classes", m.classes},
                 {"rtt_ns", rtt ? nlohmann::ordered_json(*rtt) : nullptr}});
  }
  return j;
}

nlohmann::ordered_json splits_json_of(const Splits& s) {
  nlohmann::ordered_json j = {{"mixes", mixes_json(s.mixes)},
                              {"closed_mixes", mixes_json(s.closed)},
                              {"closed_no_waker", s.closed_no_waker},
                              {"pairs", nlohmann::ordered_json::array()}};
  for (const PairSplit& p : s.pairs) j["pairs"].push_back(pair_json(p));
  return j;
}

constexpr std::pair<ChangePoint, std::string_view> kPoints[] = {
    {ChangePoint::kWakeWide, "wake_wide"},
    {ChangePoint::kWantAffine, "want_affine"},
    {ChangePoint::kRule, "rule"},
    {ChangePoint::kCpu, "cpu"}};

// Where the recorded path and the model's first part; nullopt where the model reproduces the
// record. The BPF recorders' records hold the CPU alone.
std::optional<ChangePoint> change_point(const DecisionRecord& d, const WakeDecision& m) {
  if (d.source == DecisionSource::kEvent) {
    if (d.wake_wide != m.wake_wide) return ChangePoint::kWakeWide;
    if (d.want_affine != m.want_affine) return ChangePoint::kWantAffine;
    if (d.unlabelled || (d.rule && *d.rule != m.rule)) return ChangePoint::kRule;
  }
  if (d.cpu != m.cpu) return ChangePoint::kCpu;
  return std::nullopt;
}

// Whether two models part at any of those points.
bool models_part(const WakeDecision& x, const WakeDecision& y) {
  return x.wake_wide != y.wake_wide || x.want_affine != y.want_affine || x.rule != y.rule ||
         x.cpu != y.cpu;
}

std::string rule_of(const DecisionRecord& d) {
  return d.rule ? std::string(decision_rule_id(*d.rule)) : d.unlabelled ? "none" : "-";
}

std::string changes_verdict(const KernelChanges& c) {
  const PairSplit& p = c.pair;
  std::string line = "the kernel against " + p.a + "'s model: " + std::to_string(p.split) + " of " +
                     std::to_string(p.records) + " recorded wakeups changed (" +
                     pct(p.split, p.records) + ")";
  if (p.split > 0)
    line += ", " + std::to_string(c.moved) + " of them to another CPU (" + pct(c.moved, p.records) +
            ")";
  return line;
}

std::string marked_text(const KernelChanges& c) {
  if (c.marked == 0) return "marked records (mark=1): none";
  return "marked records (mark=1): " + std::to_string(c.marked) + ", found changed " +
         std::to_string(c.marked_changed) + " (" + pct(c.marked_changed, c.marked) +
         "); changed outside them " + std::to_string(c.pair.split - c.marked_changed) + " (" +
         pct(c.pair.split - c.marked_changed, c.pair.records) + " of all)";
}

std::string changed_record_text(const ChangedRecord& x) {
  const DecisionRecord& d = x.record;
  const auto both = [](const char* what, bool k, bool m) {
    return std::string("; ") + what + " kernel " + std::to_string(k) + ", model " +
           std::to_string(m);
  };
  std::string parted;
  if (x.point == ChangePoint::kWakeWide) parted = both("wake_wide", d.wake_wide, x.model.wake_wide);
  if (x.point == ChangePoint::kWantAffine)
    parted = both("want_affine", d.want_affine, x.model.want_affine);
  return wrap("#" + std::to_string(x.index + 1) + " pid " + std::to_string(d.pid) + " (" +
                  std::string(change_point_id(x.point)) + (d.mark ? ", marked" : "") +
                  "): kernel " + rule_of(d) + " -> " + std::to_string(d.cpu) + ", model " +
                  std::string(decision_rule_id(x.model.rule)) + " -> " +
                  std::to_string(x.model.cpu) + parted,
              "  ") +
         wrap("inputs: " + inputs_text(d), "    ");
}

// The cases with changes, most first, the first kCasesShown of them.
std::string cases_text(const CaseChanges& c) {
  constexpr std::size_t kCasesShown = 6;
  std::vector<std::pair<int64_t, std::string>> v;
  for (const auto& [name, one] : c.cases)
    if (one.pair.split > 0) v.emplace_back(one.pair.split, name);
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < v.size() && i < kCasesShown; ++i)
    parts.push_back(v[i].second + " " + std::to_string(v[i].first));
  if (v.size() > kCasesShown)
    parts.push_back("and " + std::to_string(v.size() - kCasesShown) +
                    " more (--json lists every case)");
  return join(parts, ", ");
}

nlohmann::ordered_json changes_json_of(const KernelChanges& c) {
  nlohmann::ordered_json j = pair_json(c.pair);
  j.erase("kernel_a");
  j.erase("kernel_b");
  j.erase("named");
  j.erase("first");
  j["moved"] = c.moved;
  for (const auto& [pt, n] : c.by_point) j["by_point"][std::string(change_point_id(pt))] = n;
  j["marked"] = c.marked;
  j["marked_changed"] = c.marked_changed;
  if (!c.expected.empty())
    j["expected"] = {
        {"policy", c.expected}, {"split", c.expected_split}, {"changed", c.expected_changed}};
  j["first"] = nlohmann::ordered_json::array();
  for (const ChangedRecord& x : c.first)
    j["first"].push_back(
        {{"index", x.index},
         {"pid", x.record.pid},
         {"point", change_point_id(x.point)},
         {"mark", x.record.mark},
         {"kernel", {{"rule", rule_of(x.record)}, {"cpu", x.record.cpu}}},
         {"model", {{"rule", decision_rule_id(x.model.rule)}, {"cpu", x.model.cpu}}}});
  return j;
}

}  // namespace

std::string_view change_point_id(ChangePoint p) {
  for (const auto& [point, id] : kPoints)
    if (point == p) return id;
  return "?";
}

void KernelChanges::add(const KernelChanges& o) {
  pair.add(o.pair);
  for (const auto& [k, n] : o.by_point) by_point[k] += n;
  moved += o.moved;
  marked += o.marked;
  marked_changed += o.marked_changed;
  if (expected.empty()) expected = o.expected;
  expected_split += o.expected_split;
  expected_changed += o.expected_changed;
  for (const ChangedRecord& r : o.first)
    if (first.size() < kFirstSplits) first.push_back(r);
}

KernelChanges kernel_changes(const std::vector<DecisionRecord>& records, const SchedTopology& sched,
                             const WakeupPolicy& policy, const ModelFeatures& features,
                             const std::map<std::string, double>& pinned,
                             const WakeupPolicy* expected) {
  KernelChanges c;
  c.pair = {std::string(policy.id()), "kernel"};
  if (expected) c.expected = expected->id();
  for (std::size_t r = 0; r < records.size(); ++r) {
    const DecisionRecord& d = records[r];
    WakeInput in = wake_input_of(d, sched);
    in.features = features;
    const WakeDecision m = predict_wakeup(sched, in, policy);
    ++c.pair.records;
    c.marked += d.mark;
    const std::optional<ChangePoint> point = change_point(d, m);
    const bool split = expected && models_part(m, predict_wakeup(sched, in, *expected));
    c.expected_split += split;
    c.expected_changed += split && point;
    if (!point) continue;
    WakeDecision kernel;
    kernel.cpu = d.cpu;
    kernel.rule = d.rule.value_or(m.rule);
    count_split(c.pair, {r, m, kernel}, d, in, sched, pinned);
    ++c.by_point[*point];
    c.moved += d.cpu != m.cpu;
    c.marked_changed += d.mark;
    if (c.first.size() < kFirstSplits) c.first.push_back({r, d, m, *point});
  }
  return c;
}

void add_case(CaseChanges& all, const std::string& name, KernelChanges c) {
  if (all.total.pair.a.empty()) all.total.pair = {c.pair.a, c.pair.b};
  all.total.add(c);
  all.cases.emplace_back(name, std::move(c));
}

std::string render_changes_text(const CaseChanges& c) {
  const KernelChanges& t = c.total;
  const PairSplit& p = t.pair;
  std::string out = wrap(changes_verdict(t), "");
  out += wrap(marked_text(t), "  ");
  if (!t.expected.empty())
    out += wrap(t.expected + "'s model parts from " + p.a + "'s on " +
                    std::to_string(t.expected_split) + " records, found changed " +
                    std::to_string(t.expected_changed) + " (" +
                    pct(t.expected_changed, t.expected_split) + "); changed outside them " +
                    std::to_string(p.split - t.expected_changed),
                "  ");
  if (p.split == 0) return out;
  out += wrap(
      "where the kernel and the model part: " +
          counts_text(t.by_point, [](ChangePoint pt) { return std::string(change_point_id(pt)); }),
      "  ");
  out += split_lines(p, "changed");
  out += wrap("cases: " + cases_text(c), "  ");
  out += "first " + std::to_string(t.first.size()) + " changed (in case order):\n";
  for (const ChangedRecord& x : t.first) out += changed_record_text(x);
  return out;
}

nlohmann::ordered_json changes_json(const CaseChanges& c) { return with_cases(c, changes_json_of); }

std::string_view split_state_id(SplitState s) {
  for (const auto& [state, id] : kStates)
    if (state == s) return id;
  return "?";
}

std::string PairSplit::named() const {
  if (split < kMinSplitToName) return "";
  const double fa = static_cast<double>(kernel_a) / static_cast<double>(split);
  const double fb = static_cast<double>(kernel_b) / static_cast<double>(split);
  if (fa >= kNameShare && fb <= 1 - kNameShare) return a;
  if (fb >= kNameShare && fa <= 1 - kNameShare) return b;
  return "";
}

std::optional<double> PairSplit::cost_ns() const {
  if (split == 0 || unpriced > 0) return std::nullopt;
  return cost_sum_ns / static_cast<double>(split);
}

void PairSplit::add(const PairSplit& o) {
  cost_sum_ns += o.cost_sum_ns;
  unpriced += o.unpriced;
  records += o.records;
  split += o.split;
  kernel_a += o.kernel_a;
  kernel_b += o.kernel_b;
  for (const auto& [k, n] : o.by_rule) by_rule[k] += n;
  for (const auto& [k, n] : o.by_state) by_state[k] += n;
  for (const auto& [k, n] : o.by_classes) by_classes[k] += n;
  for (const SplitRecord& r : o.first)
    if (first.size() < kFirstSplits) first.push_back(r);
}

std::map<std::string, double> PolicyMix::shares() const {
  int64_t n = 0;
  for (const auto& [c, k] : classes) n += k;
  std::map<std::string, double> out;
  for (const auto& [c, k] : classes) out[c] = static_cast<double>(k) / static_cast<double>(n);
  return out;
}

std::optional<double> PolicyMix::rtt_ns() const {
  int64_t n = 0;
  for (const auto& [c, k] : classes) n += k;
  if (n == 0 || unpriced > 0) return std::nullopt;
  return pinned_sum_ns / static_cast<double>(n);
}

void PolicyMix::count(const std::string& cls, const std::map<std::string, double>& pinned) {
  ++classes[cls];
  if (const auto it = pinned.find(cls); it != pinned.end())
    pinned_sum_ns += it->second;
  else
    ++unpriced;
}

void PolicyMix::add(const PolicyMix& o) {
  for (const auto& [c, k] : o.classes) classes[c] += k;
  pinned_sum_ns += o.pinned_sum_ns;
  unpriced += o.unpriced;
}

Splits split_decisions(const std::vector<DecisionRecord>& records, const SchedTopology& sched,
                       const std::vector<const WakeupPolicy*>& policies,
                       const ModelFeatures& features, const std::map<std::string, double>& pinned) {
  Splits s;
  for (std::size_t i = 0; i < policies.size(); ++i)
    for (std::size_t j = i + 1; j < policies.size(); ++j)
      s.pairs.push_back({std::string(policies[i]->id()), std::string(policies[j]->id())});
  s.mixes.push_back({"kernel"});
  for (const WakeupPolicy* p : policies) s.mixes.push_back({std::string(p->id())});
  for (std::size_t r = 0; r < records.size(); ++r) {
    const DecisionRecord& d = records[r];
    WakeInput in = wake_input_of(d, sched);
    in.features = features;
    std::vector<WakeDecision> by(policies.size());
    for (std::size_t i = 0; i < policies.size(); ++i)
      by[i] = predict_wakeup(sched, in, *policies[i]);
    s.mixes[0].count(class_of(sched, d.waker_cpu, d.cpu), pinned);
    for (std::size_t i = 0; i < policies.size(); ++i)
      s.mixes[i + 1].count(class_of(sched, d.waker_cpu, by[i].cpu), pinned);
    for (std::size_t i = 0, k = 0; i < policies.size(); ++i)
      for (std::size_t j = i + 1; j < policies.size(); ++j, ++k) {
        ++s.pairs[k].records;
        if (by[i].cpu != by[j].cpu)
          count_split(s.pairs[k], {r, by[i], by[j]}, d, in, sched, pinned);
      }
  }
  ClosedLoop loop = closed_loop_mixes(records, sched, policies, features, pinned);
  s.closed = std::move(loop.mixes);
  s.closed_no_waker = loop.no_waker;
  return s;
}

namespace {

// One case's mixes added to the totals, policy by policy (the first case names them).
void add_mixes(std::vector<PolicyMix>& total, const std::vector<PolicyMix>& one) {
  if (total.empty())
    for (const PolicyMix& m : one) total.push_back({m.policy});
  for (std::size_t k = 0; k < one.size() && k < total.size(); ++k) total[k].add(one[k]);
}

}  // namespace

void add_case(CaseSplits& all, const std::string& name, Splits s) {
  if (all.total.pairs.empty())
    for (const PairSplit& p : s.pairs) all.total.pairs.push_back({p.a, p.b});
  for (std::size_t k = 0; k < s.pairs.size() && k < all.total.pairs.size(); ++k)
    all.total.pairs[k].add(s.pairs[k]);
  add_mixes(all.total.mixes, s.mixes);
  add_mixes(all.total.closed, s.closed);
  all.total.closed_no_waker += s.closed_no_waker;
  all.cases.emplace_back(name, std::move(s));
}

std::string render_splits_text(const CaseSplits& s) {
  std::string out = wrap(
      "where the wakee goes, from the recorded states (the kernel's own CPUs "
      "first; ~ the pinned medians' mean, a model's sum):",
      "");
  for (const PolicyMix& m : s.total.mixes) out += "  " + mix_line(m) + "\n";  // short: unwrapped
  out += wrap(
      "where each policy's own choices lead the pair under the recorded load (closed "
      "loop" +
          (s.total.closed_no_waker > 0 ? fmt(", %lld records without a told waker left out",
                                             static_cast<long long>(s.total.closed_no_waker))
                                       : std::string()) +
          "):",
      "");
  for (const PolicyMix& m : s.total.closed) out += "  " + mix_line(m) + "\n";
  for (std::size_t k = 0; k < s.total.pairs.size(); ++k) out += pair_text(s.total.pairs[k], s, k);
  return out;
}

nlohmann::ordered_json splits_json(const CaseSplits& s) { return with_cases(s, splits_json_of); }

}  // namespace wb
