// How a run goes, on stderr: what it is about to do, one line per case once it is done with the
// ETA, and the durations both print. The text is made here from the values given (elapsed times
// included), so it is tested without a clock; the callers print it.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/schema/result_set.h"

namespace wb {

struct RunPlan;

// "m:ss" (minutes unbounded).
std::string fmt_duration(double s);

// "  ETA m:ss" for `left` units of work after `done` took `elapsed_s`; empty when either is 0.
std::string eta_text(double elapsed_s, double done, double left);

// Seconds since `start` on the steady clock.
double seconds_since(std::chrono::steady_clock::time_point start);

// What the run is about to do: its cases, the A/B settings and what makes the figures noisy (the
// environment's warnings), one line each.
std::string announcement(const RunPlan& plan, const nlohmann::json& env);

// Where --until-decided stands after look `look` of `looks`, taken at `level`.
struct LookCounts {
  size_t look = 0, looks = 0;
  double level = 0;
  int different = 0, same = 0, unknown = 0;
  size_t go_on = 0;  // the cases still UNKNOWN, measured in the next batch
};
// The look's line: its counts, the time spent of the budget and, with `next_s` >= 0, the next
// look's ETA.
std::string look_line(const LookCounts& n, double elapsed_s, double budget_s, double next_s);

// `wakebench search`'s line after `done` of `total` shapes took `elapsed_s`, with the ETA.
std::string search_progress_line(std::int64_t done, std::int64_t total, double elapsed_s);

// One line per case once it is done (its last repetition, its failure, or its skip), with the ETA
// from the round trips done so far and those left.
class Progress {
 public:
  // The cases to report, every set's; a skipped one has no round trips to run.
  explicit Progress(const std::vector<const CaseRecord*>& cases);
  void repetition_done(const CaseSpec& s);
  // The case's line after `elapsed_s` seconds; `tag` says which setting's set, " ab1" (empty
  // without --ab).
  std::string case_done(const CaseRecord& r, const std::string& tag, double elapsed_s);

 private:
  size_t total_ = 0, reported_ = 0;
  int64_t left_ = 0, done_ = 0;  // round trips
};

}  // namespace wb
