// `wakebench search` (docs/policy-model.md#search): kernel-placed cases on which the policies'
// models disagree. On one topology it tries every start pair, cpuset (each sched-domain span of
// two or more CPUs) and busy set (none, one CPU, one whole core), simulates every policy's steady
// state once per shape (an orbit of candidates under the CPU renamings that keep the model's
// answer, analysis/predict/search_orbits.h), keeps the cases that discriminate a pair of policies
// (analysis/predict/discriminate.h) and chooses a few per pair and per policy. Pure: the topology
// and options in, typed results out; the command (runners/cmd_search.cpp) writes them as a
// `wakebench run` config.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/predict/discriminate.h"
#include "analysis/predict/intermittent.h"
#include "analysis/predict/predict.h"
#include "analysis/predict/search_orbits.h"

namespace wb {

// The least share of one policy's wakes another must decide otherwise for the decisions objective
// to tell them apart (issue 53's split goal: 5 % of the kernel's records).
inline constexpr double kSplitShare = 0.05;

struct SearchOptions {
  std::vector<std::string> policies;  // ids, in policy order; at least two
  bool sync = true;                   // the mechanism's wakes carry WF_SYNC
  bool current_cpu = false;           // ... or WF_CURRENT_CPU
  bool emulated = false;              // a TCG guest (slow_switch_out_applies())
  long long work_ns = 0;              // each side's work before it answers (the work_ns knob)
  int per_pair = 2;                   // cases wanted per discriminable pair
  int per_policy = 6;                 // cases wanted per policy (discriminating it from another)
  int max_cases = 24;
  // Simulate every candidate, not one per shape (the reference the shapes are checked against).
  bool exhaustive = false;
  // The busy CPUs busy only part of the time (analysis/predict/intermittent.h): a candidate with
  // busy CPUs gets each policy's mix over the phases instead of its steady state (no alternatives).
  std::optional<Intermittent> intermittent;
  // What tells two policies apart on a candidate: where they place the pair (steady states
  // kDiscriminateTv apart, out of each other's ranges), or how they decide (one decides otherwise
  // on >= kSplitShare of the other's wakes, as `replay --diff` counts on a kernel's records).
  enum class Objective { kPlacement, kDecisions };
  Objective objective = Objective::kPlacement;
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
  // [i][j]: the share of policy i's wakes on which policy j's model chooses another CPU.
  std::vector<std::vector<double>> differ;
};

struct PairReport {
  std::string a, b;
  int chosen = 0;               // chosen cases that discriminate the pair
  std::int64_t candidates = 0;  // candidates that do
  double best_tv = 0;           // the largest TV between the two steady states over every candidate
  double best_split = 0;        // the objective kDecisions: the largest share of decisions split
  // Candidates whose steady states are >= kDiscriminateTv apart but within one's range: per cause
  // of the alternative that brings them within (Separation::blocking), how many.
  std::map<std::string, std::int64_t> blocked_by;
};

struct SearchResult {
  std::vector<std::string> policies;  // SearchOptions::policies in policy order
  std::int64_t candidates = 0;        // every candidate of the topology
  std::int64_t shapes = 0;            // its orbits (= candidates when exhaustive)
  std::int64_t simulated = 0;         // the shapes simulated: all, unless cut
  bool cut = false;                   // stopped by SearchControl before the last shape
  std::vector<FoundCase> chosen;
  std::vector<PairReport> pairs;  // every pair of SearchOptions::policies, in order
};

// Every candidate on `sched`, in a fixed order (cpusets widest first, then start pairs, then busy
// sets from none up), enumerated directly (CandidateSpace numbers the same list).
std::vector<SearchCandidate> search_candidates(const SchedTopology& sched);

// Every policy's steady state on the candidate (SearchOptions::policies, in order).
std::vector<SteadyResult> candidate_steady_states(const SchedTopology& sched,
                                                  const SearchOptions& opt,
                                                  const SearchCandidate& c);
// What the search reads of them: per policy its classes, its alternatives' causes and classes, in
// order; equal for every member of a shape.
std::vector<std::string> search_answer(const std::vector<SteadyResult>& steady);

// Called after each shape simulated with how many are done of how many; false stops the search,
// which then chooses among the shapes simulated so far (SearchResult::cut).
using SearchControl = std::function<bool(std::int64_t done, std::int64_t total)>;

// Throws std::invalid_argument naming the problem (fewer than two policies, an unknown policy id),
// std::logic_error if a chosen case's direct simulation differs from its shape's.
SearchResult search(const SchedTopology& sched, const SearchOptions& opt,
                    const SearchControl& control = {});

// The check of the shapes where the exhaustive search cannot finish: `n` candidates drawn at
// random (`seed`), each simulated directly and compared (search_answer()) with the first member
// of its shape under `generators` (the model's symmetries when null).
struct ShapeCheck {
  std::int64_t candidates = 0, shapes = 0;  // of the topology
  int checked = 0, moved = 0;               // drawn; of them, not their shape's first member
  std::int64_t differs = -1, first = -1;    // the first drawn that answers unlike its shape's first
};
ShapeCheck check_shapes(const SchedTopology& sched, const SearchOptions& opt, int n,
                        std::uint64_t seed, const std::vector<CpuMap>* generators = nullptr);

// One line per pair (found, or why not) and the chosen cases with each policy's steady state; at
// most 100 columns.
std::string render_search_text(const SearchResult& r, const SearchOptions& opt);

}  // namespace wb
