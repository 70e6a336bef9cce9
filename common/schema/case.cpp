#include "common/schema/case.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "common/util/cpulist.h"
#include "common/util/ids.h"

namespace wb {

namespace {

constexpr Ids<Mode> kModeIds[] = {{Mode::kThreads, "threads"}, {Mode::kProcesses, "processes"}};
constexpr Ids<WakeFlags> kWakeFlagsIds[] = {{WakeFlags::kSync, "sync"},
                                            {WakeFlags::kNone, "none"},
                                            {WakeFlags::kCurrentCpu, "current-cpu"}};
constexpr Ids<CaseStatus> kStatusIds[] = {
    {CaseStatus::kOk, "ok"}, {CaseStatus::kSkipped, "skipped"}, {CaseStatus::kFailed, "failed"}};

}  // namespace

std::string_view mode_id(Mode m) { return id_in(kModeIds, m); }
std::optional<Mode> parse_mode(std::string_view id) { return value_in(kModeIds, id); }

std::string_view wake_flags_id(WakeFlags f) { return id_in(kWakeFlagsIds, f); }
std::optional<WakeFlags> parse_wake_flags(std::string_view id) {
  return value_in(kWakeFlagsIds, id);
}

std::string_view status_id(CaseStatus s) { return id_in(kStatusIds, s); }
std::optional<CaseStatus> parse_status(std::string_view id) { return value_in(kStatusIds, id); }

SchedPolicy parse_sched_policy(std::string_view text) {
  if (text == "other") return {SchedPolicy::kOther, 0};
  if (text == "batch") return {SchedPolicy::kBatch, 0};
  if (text == "idle") return {SchedPolicy::kIdle, 0};
  if (text.substr(0, 5) == "fifo:") {
    const std::string prio(text.substr(5));
    size_t used = 0;
    int p = 0;
    try {
      p = std::stoi(prio, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == prio.size() && !prio.empty() && p >= 1 && p <= 99) return {SchedPolicy::kFifo, p};
  }
  throw std::invalid_argument("unknown scheduling policy \"" + std::string(text) +
                              "\" (known: other, batch, idle, fifo:<1..99>)");
}

std::string sched_policy_id(const SchedPolicy& p) {
  switch (p.kind) {
    case SchedPolicy::kOther:
      return "other";
    case SchedPolicy::kBatch:
      return "batch";
    case SchedPolicy::kIdle:
      return "idle";
    case SchedPolicy::kFifo:
      return "fifo:" + std::to_string(p.priority);
  }
  return "other";
}

namespace {

int64_t int_in_range(const std::string& key, const nlohmann::json& v, int64_t lo, int64_t hi) {
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    throw std::invalid_argument("params." + key + ": expected an integer in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                                v.dump());
  return v.get<int64_t>();
}

constexpr const char* kSides[2] = {"waker", "wakee"};

// A per-side knob: one value for both sides, or {"waker": v, "wakee": v} (a side left out keeps
// its default).
template <typename T, typename Parse>
void set_per_side(std::array<std::optional<T>, 2>& out, const std::string& key,
                  const nlohmann::json& value, Parse parse) {
  std::array<std::optional<T>, 2> result;
  if (value.is_object()) {
    for (const auto& [side, v] : value.items()) {
      if (side != kSides[0] && side != kSides[1])
        throw std::invalid_argument("params." + key + ": unknown side \"" + side +
                                    "\" (known: waker, wakee)");
      result[side == kSides[0] ? 0 : 1] = parse(key + "." + side, v);
    }
  } else {
    result[0] = result[1] = parse(key, value);
  }
  out = result;
}

SchedPolicy sched_from_json(const std::string& key, const nlohmann::json& v) {
  if (!v.is_string())
    throw std::invalid_argument("params." + key + ": expected a policy string, got " + v.dump());
  try {
    return parse_sched_policy(v.get<std::string>());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("params." + key + ": " + e.what());
  }
}

int nice_from_json(const std::string& key, const nlohmann::json& v) {
  return static_cast<int>(int_in_range(key, v, -20, 19));
}

// "a,b" (as `predict --start` takes it) or the recorded [a, b].
std::pair<int, int> start_from_json(const nlohmann::json& v) {
  std::vector<int> cpus;
  if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer())
    cpus = {v[0].get<int>(), v[1].get<int>()};
  if (v.is_string()) {
    const std::string text = v.get<std::string>();
    const auto comma = text.find(',');
    for (const std::string& part : {text.substr(0, comma), text.substr(comma + 1)})
      if (comma != std::string::npos && !part.empty() && part.size() < 5 &&
          part.find_first_not_of("0123456789") == std::string::npos)
        cpus.push_back(std::stoi(part));
  }
  if (cpus.size() != 2 || cpus[0] < 0 || cpus[1] < 0)
    throw std::invalid_argument(
        "params.start: expected \"a,b\" (the first waker's CPU, the wakee's start CPU), got " +
        v.dump());
  return {cpus[0], cpus[1]};
}

void check_background(const std::string& value) {
  static constexpr const char* kKeywords[] = {"none", "waker-sibling", "llc-others", "all-others",
                                              "prev-cpu"};
  for (const char* k : kKeywords)
    if (value == k) return;
  try {
    if (!parse_cpu_list(value).empty()) return;
  } catch (const std::invalid_argument&) {
  }
  throw std::invalid_argument(
      "params.background: expected none, waker-sibling, llc-others, all-others, prev-cpu or a CPU "
      "list such as \"2,5-7\", got \"" +
      value + "\"");
}

// "fifo:10" when both sides agree, else "waker:fifo:10,wakee:inherit".
template <typename T, typename Fmt>
std::string per_side_text(const std::array<std::optional<T>, 2>& v, const char* unset, Fmt fmt) {
  auto one = [&](int i) { return v[i] ? fmt(*v[i]) : std::string(unset); };
  if (v[0] == v[1]) return one(0);
  return std::string("waker:") + one(0) + ",wakee:" + one(1);
}

}  // namespace

void set_param(Params& p, const std::string& key, const nlohmann::json& value) {
  if (key == "payload") {
    p.payload = static_cast<int>(int_in_range(key, value, 1, 1 << 20));
  } else if (key == "work_ns") {
    p.work_ns = int_in_range(key, value, 0, 100'000'000);
  } else if (key == "work_lines") {
    p.work_lines = static_cast<int>(int_in_range(key, value, 0, 65536));
  } else if (key == "background") {
    if (!value.is_string())
      throw std::invalid_argument("params.background: expected a string, got " + value.dump());
    check_background(value.get<std::string>());
    p.background = value.get<std::string>();
  } else if (key == "sched") {
    set_per_side(p.sched, key, value, sched_from_json);
  } else if (key == "nice") {
    set_per_side(p.nice, key, value, nice_from_json);
  } else if (key == "pairs") {
    p.pairs = static_cast<int>(int_in_range(key, value, 1, 256));
  } else if (key == "start") {
    p.start = start_from_json(value);
  } else if (key == "duty") {
    p.duty = static_cast<int>(int_in_range(key, value, 1, 99));
  } else if (key == "period_ms") {
    p.period_ms = static_cast<int>(int_in_range(key, value, 1, 1000));
  } else if (key == "w") {
    p.w = static_cast<int>(int_in_range(key, value, 1, 64));
  } else if (key == "s") {
    p.s = static_cast<int>(int_in_range(key, value, 1, 64));
  } else {
    throw std::invalid_argument("params: unknown knob \"" + key +
                                "\" (known: payload, work_ns, work_lines, background, duty, "
                                "period_ms, sched, nice, pairs, w, s, start)");
  }
}

nlohmann::json to_json(const Params& p) {
  nlohmann::json sched, nice;
  for (int i = 0; i < 2; ++i) {
    sched[kSides[i]] = p.sched[i] ? sched_policy_id(*p.sched[i]) : "inherit";
    nice[kSides[i]] = p.nice[i] ? nlohmann::json(*p.nice[i]) : nlohmann::json(nullptr);
  }
  nlohmann::json j = {{"payload", p.payload},
                      {"work_ns", p.work_ns},
                      {"work_lines", p.work_lines},
                      {"background", p.background},
                      {"pairs", p.pairs},
                      {"sched", sched},
                      {"nice", nice}};
  if (p.w || p.s) {
    j["w"] = p.w.value_or(1);
    j["s"] = p.s.value_or(1);
  }
  if (p.duty) j["duty"] = *p.duty;
  if (p.period_ms) j["period_ms"] = *p.period_ms;
  if (p.start) j["start"] = {p.start->first, p.start->second};
  return j;
}

void check_duty(const Params& p) {
  if ((p.duty || p.period_ms) && p.background == "none")
    throw std::invalid_argument(std::string("params.") + (p.duty ? "duty" : "period_ms") +
                                ": a duty cycle is the background's: give params.background");
}

int64_t duty_period_ns(const Params& p) { return int64_t{p.period_ms.value_or(10)} * 1'000'000; }

int64_t duty_busy_ns(const Params& p) { return duty_period_ns(p) * p.duty.value_or(100) / 100; }

std::string name_suffix(const Params& p) {
  const Params d;
  std::string s;
  if (p.w || p.s)
    s += "/w" + std::to_string(p.w.value_or(1)) + "s" + std::to_string(p.s.value_or(1));
  if (p.payload != d.payload) s += "/payload=" + std::to_string(p.payload);
  if (p.work_ns != d.work_ns) s += "/work=" + std::to_string(p.work_ns) + "ns";
  if (p.work_lines != d.work_lines) s += "/lines=" + std::to_string(p.work_lines);
  if (p.background != d.background) s += "/bg=" + p.background;
  if (p.duty) s += "/duty=" + std::to_string(*p.duty);
  if (p.period_ms) s += "/period=" + std::to_string(*p.period_ms) + "ms";
  if (p.sched != d.sched) s += "/sched=" + per_side_text(p.sched, "inherit", sched_policy_id);
  if (p.nice != d.nice)
    s += "/nice=" + per_side_text(p.nice, "inherit", [](int n) { return std::to_string(n); });
  if (p.pairs != d.pairs) s += "/pairs=" + std::to_string(p.pairs);
  if (p.start)
    s += "/start=" + std::to_string(p.start->first) + "," + std::to_string(p.start->second);
  return s;
}

bool same_workload(Params a, Params b) {
  a.start = b.start = std::nullopt;
  return a == b;
}

std::vector<CpuPair> concurrent_pairs(const CaseSpec& spec) {
  if (spec.cpu_pairs.empty()) return {};
  const size_t n = std::max(static_cast<size_t>(spec.params.pairs), spec.cpu_pairs.size());
  std::vector<CpuPair> out;
  for (size_t i = 0; i < n; ++i) out.push_back(spec.cpu_pairs[i % spec.cpu_pairs.size()]);
  return out;
}

}  // namespace wb
