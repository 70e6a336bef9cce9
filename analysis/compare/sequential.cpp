#include "analysis/compare/sequential.h"

#include <stdexcept>

namespace wb {

SequentialRun::SequentialRun(std::size_t looks, double alpha) : looks_(looks), alpha_(alpha) {
  if (looks < 1) throw std::invalid_argument("--looks must be at least 1");
}

double SequentialRun::level(std::size_t look) const { return alpha_spent_at(look, looks_, alpha_); }

std::vector<std::string> SequentialRun::look(const Comparison& cmp, std::size_t look) {
  std::vector<std::string> go_on;
  for (const CompareRow& row : cmp.rows) {
    const CompareCell& c = row.cells[1];
    if (!c.decision) continue;
    auto [it, fresh] = verdicts_.try_emplace(row.key);
    SequentialVerdict& v = it->second;
    if (!fresh && v.verdict != CompareVerdict::kUnknown) continue;  // decided at an earlier look
    const Decision& d = *c.decision;
    v = {d.verdict,    look, level(look), row.cells[0].repetitions.size(), c.repetitions.size(),
         c.change_pct, d.why};
    if (d.verdict != CompareVerdict::kUnknown) continue;
    if (d.needed_base)
      v.why = "the baseline's " + std::to_string(v.base_repetitions) +
              " repetitions limit this: " + std::to_string(*d.needed_base) + " a side needed";
    else if (!d.needed)
      v.why += "; no repetition count decides it";
    else if (look < looks_)
      go_on.push_back(row.key);
  }
  return go_on;
}

std::map<CompareVerdict, int> SequentialRun::counts() const {
  std::map<CompareVerdict, int> n{
      {CompareVerdict::kDifferent, 0}, {CompareVerdict::kSame, 0}, {CompareVerdict::kUnknown, 0}};
  for (const auto& [key, v] : verdicts_) ++n[v.verdict];
  return n;
}

nlohmann::json SequentialRun::json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, v] : verdicts_)
    out[key] = {{"verdict", verdict_id(v.verdict)},
                {"look", v.look},
                {"level", v.level},
                {"base_repetitions", v.base_repetitions},
                {"repetitions", v.repetitions},
                {"change_pct", v.change_pct ? nlohmann::json(*v.change_pct) : nlohmann::json()},
                {"why", v.why.empty() ? nlohmann::json() : nlohmann::json(v.why)}};
  return out;
}

}  // namespace wb
