#include "common/schema/outcome.h"

namespace wb {

std::string_view role_id(Role r) { return r == Role::kWaker ? "waker" : "wakee"; }

CaseCounters sum_counters(const std::vector<std::vector<PairSamples>>& repetitions) {
  CaseCounters c;
  for (const auto& rep : repetitions)
    for (const auto& s : rep) {
      c.round_trips += static_cast<int64_t>(s.rtt_ns.size());
      for (int side = 0; side < 2; ++side)
        for (const auto& [event, v] : s.counters[side]) c.totals[side][event] += v;
      c.unavailable.insert(s.unavailable.begin(), s.unavailable.end());
    }
  return c;
}

}  // namespace wb
