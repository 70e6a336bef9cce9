// --trace-wakeups and --trace-decisions: the tracefs session around a kernel case's repetitions,
// the attribution of each repetition's wakeups, what a case's record says of them, and the side
// file of the decision records (docs/result-set.md#document, `decisions`).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/model/replay.h"
#include "common/measure/driver.h"
#include "common/schema/environment.h"
#include "common/schema/result_set_doc.h"
#include "common/schema/wakeup_trace.h"
#include "common/system/topology.h"
#include "common/system/tracefs.h"
#include "common/util/output_file.h"

namespace wb {

// What the run traces: --trace-wakeups, and with --trace-decisions the lab kernel's decisions too.
enum class Tracing { kNone, kWakeups, kDecisions };

// The session of a run that traces, opened up front so that a run that cannot trace fails before
// it measures anything (one line, exit 2); null for kNone. Decisions that cannot be recorded are
// a warning line: the run traces the wakeups alone (RunInputs::decisions_unavailable).
// `recorder`: --decision-recorder's choice.
std::unique_ptr<WakeupTraceSession> open_trace_session(
    Tracing tracing, RunJournal* journal, RecorderChoice recorder = RecorderChoice::kAuto);

// One set's decision records, written to its side file as each repetition ends (a cell's run holds
// hundreds of thousands: never all in memory), each repetition's after a "# case NAME" and a
// "# run N" line; published beside the set, which names it by its sha256
// (docs/result-set.md#document, `decisions`). Removed, never half-published, when the run fails.
// Each repetition's records are replayed as they come (the set's predictions show each case's
// replay): the side file is for the reader after the run, never read back by it.
class DecisionSide {
 public:
  // Beside `set_path` (its extension replaced), or with it empty a new `<stem>.decisions.txt`.
  // `replayer` makes the replayer of the set's records; what it throws is replays()'s error.
  DecisionSide(const std::string& set_path, const std::string& stem,
               const std::function<RunReplayer()>& replayer);
  void add_run(const std::string& case_name, int64_t run, const std::string& records);
  DecisionsRecord publish();
  // Every case's records replayed; throws std::invalid_argument with why they could not be (the
  // first record the model refused, a line that did not parse).
  CaseReplays replays() const;

 private:
  void add(std::string_view text);
  StreamedFile file_;
  Sha256 sha_;
  int64_t lines_ = 0;
  std::optional<RunReplayer> replayer_;
  std::string replay_error_;
};

// The session a repetition of a kernel case is traced in (null: none), and what attributes it.
struct CaseTracer {
  WakeupTraceSession* session = nullptr;
  const Topology* topo = nullptr;
  bool decisions = false;  // --trace-decisions
};

// One repetition of a kernel case, traced: the session's buffer is sized for it and started right
// before it (false, with `error` set, when that fails: the case runs untraced), then stopped right
// after it and its text attributed at once (the buffers are cleared for the next repetition);
// nullopt, with `error` set, when that fails.
bool start_trace(const CaseTracer& tr, const CaseSpec& spec, std::string& error);
std::optional<WakeupTraceSummary> finish_trace(const CaseTracer& tr, std::string& error);

// How long the run waits after a traced repetition's trace work (`work`: reading, attributing and
// replaying it) before the next repetition starts: as long again, and 50 ms more. The supervisor's
// burst of CPU right before a fresh pair starts moves where the kernel puts the pair
// (docs/cli.md#trace-settle): the next pair starts from CPUs as quiet as an untraced run's.
std::chrono::nanoseconds trace_settle(std::chrono::nanoseconds work);

// A traced kernel case's `trace` (trace_json over every placement class), or {"unavailable": why}
// when a repetition could not be traced (`error`) or none was.
nlohmann::ordered_json case_trace(const std::optional<WakeupTraceSummary>& trace,
                                  const std::string& error);

}  // namespace wb
