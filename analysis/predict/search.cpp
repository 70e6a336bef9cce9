#include "analysis/predict/search.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "analysis/model/symmetry.h"
#include "analysis/predict/predict_results.h"
#include "analysis/predict/search_shapes.h"
#include "common/util/cpulist.h"
#include "common/util/text.h"

namespace wb {

namespace {

bool has_cpu(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// None, each CPU of the cpuset but the waker's, each whole core of the cpuset without the waker.
std::vector<std::vector<int>> busy_sets(const SchedTopology& sched, const std::vector<int>& allowed,
                                        int waker) {
  std::vector<std::vector<int>> out = {{}};
  for (int c : allowed)
    if (c != waker) out.push_back({c});
  std::set<std::vector<int>> cores;
  for (int c : allowed) {
    const std::vector<int>& core = sched.smt_mask(c);
    if (core.size() >= 2 && !has_cpu(core, waker) &&
        std::all_of(core.begin(), core.end(), [&](int x) { return has_cpu(allowed, x); }))
      cores.insert(core);
  }
  out.insert(out.end(), cores.begin(), cores.end());
  return out;
}

SteadyOptions steady_options(const SchedTopology& sched, const SearchOptions& opt,
                             const SearchCandidate& c) {
  SteadyOptions so;
  so.sync = opt.sync;
  so.current_cpu = opt.current_cpu;
  so.start_a = c.start_a;
  so.start_b = c.start_b;
  so.busy = c.busy;
  if (c.allowed != sched.cpus()) so.allowed = c.allowed;  // empty: every CPU, never copied
  so.slow_switch_out = slow_switch_out_applies(opt.emulated, opt.work_ns);
  return so;
}

std::vector<const WakeupPolicy*> policies_of(const SearchOptions& opt) {
  std::vector<const WakeupPolicy*> out;
  for (const std::string& id : opt.policies) out.push_back(&policy_by_id(id));
  return out;
}

// Each policy's steady state on the candidate (its mix, with the busy CPUs intermittent) and,
// with `differ`, [i][j]: the share of policy i's wakes on which j's model chooses another CPU.
struct Simulated {
  std::vector<SteadyResult> steady;
  std::vector<std::vector<double>> differ;
};

Simulated simulate(const SchedTopology& sched, const SearchOptions& opt, const SearchCandidate& c,
                   bool differ) {
  Simulated out;
  out.steady = simulate_steady_states(sched, steady_options(sched, opt, c), policies_of(opt));
  const bool mixed = opt.intermittent && !c.busy.empty();
  if (!mixed && !differ) return out;
  // Intermittent, or one phase that never ends (the steady state's cycle, busy throughout).
  const Intermittent load = mixed ? *opt.intermittent : Intermittent{100, 2};
  std::vector<IntermittentResult> mixes =
      simulate_intermittent(sched, steady_options(sched, opt, c), policies_of(opt), load);
  if (differ)
    for (IntermittentResult& m : mixes) out.differ.push_back(m.differ);
  if (mixed) put_mixes(out.steady, mixes);
  return out;
}

std::vector<SteadyResult> steady_states(const SchedTopology& sched, const SearchOptions& opt,
                                        const SearchCandidate& c) {
  return simulate(sched, opt, c, false).steady;
}

// The index of the pair (i, j), i < j, of n policies in empty_reports()' order.
std::size_t pair_index(std::size_t i, std::size_t j, std::size_t n) {
  return i * n - i * (i + 1) / 2 + (j - i - 1);
}

// The pair reports, filled from every candidate's separations.
std::vector<PairReport> empty_reports(const std::vector<std::string>& policies) {
  std::vector<PairReport> out;
  for (std::size_t i = 0; i < policies.size(); ++i)
    for (std::size_t j = i + 1; j < policies.size(); ++j) out.push_back({policies[i], policies[j]});
  return out;
}

// Separations by the answers of their two steady states (search_answer(): all that separation()
// reads). Few answers recur over the candidates, and the distance to a range is most of a
// candidate's cost.
using SeparationMemo = std::map<std::pair<std::string, std::string>, Separation>;

const Separation& separation_of(const std::vector<SteadyResult>& steady,
                                const std::vector<std::string>& answers, std::size_t i,
                                std::size_t j, SeparationMemo& memo) {
  auto [it, fresh] = memo.try_emplace({answers[i], answers[j]});
  if (fresh) it->second = separation(steady[i], steady[j]);
  return it->second;
}

// Strings kept once each, by number: the shapes of a large machine share a few.
class Interned {
 public:
  int id(std::string s) {
    auto [it, fresh] = ids_.try_emplace(std::move(s), static_cast<int>(by_id_.size()));
    if (fresh) by_id_.push_back(&it->first);
    return it->second;
  }
  const std::string& text(int id) const { return *by_id_[static_cast<std::size_t>(id)]; }

 private:
  std::map<std::string, int> ids_;
  std::vector<const std::string*> by_id_;
};

// What the choice reads of a candidate (kept per shape, so small): the pairs it discriminates,
// their least margin, its signature (each policy's steady classes, joined: equal for cases that
// tell the policies apart the same way) and number of distinct steady states, its busy and cpuset
// sizes, and its answer (search_answer(), joined) to check the chosen members against.
struct Found {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  double margin = 1.0;
  int signature = -1, answer = -1;  // Interned
  std::size_t distinct = 0, busy = 0, allowed = 0;
};

struct Memos {
  SeparationMemo separations;
  Interned signatures, answers;
};

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += p + "\n";
  return out;
}

// The pairs the candidate tells apart by where they place the pair, into `f` and the reports.
void told_by_placement(const std::vector<SteadyResult>& steady,
                       const std::vector<std::string>& answers, std::vector<PairReport>& reports,
                       std::int64_t weight, Memos& memo, Found& f) {
  std::size_t k = 0;
  for (std::size_t i = 0; i < steady.size(); ++i)
    for (std::size_t j = i + 1; j < steady.size(); ++j, ++k) {
      const Separation& s = separation_of(steady, answers, i, j, memo.separations);
      PairReport& r = reports[k];
      r.best_tv = std::max(r.best_tv, s.tv);
      if (s.discriminates()) {
        r.candidates += weight;
        f.pairs.emplace_back(i, j);
        f.margin = std::min(f.margin, s.margin());
      } else if (s.tv >= kDiscriminateTv) {
        for (const std::string& cause : s.blocking) r.blocked_by[cause] += weight;
      }
    }
}

// The pairs the candidate tells apart by their decisions: one decides otherwise on at least
// kSplitShare of the other's wakes (the margin: the larger share).
void told_by_decisions(const std::vector<std::vector<double>>& differ,
                       std::vector<PairReport>& reports, std::int64_t weight, Found& f) {
  std::size_t k = 0;
  for (std::size_t i = 0; i < differ.size(); ++i)
    for (std::size_t j = i + 1; j < differ.size(); ++j, ++k) {
      const double split = std::max(differ[i][j], differ[j][i]);
      PairReport& r = reports[k];
      r.best_split = std::max(r.best_split, split);
      if (split >= kSplitShare) {
        r.candidates += weight;
        f.pairs.emplace_back(i, j);
        f.margin = std::min(f.margin, split);
      }
    }
}

// Evaluates one candidate: what the choice reads of it, and what it adds to the pair reports,
// counted `weight` times (the members of its shape).
Found evaluate(const SchedTopology& sched, const SearchOptions& opt, const SearchCandidate& c,
               std::vector<PairReport>& reports, std::int64_t weight, Memos& memo) {
  const bool decisions = opt.objective == SearchOptions::Objective::kDecisions;
  const Simulated sim = simulate(sched, opt, c, decisions);
  const std::vector<SteadyResult>& steady = sim.steady;
  const std::vector<std::string> answers = search_answer(steady);
  Found f;
  if (decisions) {
    told_by_decisions(sim.differ, reports, weight, f);
  } else {
    told_by_placement(steady, answers, reports, weight, memo, f);
  }
  if (f.pairs.empty()) return f;
  std::set<std::string> states;
  std::string signature;
  for (const SteadyResult& r : steady) {
    const std::string one = classes_json(r.classes).dump();
    signature += one + ";";
    states.insert(one);
  }
  f.signature = memo.signatures.id(std::move(signature));
  f.answer = memo.answers.id(joined(answers));
  f.distinct = states.size();
  f.busy = c.busy.size();
  f.allowed = c.allowed.size();
  return f;
}

// What choosing `f` adds: pairs and policies still short of their quota.
int gain(const Found& f, const std::vector<int>& pair_need, const std::vector<int>& policy_need,
         std::size_t n) {
  int g = 0;
  std::vector<bool> seen(policy_need.size(), false);
  for (const auto& [i, j] : f.pairs) {
    const std::size_t k = pair_index(i, j, n);
    if (pair_need[k] > 0) ++g;
    for (std::size_t p : {i, j})
      if (!seen[p] && policy_need[p] > 0) ++g, seen[p] = true;
  }
  return g;
}

// What makes one case better than another, most important first: what it adds to the quotas, a
// way of telling the policies apart not chosen yet, more different steady states, fewer busy CPUs,
// a wider cpuset, a larger margin. Compared as a tuple; the first found wins ties.
auto rank(const Found& f, int gain, const std::set<int>& chosen) {
  return std::tuple(gain, chosen.count(f.signature) == 0, f.distinct, -static_cast<int>(f.busy),
                    f.allowed, f.margin);
}

// A shape that discriminates: what its simulated member gave, and the members not chosen yet
// (`left`, the first at candidate index `next`). Every member ranks as the simulated one.
struct Shape {
  Found found;
  std::int64_t next = 0, left = 1;
  std::size_t orbit = 0;
  std::int64_t taken = 0;
};

// The index of a shape's member after `taken` were chosen.
using NextMember = std::function<std::int64_t(const Shape&)>;

// Greedy: the best-ranked member that adds something, the first in candidate order among equals,
// until nothing adds or max_cases are chosen. Returns each choice and its candidate index.
std::vector<std::pair<Found, std::int64_t>> choose(std::vector<Shape> shapes,
                                                   const SearchOptions& opt,
                                                   const NextMember& next_member) {
  const std::size_t n = opt.policies.size();
  std::vector<int> pair_need(n * (n - 1) / 2, opt.per_pair), policy_need(n, opt.per_policy);
  std::vector<std::pair<Found, std::int64_t>> chosen;
  std::set<int> signatures;
  while (static_cast<int>(chosen.size()) < opt.max_cases) {
    auto best = shapes.end();
    decltype(rank(best->found, 0, signatures)) best_rank;
    for (auto it = shapes.begin(); it != shapes.end(); ++it) {
      const int g = gain(it->found, pair_need, policy_need, n);
      if (g == 0) continue;
      const auto r = rank(it->found, g, signatures);
      if (best == shapes.end() || r > best_rank || (r == best_rank && it->next < best->next))
        best = it, best_rank = r;
    }
    if (best == shapes.end()) break;
    std::set<std::size_t> told;  // each policy once per case, however many of its pairs
    for (const auto& [i, j] : best->found.pairs) {
      --pair_need[pair_index(i, j, n)];
      told.insert({i, j});
    }
    for (std::size_t p : told) --policy_need[p];
    signatures.insert(best->found.signature);
    chosen.emplace_back(best->found, best->next);
    ++best->taken;
    if (--best->left == 0) {
      shapes.erase(best);
    } else {
      best->next = next_member(*best);
    }
  }
  return chosen;
}

// The policies in registry order; throws for an unknown id or fewer than two.
std::vector<std::string> checked_policies(const std::vector<std::string>& wanted) {
  for (const std::string& id : wanted) policy_by_id(id);  // throws for an unknown id
  std::vector<std::string> out;
  for (const WakeupPolicy* p : all_policies())
    if (std::find(wanted.begin(), wanted.end(), p->id()) != wanted.end()) out.emplace_back(p->id());
  if (out.size() < 2)
    throw std::invalid_argument("search: give at least two policies to tell apart");
  return out;
}

}  // namespace

std::vector<SteadyResult> candidate_steady_states(const SchedTopology& sched,
                                                  const SearchOptions& opt,
                                                  const SearchCandidate& c) {
  return steady_states(sched, opt, c);
}

std::vector<std::string> search_answer(const std::vector<SteadyResult>& steady) {
  std::vector<std::string> out;
  for (const SteadyResult& s : steady) {
    std::string one = classes_json(s.classes).dump();
    for (const SteadyAlternative& a : s.alternatives)
      one += "|" + std::string(cause_kind_id(a.cause.kind)) + classes_json(a.classes).dump();
    out.push_back(std::move(one));
  }
  return out;
}

std::vector<SearchCandidate> search_candidates(const SchedTopology& sched) {
  std::vector<SearchCandidate> out;
  for (const std::vector<int>& allowed : search_cpusets(sched))
    for (int a : allowed)
      for (int b : allowed)
        if (a != b)
          for (std::vector<int>& busy : busy_sets(sched, allowed, a))
            out.push_back({allowed, a, b, std::move(busy)});
  return out;
}

namespace {

// The shapes to simulate: how many, and each one's first member (a candidate and its index) and
// member count.
struct ShapeList {
  std::size_t count = 0;
  std::function<SearchCandidate(std::size_t)> candidate;
  std::function<std::int64_t(std::size_t)> first, size;
};

// Simulates each shape's first member, counted for all its members, until `control` says stop;
// returns the shapes that discriminate some pair.
std::vector<Shape> simulate_shapes(const SchedTopology& sched, const SearchOptions& opt,
                                   const ShapeList& list, const SearchControl& control,
                                   SearchResult& r, Memos& memo) {
  r.shapes = static_cast<std::int64_t>(list.count);
  std::vector<Shape> out;
  for (std::size_t k = 0; k < list.count; ++k) {
    Found f = evaluate(sched, opt, list.candidate(k), r.pairs, list.size(k), memo);
    ++r.simulated;
    if (!f.pairs.empty()) out.push_back({std::move(f), list.first(k), list.size(k), k});
    if (control && !control(r.simulated, r.shapes) && r.simulated < r.shapes) {
      r.cut = true;
      break;
    }
  }
  return out;
}

// The chosen member `c` of a shape whose first member gave `f`: simulated directly, for its own
// CPUs; a different answer means a renaming that does not keep the model.
FoundCase chosen_case(const SchedTopology& sched, const SearchOptions& opt, SearchCandidate c,
                      std::int64_t index, const Found& f, const Memos& memo) {
  Simulated sim = simulate(sched, opt, c, true);
  if (joined(search_answer(sim.steady)) != memo.answers.text(f.answer))
    throw std::logic_error("search: candidate " + std::to_string(index) +
                           " differs from the first member of its shape");
  return {std::move(c), std::move(sim.steady), f.pairs, f.margin, memo.signatures.text(f.signature),
          f.distinct,   std::move(sim.differ)};
}

}  // namespace

SearchResult search(const SchedTopology& sched, const SearchOptions& given,
                    const SearchControl& control) {
  SearchOptions opt = given;
  opt.policies = checked_policies(given.policies);
  SearchResult r;
  r.policies = opt.policies;
  r.pairs = empty_reports(opt.policies);
  Memos memo;
  if (opt.exhaustive) {  // every candidate its own shape
    const std::vector<SearchCandidate> all = search_candidates(sched);
    r.candidates = static_cast<std::int64_t>(all.size());
    const ShapeList list{all.size(), [&](std::size_t k) { return all[k]; },
                         [](std::size_t k) { return static_cast<std::int64_t>(k); },
                         [](std::size_t) { return std::int64_t{1}; }};
    for (const auto& [f, index] :
         choose(simulate_shapes(sched, opt, list, control, r, memo), opt, [](const Shape& s) {
           return s.next;  // never asked: a shape of one member
         }))
      r.chosen.push_back(
          chosen_case(sched, opt, all[static_cast<std::size_t>(index)], index, f, memo));
  } else {
    const SymmetryRules rules{slow_switch_out_applies(opt.emulated, opt.work_ns)};
    const CandidateSpace space(sched);
    // Asked as (0, 0) while the shapes are found: a limit holds from the start.
    const InTime in_time = [&] { return !control || control(0, 0); };
    std::optional<SearchShapes> orbits;
    try {
      orbits.emplace(space, model_symmetries(sched, rules, in_time), in_time);
    } catch (const OutOfTime&) {
      r.candidates = space.size();
      r.cut = true;
      return r;
    }
    r.candidates = space.size();
    const ShapeList list{orbits->count(), [&](std::size_t k) { return space.at(orbits->first(k)); },
                         [&](std::size_t k) { return orbits->first(k); },
                         [&](std::size_t k) { return orbits->size(k); }};
    const NextMember next = [&](const Shape& s) {
      return orbits->first_members(s.orbit, static_cast<std::size_t>(s.taken) + 1).back();
    };
    for (const auto& [f, index] :
         choose(simulate_shapes(sched, opt, list, control, r, memo), opt, next))
      r.chosen.push_back(chosen_case(sched, opt, space.at(index), index, f, memo));
  }
  for (const FoundCase& f : r.chosen)
    for (const auto& [i, j] : f.pairs) ++r.pairs[pair_index(i, j, opt.policies.size())].chosen;
  return r;
}

ShapeCheck check_shapes(const SchedTopology& sched, const SearchOptions& given, int n,
                        std::uint64_t seed, const std::vector<CpuMap>* generators) {
  SearchOptions opt = given;
  opt.policies = checked_policies(given.policies);
  const CandidateSpace space(sched);
  const SymmetryRules rules{slow_switch_out_applies(opt.emulated, opt.work_ns)};
  const SearchShapes shapes(space, generators ? *generators : model_symmetries(sched, rules));
  ShapeCheck c;
  c.candidates = space.size();
  c.shapes = static_cast<std::int64_t>(shapes.count());
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> pick(0, space.size() - 1);
  for (; c.checked < n; ++c.checked) {
    const std::int64_t i = pick(rng), first = shapes.first(shapes.shape_of(i));
    c.moved += first != i;
    if (search_answer(steady_states(sched, opt, space.at(i))) !=
        search_answer(steady_states(sched, opt, space.at(first)))) {
      c.differs = i, c.first = first;
      ++c.checked;
      break;
    }
  }
  return c;
}

namespace {

std::string steady_text(const SteadyResult& r) {
  return format_cpu_list(r.cpus) + " " + classes_text(class_shares(r.classes));
}

std::string fmt_policy(const std::string& id) {
  return id + std::string(id.size() < 14 ? 14 - id.size() : 1, ' ');
}

std::string pair_line(const PairReport& p, const SearchOptions& opt) {
  std::ostringstream os;
  os << p.a << " vs " << p.b << ": ";
  if (p.candidates > 0) {
    os << p.chosen << " chosen of " << p.candidates << " that discriminate";
  } else if (opt.objective == SearchOptions::Objective::kDecisions) {
    os << "none: one decides otherwise on at most " << fmt("%.1f", 100 * p.best_split)
       << " % of the other's wakes (needed: " << fmt("%.0f", 100 * kSplitShare) << " %)";
  } else if (p.best_tv < kDiscriminateTv) {
    os << "none: the steady states are never " << kDiscriminateTv << " TV apart (largest "
       << fmt("%.2f", p.best_tv) << ")";
  } else {
    os << "none: each candidate " << kDiscriminateTv << " TV apart lies within a range\n"
       << "    (candidates per blocking alternative:";
    for (const auto& [cause, n] : p.blocked_by) os << " " << cause << " " << n;
    os << ")";
  }
  return os.str();
}

// ", decides otherwise on 6.6 % of mainline's wakes": policy p's decisions on the first policy's
// wakes, when they split.
std::string split_text(const FoundCase& f, std::size_t p) {
  if (p == 0 || f.differ.empty() || f.differ[0][p] <= 0) return "";
  return ", decides otherwise on " + fmt("%.1f", 100 * f.differ[0][p]) + " % of " +
         f.steady[0].policy + "'s wakes";
}

}  // namespace

std::string render_search_text(const SearchResult& r, const SearchOptions& opt) {
  std::ostringstream os;
  if (r.cut)
    os << "INCOMPLETE, cut short after " << r.simulated << " of " << r.shapes
       << " shapes: the counts and cases cover those only\n";
  os << r.chosen.size() << " cases chosen of " << r.candidates << " candidates"
     << (opt.exhaustive ? ", each simulated" : " in " + std::to_string(r.shapes) + " shapes")
     << " ("
     << (opt.current_cpu ? wake_flags_id(WakeFlags::kCurrentCpu)
         : opt.sync      ? std::string_view("sync")
                         : std::string_view("no-sync"))
     << " wakes"
     << (slow_switch_out_applies(opt.emulated, opt.work_ns)
             ? ", with the emulated (TCG) switch-out alternatives"
             : "")
     << ")\n";
  if (opt.intermittent)
    os << "busy CPUs busy " << opt.intermittent->duty << " % of each period of "
       << opt.intermittent->period_wakes << " wakes; pairs told apart by their "
       << (opt.objective == SearchOptions::Objective::kDecisions ? "decisions" : "placement")
       << "\n";
  else if (opt.objective == SearchOptions::Objective::kDecisions)
    os << "pairs told apart by their decisions\n";
  for (const PairReport& p : r.pairs) os << "  " << pair_line(p, opt) << "\n";
  for (std::size_t k = 0; k < r.chosen.size(); ++k) {
    const FoundCase& f = r.chosen[k];
    os << "case " << k + 1 << ": start " << f.candidate.start_a << "," << f.candidate.start_b
       << ", cpuset " << format_cpu_list(f.candidate.allowed) << ", busy "
       << (f.candidate.busy.empty() ? "none" : format_cpu_list(f.candidate.busy)) << "\n";
    for (std::size_t p = 0; p < f.steady.size(); ++p)
      os << "  " << fmt_policy(f.steady[p].policy) << steady_text(f.steady[p]) << split_text(f, p)
         << "\n";
  }
  return os.str();
}

}  // namespace wb
