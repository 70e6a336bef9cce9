// A case: one mechanism, in one mode, at one placement, with one set of knob values. Cases come
// from a config (common/config.h) and go to the driver (common/driver.h); the result set records
// them (common/result_set.h). Data flows one way: config -> cases -> results.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/placement.h"

namespace wb {

enum class Mode { kThreads, kProcesses };
std::string_view mode_id(Mode m);  // "threads" | "processes"
std::optional<Mode> parse_mode(std::string_view id);

// The wake flags a mechanism's wakeups carry into select_task_rq_fair (policy-model.md section 4).
enum class WakeFlags { kSync, kNone, kCurrentCpu };
std::string_view wake_flags_id(WakeFlags f);  // "sync" | "none" | "current-cpu"

// Knob values of one case. Defaults are the values a config may omit; a knob at its default is
// left out of the case's name.
struct Params {
  int payload = 1;  // bytes the waker writes and the wakee reads each round trip
  bool operator==(const Params&) const = default;
};

// Applies one config key ("payload", ...) with a JSON value; throws std::invalid_argument naming
// the key for an unknown key or a bad value.
void set_param(Params& p, const std::string& key, const nlohmann::json& value);
nlohmann::json to_json(const Params& p);
// "/payload=64" style suffix of the knobs that differ from their defaults ("" when none).
std::string name_suffix(const Params& p);

struct CaseSpec {
  std::string name;       // Google Benchmark name, no CPU ids: "pipe/processes/llc"
  std::string mechanism;  // "pipe", ...
  Mode mode = Mode::kThreads;
  std::string placement;  // class id, or "kernel", "kernel:<cpu list>", "kernel:<class>"
  bool kernel = false;    // kernel placement: tasks not pinned individually
  std::vector<CpuPair> pairs;  // pinned: [waker, wakee] per concurrent pair; kernel: start CPUs
  std::vector<int> cpuset;     // kernel placement: the CPUs both tasks may run on
  Params params;
  int64_t round_trips = 20000;
  int64_t warmup = 1000;
  int repetitions = 5;
  double timeout_s = 60;    // per repetition, setup included (the watchdog)
  std::string skip_reason;  // non-empty: the case is reported `skipped` with this reason
};

}  // namespace wb
