// `wakebench run --until-decided BASE.json` (docs/cli.md#until-decided): after each batch of
// interleaved rounds the run compares itself with the baseline (analysis/compare/compare.h) at the
// level this look may spend (alpha_spent_at: at most `looks` looks, so the chance of any false
// verdict over all of them stays at most alpha), keeps each case's first SAME or DIFFERENT, and
// goes on with the cases still UNKNOWN that more repetitions of this run can decide. Pure
// bookkeeping.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/compare/compare.h"

namespace wb {

struct SequentialVerdict {
  CompareVerdict verdict = CompareVerdict::kUnknown;
  std::size_t look = 0;  // the look that decided it (or the last one it took part in)
  double level = 0;      // the level that look spent
  std::size_t base_repetitions = 0, repetitions = 0;
  std::optional<double> change_pct;  // + = better
  std::string why;                   // UNKNOWN: why it stopped
};

class SequentialRun {
 public:
  SequentialRun(std::size_t looks, double alpha);
  std::size_t looks() const { return looks_; }
  double level(std::size_t look) const;  // alpha_spent_at(look, looks, alpha)
  // Records look `look`'s comparison (made at level(look)) of this run (set 1) against the base
  // (set 0); returns the keys of the cases that go on.
  std::vector<std::string> look(const Comparison& cmp, std::size_t look);
  const std::map<std::string, SequentialVerdict>& verdicts() const { return verdicts_; }
  std::map<CompareVerdict, int> counts() const;
  nlohmann::json json() const;  // the result set's `until_decided.cases`

 private:
  std::size_t looks_;
  double alpha_;
  std::map<std::string, SequentialVerdict> verdicts_;  // CaseView::key() -> verdict
};

}  // namespace wb
