#include "analysis/search.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "analysis/predict_results.h"
#include "common/util/cpulist.h"
#include "common/util/text.h"

namespace wb {

namespace {

// Every CPU, then each distinct sched-domain span of two or more CPUs, widest first.
std::vector<std::vector<int>> cpusets(const SchedTopology& sched) {
  std::set<std::vector<int>> spans = {sched.cpus()};
  for (int cpu : sched.cpus())
    for (const SchedDomain& d : sched.domains(cpu))
      if (d.span.size() >= 2) spans.insert(d.span);
  std::vector<std::vector<int>> out(spans.begin(), spans.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.size() > y.size(); });
  return out;
}

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

std::vector<SteadyResult> steady_states(const SchedTopology& sched, const SearchOptions& opt,
                                        const SearchCandidate& c) {
  SteadyOptions so;
  so.sync = opt.sync;
  so.current_cpu = opt.current_cpu;
  so.start_a = c.start_a;
  so.start_b = c.start_b;
  so.busy = c.busy;
  so.allowed = c.allowed;
  so.slow_switch_out = slow_switch_out_applies(opt.emulated, opt.work_ns);
  std::vector<SteadyResult> out;
  for (const std::string& id : opt.policies)
    out.push_back(simulate_steady_state(sched, so, policy_by_id(id)));
  return out;
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

// Evaluates one candidate: its discriminated pairs, and what it adds to the pair reports.
FoundCase evaluate(const SchedTopology& sched, const SearchOptions& opt, SearchCandidate c,
                   std::vector<PairReport>& reports) {
  std::vector<SteadyResult> steady = steady_states(sched, opt, c);
  FoundCase f{std::move(c), std::move(steady), {}, 1.0};
  std::size_t k = 0;
  for (std::size_t i = 0; i < f.steady.size(); ++i)
    for (std::size_t j = i + 1; j < f.steady.size(); ++j, ++k) {
      const Separation s = separation(f.steady[i], f.steady[j]);
      PairReport& r = reports[k];
      r.best_tv = std::max(r.best_tv, s.tv);
      if (s.discriminates()) {
        ++r.candidates;
        f.pairs.emplace_back(i, j);
        f.margin = std::min(f.margin, s.margin());
      } else if (s.tv >= kDiscriminateTv) {
        for (const std::string& cause : s.blocking) ++r.blocked_by[cause];
      }
    }
  std::set<std::string> states;
  for (const SteadyResult& r : f.steady) {
    const std::string one = classes_json(r.classes).dump();
    f.signature += one + ";";
    states.insert(one);
  }
  f.distinct = states.size();
  return f;
}

// What choosing `f` adds: pairs and policies still short of their quota.
int gain(const FoundCase& f, const std::vector<int>& pair_need, const std::vector<int>& policy_need,
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
auto rank(const FoundCase& f, int gain, const std::set<std::string>& chosen) {
  return std::tuple(gain, chosen.count(f.signature) == 0, f.distinct,
                    -static_cast<int>(f.candidate.busy.size()), f.candidate.allowed.size(),
                    f.margin);
}

// Greedy: the best-ranked candidate that adds something, until nothing adds or max_cases are
// chosen.
std::vector<FoundCase> choose(std::vector<FoundCase> found, const SearchOptions& opt) {
  const std::size_t n = opt.policies.size();
  std::vector<int> pair_need(n * (n - 1) / 2, opt.per_pair), policy_need(n, opt.per_policy);
  std::vector<FoundCase> chosen;
  std::set<std::string> signatures;
  while (static_cast<int>(chosen.size()) < opt.max_cases) {
    auto best = found.end();
    decltype(rank(*best, 0, signatures)) best_rank;
    for (auto it = found.begin(); it != found.end(); ++it) {
      const int g = gain(*it, pair_need, policy_need, n);
      if (g == 0) continue;
      const auto r = rank(*it, g, signatures);
      if (best == found.end() || r > best_rank) best = it, best_rank = r;
    }
    if (best == found.end()) break;
    std::set<std::size_t> told;  // each policy once per case, however many of its pairs
    for (const auto& [i, j] : best->pairs) {
      --pair_need[pair_index(i, j, n)];
      told.insert({i, j});
    }
    for (std::size_t p : told) --policy_need[p];
    signatures.insert(best->signature);
    chosen.push_back(std::move(*best));
    found.erase(best);
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

std::vector<SearchCandidate> search_candidates(const SchedTopology& sched) {
  std::vector<SearchCandidate> out;
  for (const std::vector<int>& allowed : cpusets(sched))
    for (int a : allowed)
      for (int b : allowed)
        if (a != b)
          for (std::vector<int>& busy : busy_sets(sched, allowed, a))
            out.push_back({allowed, a, b, std::move(busy)});
  return out;
}

SearchResult search(const SchedTopology& sched, const SearchOptions& given) {
  SearchOptions opt = given;
  opt.policies = checked_policies(given.policies);
  SearchResult r;
  r.policies = opt.policies;
  r.pairs = empty_reports(opt.policies);
  std::vector<FoundCase> found;
  for (SearchCandidate& c : search_candidates(sched)) {
    ++r.candidates;
    FoundCase f = evaluate(sched, opt, std::move(c), r.pairs);
    if (!f.pairs.empty()) found.push_back(std::move(f));
  }
  r.chosen = choose(std::move(found), opt);
  for (const FoundCase& f : r.chosen)
    for (const auto& [i, j] : f.pairs) ++r.pairs[pair_index(i, j, opt.policies.size())].chosen;
  return r;
}

namespace {

std::string steady_text(const SteadyResult& r) {
  return format_cpu_list(r.cpus) + " " + classes_text(classes_json(r.classes));
}

std::string fmt_policy(const std::string& id) {
  return id + std::string(id.size() < 14 ? 14 - id.size() : 1, ' ');
}

std::string pair_line(const PairReport& p) {
  std::ostringstream os;
  os << p.a << " vs " << p.b << ": ";
  if (p.candidates > 0) {
    os << p.chosen << " chosen of " << p.candidates << " that discriminate";
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

}  // namespace

std::string render_search_text(const SearchResult& r, const SearchOptions& opt) {
  std::ostringstream os;
  os << r.chosen.size() << " cases chosen of " << r.candidates << " candidates ("
     << (opt.current_cpu ? "current-cpu"
         : opt.sync      ? "sync"
                         : "no-sync")
     << " wakes"
     << (slow_switch_out_applies(opt.emulated, opt.work_ns)
             ? ", with the emulated (TCG) switch-out alternatives"
             : "")
     << ")\n";
  for (const PairReport& p : r.pairs) os << "  " << pair_line(p) << "\n";
  for (std::size_t k = 0; k < r.chosen.size(); ++k) {
    const FoundCase& f = r.chosen[k];
    os << "case " << k + 1 << ": start " << f.candidate.start_a << "," << f.candidate.start_b
       << ", cpuset " << format_cpu_list(f.candidate.allowed) << ", busy "
       << (f.candidate.busy.empty() ? "none" : format_cpu_list(f.candidate.busy)) << "\n";
    for (const SteadyResult& s : f.steady)
      os << "  " << fmt_policy(s.policy) << steady_text(s) << "\n";
  }
  return os.str();
}

}  // namespace wb
