// What the steady state's results become (docs/policy-model.md#steady-state): an alternative's
// cause in words (the only place it is worded) and in JSON, the policies grouped by the same
// steady state, the share bounds, the JSON of `predict --steady` and its text, each from the
// typed results. The simulation itself is analysis/predict/predict_steady.cpp.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "analysis/predict/predict_results.h"
#include "common/util/cpulist.h"

namespace wb {

namespace {

using nlohmann::json;

// Shares rounded for comparison: cycles of different lengths sum 1/n in different orders.
std::vector<std::pair<PlacementClass, long long>> shares_key(
    const std::map<PlacementClass, double>& classes) {
  std::vector<std::pair<PlacementClass, long long>> out;
  for (const auto& [c, f] : classes)
    if (const long long r = std::llround(f * 1e9); r != 0) out.emplace_back(c, r);
  return out;
}

}  // namespace

std::string_view cause_kind_id(AltCause::Kind k) {
  switch (k) {
    case AltCause::Kind::kBusyPrev:
      return "busy-prev";
    case AltCause::Kind::kBusyPrevStays:
      return "busy-prev-stays";
    case AltCause::Kind::kStaleIdleCores:
      return "stale-idle-cores";
    case AltCause::Kind::kHeldAtStart:
      return "held-at-start";
    case AltCause::Kind::kBalancerPull:
      return "balancer-pull";
    case AltCause::Kind::kReversedStart:
      return "reversed-start";
  }
  return "?";
}

std::string cause_text(const AltCause& c) {
  auto cpu = [](int n) { return "CPU " + std::to_string(n); };
  std::string text;
  switch (c.kind) {
    case AltCause::Kind::kBusyPrev:
      text = "a wake from " + cpu(c.waker) + " finds " + cpu(c.busy) + " busy";
      break;
    case AltCause::Kind::kBusyPrevStays:
      text = "a wake from " + cpu(c.waker) + " finds " + cpu(c.busy) +
             " busy and stacks the pair on " + cpu(c.to) +
             ", where it stays (the wakee preempts the waker at every wake, then blocks while "
             "the waker is queued and is woken on that runqueue)";
      break;
    case AltCause::Kind::kStaleIdleCores:
      text =
          "the LLC's has_idle_cores hint is stale (false), so the idle-CPU scans take an idle "
          "sibling before an idle core";
      break;
    case AltCause::Kind::kHeldAtStart:
      text =
          "every wake reaches the partner while it is still switching out, so it is queued on "
          "its own CPU and the pair stays on CPUs " +
          std::to_string(c.from) + "," + std::to_string(c.to);
      break;
    case AltCause::Kind::kBalancerPull:
      text = "the load balancer pulls one task of the pair stacked on " + cpu(c.from) +
             " to idle " + cpu(c.to) +
             ", and every later wake reaches the partner while it is still switching out";
      break;
    case AltCause::Kind::kReversedStart:
      text = "the first wake goes from " + cpu(c.from) + " to " + cpu(c.to);
      break;
  }
  if (c.after_reversed)
    text = "the first wake goes from " + cpu(c.after_reversed->first) + " to " +
           cpu(c.after_reversed->second) + ", then " + text;
  return text;
}

json cause_json(const AltCause& c) {
  json j = {{"kind", std::string(cause_kind_id(c.kind))}, {"text", cause_text(c)}};
  for (const auto& [key, v] : {std::pair{"waker", c.waker}, std::pair{"busy", c.busy},
                               std::pair{"from", c.from}, std::pair{"to", c.to}})
    if (v >= 0) j[key] = v;
  if (c.after_reversed) j["after_reversed"] = {c.after_reversed->first, c.after_reversed->second};
  return j;
}

std::map<std::string, std::pair<double, double>> share_bounds(const SteadyResult& r) {
  std::map<std::string, std::pair<double, double>> out;
  std::set<PlacementClass> seen;
  for (const auto& [c, f] : r.classes) seen.insert(c);
  for (const auto& a : r.alternatives)
    for (const auto& [c, f] : a.classes) seen.insert(c);
  auto share = [](const std::map<PlacementClass, double>& m, PlacementClass c) {
    auto it = m.find(c);
    return it == m.end() ? 0.0 : it->second;
  };
  for (PlacementClass c : seen) {
    double lo = share(r.classes, c), hi = lo;
    for (const auto& a : r.alternatives) {
      lo = std::min(lo, share(a.classes, c));
      hi = std::max(hi, share(a.classes, c));
    }
    out[std::string(class_id(c))] = {lo, hi};
  }
  return out;
}

std::vector<PolicyGroup> group_policies(const std::vector<SteadyResult>& results) {
  using Key = std::pair<std::vector<std::pair<PlacementClass, long long>>,
                        std::vector<std::vector<std::pair<PlacementClass, long long>>>>;
  std::vector<std::pair<Key, PolicyGroup>> groups;
  for (size_t i = 0; i < results.size(); ++i) {
    Key key{shares_key(results[i].classes), {}};
    for (const auto& a : results[i].alternatives) key.second.push_back(shares_key(a.classes));
    std::sort(key.second.begin(), key.second.end());
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.push_back({key, {}});
      it = groups.end() - 1;
    }
    it->second.members.push_back(i);
    it->second.name += (it->second.name.empty() ? "" : "/") + results[i].policy;
  }
  std::vector<PolicyGroup> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  return out;
}

json classes_json(const std::map<PlacementClass, double>& classes) {
  return json(class_shares(classes));
}

namespace {

// Where the pair starts: --start, else default_start_pair().
std::pair<int, int> start_pair(const SchedTopology& sched, const SteadyOptions& opt) {
  const auto [a, b] = default_start_pair(sched, opt.allowed);
  return {opt.start_a.value_or(a), opt.start_b.value_or(b)};
}

std::string allowed_text(const SteadyOptions& opt) {
  return opt.allowed.empty() ? "all" : format_cpu_list(opt.allowed);
}

json uncertain_json(const SteadyResult& r) {
  json alts = json::array();
  for (const auto& a : r.alternatives)
    alts.push_back(
        {{"cause", cause_json(a.cause)}, {"classes", classes_json(a.classes)}, {"cpus", a.cpus}});
  json bounds = json::object();
  for (const auto& [c, lh] : share_bounds(r)) bounds[c] = {lh.first, lh.second};
  return {{"alternatives", alts}, {"bounds", bounds}};
}

}  // namespace

json steady_to_json(const SchedTopology& sched, const SteadyOptions& opt,
                    const std::vector<SteadyResult>& results) {
  const auto [a, b] = start_pair(sched, opt);
  json policies = json::object();
  for (const auto& r : results) {
    policies[r.policy] = {{"settled", r.settled},
                          {"transient_wakes", r.transient_wakes},
                          {"cycle_wakes", r.cycle_wakes},
                          {"classes", classes_json(r.classes)},
                          {"cpus", r.cpus},
                          {"path", r.first_paths}};
    if (!r.alternatives.empty()) policies[r.policy]["uncertain"] = uncertain_json(r);
  }
  json gj = json::array();
  for (const PolicyGroup& g : group_policies(results)) {
    json members = json::array();
    for (size_t i : g.members) members.push_back(results[i].policy);
    gj.push_back({{"name", g.name},
                  {"policies", members},
                  {"classes", classes_json(results[g.members.front()].classes)}});
  }
  return {{"topology", sched.topology().source()},
          {"sync", opt.sync},
          {"current_cpu", opt.current_cpu},
          {"start", {a, b}},
          {"busy", opt.busy},
          {"allowed", allowed_text(opt)},
          {"policies", policies},
          {"groups", gj}};
}

namespace {

// One policy's row of the table, then a line per alternative.
std::string steady_row(const SteadyResult& r) {
  std::ostringstream out, cls;
  for (const auto& [c, f] : class_shares(r.classes))
    cls << (cls.tellp() > 0 ? "  " : "") << c << " " << std::fixed << std::setprecision(0)
        << f * 100 << "%";
  out << std::left << std::setw(14) << r.policy << std::setw(12) << format_cpu_list(r.cpus)
      << cls.str() << (r.settled ? "" : "  (did not settle)") << "\n";
  for (const auto& a : r.alternatives)
    out << std::setw(26) << ""
        << "uncertain: or " << format_cpu_list(a.cpus) << " "
        << classes_text(class_shares(a.classes)) << " once " << cause_text(a.cause) << "\n";
  return out.str();
}

}  // namespace

std::string render_steady_text(const SchedTopology& sched, const SteadyOptions& opt,
                               const std::vector<SteadyResult>& results) {
  const auto [a, b] = start_pair(sched, opt);
  std::ostringstream out;
  out << "steady state on " << sched.topology().source() << ": "
      << (opt.current_cpu ? "WF_CURRENT_CPU"
          : opt.sync      ? "sync"
                          : "non-sync")
      << " ping-pong from CPUs " << a << "," << b << ", busy "
      << (opt.busy.empty() ? std::string("none") : format_cpu_list(opt.busy)) << ", allowed "
      << allowed_text(opt) << "\n\n";
  out << std::left << std::setw(14) << "policy" << std::setw(12) << "settles on"
      << "classes\n";
  for (const SteadyResult& r : results) out << steady_row(r);
  out << "\ngroups (same placement):";
  for (const PolicyGroup& g : group_policies(results)) out << "  [" << g.name << "]";
  out << "\n";
  return out.str();
}

}  // namespace wb
