#include "analysis/decision_diff.h"

#include <algorithm>
#include <sstream>

#include "analysis/replay.h"
#include "common/schema/placement.h"
#include "common/util/text.h"

namespace wb {
namespace {

constexpr std::pair<SplitState, std::string_view> kStates[] = {
    {SplitState::kPrevBusy, "prev-busy"},       {SplitState::kPrevIsWaker, "prev-is-waker"},
    {SplitState::kWakerQueued, "waker-queued"}, {SplitState::kHintStale, "hint-stale"},
    {SplitState::kRecentStale, "recent-busy"},  {SplitState::kSync, "sync"}};

bool idle(const DecisionRecord& d, int cpu) {
  return std::binary_search(d.idle.begin(), d.idle.end(), cpu);
}

bool holds(SplitState s, const DecisionRecord& d, const WakeInput& in, const SchedTopology& sched) {
  switch (s) {
    case SplitState::kPrevBusy:
      return !idle(d, d.prev);
    case SplitState::kPrevIsWaker:
      return d.prev == d.waker_cpu;
    case SplitState::kWakerQueued:
      return d.waker_nr_running > 1;
    case SplitState::kHintStale:
      return exact_has_idle_cores(sched, in, d.waker_cpu) != d.has_idle_cores;
    case SplitState::kRecentStale:
      return d.recent_used_cpu >= 0 && d.recent_used_cpu != d.prev && !idle(d, d.recent_used_cpu);
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
  std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
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

std::string pair_text(const PairSplit& p, const CaseSplits& s, std::size_t k) {
  std::string out = wrap(verdict_line(p), "");
  if (p.split == 0) return out;
  const auto rule = [](DecisionRule r) { return std::string(decision_rule_id(r)); };
  out += wrap(p.a + "'s rule: " + counts_text(p.by_rule, rule), "  ");
  out += wrap("states: " + counts_text(p.by_state,
                                       [](SplitState st) { return std::string(split_state_id(st)); }),
              "  ");
  out += wrap("classes (" + p.a + " -> " + p.b + "): " +
                  counts_text(p.by_classes,
                              [](const auto& c) { return c.first + " -> " + c.second; }),
              "  ");
  const std::optional<double> cost = p.cost_ns();
  out += wrap(cost ? "first-order cost of " + p.b + "'s choice: " + fmt("%+.2f", *cost / 1000) +
                              " us per split wakeup (the set's pinned medians per class; "
                              "a model's sum, not a measurement)"
                        : std::string("first-order cost: not priced (a class has no pinned median)"),
              "  ");
  std::vector<std::string> cases;
  for (const auto& [name, pairs] : s.cases)
    if (pairs[k].split > 0) cases.push_back(name + " " + std::to_string(pairs[k].split));
  if (!cases.empty()) out += wrap("cases: " + join(cases, ", "), "  ");
  return out;
}

nlohmann::ordered_json pair_json(const PairSplit& p) {
  nlohmann::ordered_json j = {{"a", p.a},         {"b", p.b},           {"records", p.records},
                              {"split", p.split}, {"kernel_a", p.kernel_a}, {"kernel_b", p.kernel_b},
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

}  // namespace

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

std::vector<PairSplit> split_decisions(const std::vector<DecisionRecord>& records,
                                       const SchedTopology& sched,
                                       const std::vector<const WakeupPolicy*>& policies,
                                       const ModelFeatures& features,
                                       const std::map<std::string, double>& pinned) {
  std::vector<PairSplit> pairs;
  for (std::size_t i = 0; i < policies.size(); ++i)
    for (std::size_t j = i + 1; j < policies.size(); ++j)
      pairs.push_back({std::string(policies[i]->id()), std::string(policies[j]->id())});
  for (std::size_t r = 0; r < records.size(); ++r) {
    const DecisionRecord& d = records[r];
    WakeInput in = wake_input_of(d, sched);
    in.features = features;
    std::vector<WakeDecision> by(policies.size());
    for (std::size_t i = 0; i < policies.size(); ++i) by[i] = predict_wakeup(sched, in, *policies[i]);
    for (std::size_t i = 0, k = 0; i < policies.size(); ++i)
      for (std::size_t j = i + 1; j < policies.size(); ++j, ++k) {
        ++pairs[k].records;
        if (by[i].cpu != by[j].cpu)
          count_split(pairs[k], {r, by[i], by[j]}, d, in, sched, pinned);
      }
  }
  return pairs;
}

void add_case(CaseSplits& all, const std::string& name, std::vector<PairSplit> pairs) {
  if (all.total.empty()) {
    for (const PairSplit& p : pairs) all.total.push_back({p.a, p.b});
  }
  for (std::size_t k = 0; k < pairs.size() && k < all.total.size(); ++k) all.total[k].add(pairs[k]);
  all.cases.emplace_back(name, std::move(pairs));
}

std::string render_splits_text(const CaseSplits& s) {
  std::string out;
  for (std::size_t k = 0; k < s.total.size(); ++k) out += pair_text(s.total[k], s, k);
  return out;
}

nlohmann::ordered_json splits_json(const CaseSplits& s) {
  nlohmann::ordered_json j = {{"pairs", nlohmann::ordered_json::array()},
                              {"cases", nlohmann::ordered_json::array()}};
  for (const PairSplit& p : s.total) j["pairs"].push_back(pair_json(p));
  for (const auto& [name, pairs] : s.cases) {
    nlohmann::ordered_json c = {{"case", name}, {"pairs", nlohmann::ordered_json::array()}};
    for (const PairSplit& p : pairs) c["pairs"].push_back(pair_json(p));
    j["cases"].push_back(c);
  }
  return j;
}

}  // namespace wb
