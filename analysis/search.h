// `wakebench search` (docs/policy-model.md#search): kernel-placed cases on which the policies'
// models disagree. On one topology it tries every start pair, cpuset (each sched-domain span of
// two or more CPUs) and busy set (none, one CPU, one whole core), simulates every policy's steady
// state, keeps the cases that discriminate a pair of policies (analysis/discriminate.h) and chooses
// a few per pair and per policy. Pure: the topology and options in, typed results out; the command
// (runners/cmd_search.cpp) writes them as a `wakebench run` config.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/discriminate.h"
#include "analysis/predict.h"

namespace wb {

struct SearchOptions {
  std::vector<std::string> policies;  // ids, in policy order; at least two
  bool sync = true;                   // the mechanism's wakes carry WF_SYNC
  bool current_cpu = false;           // ... or WF_CURRENT_CPU
  bool emulated = false;              // a TCG guest (slow_switch_out_applies())
  long long work_ns = 0;              // each side's work before it answers (the work_ns knob)
  int per_pair = 2;                   // cases wanted per discriminable pair
  int per_policy = 6;                 // cases wanted per policy (discriminating it from another)
  int max_cases = 24;
};

struct SearchCandidate {
  std::vector<int> allowed;  // the cpuset; every CPU of the topology for `kernel`
  int start_a = -1, start_b = -1;
  std::vector<int> busy;
};

struct FoundCase {
  SearchCandidate candidate;
  std::vector<SteadyResult> steady;                        // one per SearchOptions::policies
  std::vector<std::pair<std::size_t, std::size_t>> pairs;  // discriminated (indexes into steady)
  double margin = 0;  // the least Separation::margin() of its pairs
  // Each policy's steady classes, joined: equal for cases that tell the policies apart the same
  // way; and how many different steady states the policies have on it.
  std::string signature;
  std::size_t distinct = 0;
};

struct PairReport {
  std::string a, b;
  int chosen = 0;      // chosen cases that discriminate the pair
  int candidates = 0;  // candidates that do
  double best_tv = 0;  // the largest TV between the two steady states over every candidate
  // Candidates whose steady states are >= kDiscriminateTv apart but within one's range: per cause
  // of the alternative that brings them within (Separation::blocking), how many.
  std::map<std::string, int> blocked_by;
};

struct SearchResult {
  std::vector<std::string> policies;  // SearchOptions::policies in policy order
  int candidates = 0;
  std::vector<FoundCase> chosen;
  std::vector<PairReport> pairs;  // every pair of SearchOptions::policies, in order
};

// Every candidate on `sched`, in a fixed order (cpusets widest first, then start pairs, then busy
// sets from none up).
std::vector<SearchCandidate> search_candidates(const SchedTopology& sched);

// Throws std::invalid_argument naming the problem (fewer than two policies, an unknown policy id).
SearchResult search(const SchedTopology& sched, const SearchOptions& opt);

// One line per pair (found, or why not) and the chosen cases with each policy's steady state; at
// most 100 columns.
std::string render_search_text(const SearchResult& r, const SearchOptions& opt);

}  // namespace wb
