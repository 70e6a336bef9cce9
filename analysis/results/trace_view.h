// A case's `trace` (docs/result-set.md#trace): what `run --trace-wakeups` recorded of the kernel's
// wakeup paths, as common/schema/wakeup_trace.cpp's trace_json writes it, typed once when the set
// is read. Not WakeupTraceSummary: that holds what the block does not (each wakeup, the decision
// lines, the switch-out times themselves where the block keeps percentiles) and lacks what it
// holds ({"unavailable": why}). The view keeps the counts the analysis reads; the block's other
// keys (moved_by_class, since_switch_out_us, first_moves, ...) are not read here.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace wb {

struct TraceView {
  // Why the case has no counts ({"unavailable": why}); "" when it has them.
  std::string unavailable;
  int64_t wakeups = 0;                   // by a case task; 0 when not recorded (as below)
  std::map<std::string, int64_t> paths;  // path ("selection", ...) -> wakeups, as recorded
  // path -> class of the target CPU -> wakeups; nullopt in sets that predate it.
  std::optional<std::map<std::string, std::map<std::string, int64_t>>> classes_by_path;
  int64_t moved = 0;                    // target CPU not the wakee's previous one
  int64_t foreign_wakeups = 0;          // `foreign.wakeups`: by a task outside the case
  int64_t stacked_wakes = 0;            // `stacked.wakes`: onto the waker's own CPU
  int64_t stacked_waker_preempted = 0;  // `stacked.waker_preempted`
  int64_t migrations_other = 0;         // `migrations.other`: outside wakeups
  int64_t dropped = 0;                  // events the kernel reported lost

  bool counted() const { return unavailable.empty(); }
};

// A case's `trace` block: nullopt when null (the case was not traced); {"unavailable": why}; or
// the counts, which need `paths` (a key a set predates reads as 0 or absent). Throws
// std::invalid_argument with one line naming the field: "trace.paths is not an object",
// "trace.wakeups is -3, not a count", "trace.classes_by_path.selection.llc is \"x\", not a count".
std::optional<TraceView> parse_trace(const nlohmann::json& block);

}  // namespace wb
