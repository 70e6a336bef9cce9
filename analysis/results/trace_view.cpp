#include "analysis/results/trace_view.h"

#include <cstdint>
#include <stdexcept>

#include "common/util/input.h"  // check_name, check_text

namespace wb {

namespace {

using nlohmann::json;

// A count (an integer >= 0) at `what`, or one line saying what it is instead.
int64_t trace_count(const json& v, const std::string& what) {
  if (v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t{INT64_MAX}
                             : v.is_number_integer() && v.get<int64_t>() >= 0)
    return v.get<int64_t>();
  throw std::invalid_argument(what + " is " + v.dump(-1, ' ', true).substr(0, 40) +
                              ", not a count");
}

// `key` of `obj` (an object, or null: absent) at `what`: its count, 0 when absent.
int64_t trace_count_of(const json& obj, const char* key, const std::string& what) {
  return obj.is_object() && obj.contains(key) ? trace_count(obj[key], what + "." + key) : 0;
}

// `key` of `obj` at `what`: an object, or null when absent.
const json& trace_object(const json& obj, const char* key, const std::string& what) {
  static const json absent;
  if (!obj.contains(key)) return absent;
  if (!obj[key].is_object()) throw std::invalid_argument(what + "." + key + " is not an object");
  return obj[key];
}

// {name: count} at `what`, every name checked.
std::map<std::string, int64_t> trace_counts(const json& obj, const std::string& what) {
  std::map<std::string, int64_t> out;
  for (const auto& [key, v] : obj.items()) {
    check_name(what + " key", key);
    out[key] = trace_count(v, what + "." + key);
  }
  return out;
}

}  // namespace

std::optional<TraceView> parse_trace(const json& t) {
  if (t.is_null()) return std::nullopt;
  if (!t.is_object()) throw std::invalid_argument("trace is not an object or null");
  TraceView v;
  if (t.contains("unavailable")) {
    if (!t["unavailable"].is_string())
      throw std::invalid_argument("trace.unavailable is not a string");
    v.unavailable = t["unavailable"].get<std::string>();
    check_text("trace.unavailable", v.unavailable);
    return v;
  }
  if (!t.contains("paths")) throw std::invalid_argument("trace: missing \"paths\"");
  v.paths = trace_counts(trace_object(t, "paths", "trace"), "trace.paths");
  if (const json& by = trace_object(t, "classes_by_path", "trace"); !by.is_null()) {
    v.classes_by_path.emplace();
    for (const auto& [path, classes] : by.items()) {
      check_name("trace.classes_by_path key", path);
      const std::string at = "trace.classes_by_path." + path;
      if (!classes.is_object()) throw std::invalid_argument(at + " is not an object");
      (*v.classes_by_path)[path] = trace_counts(classes, at);
    }
  }
  v.wakeups = trace_count_of(t, "wakeups", "trace");
  v.moved = trace_count_of(t, "moved", "trace");
  v.dropped = trace_count_of(t, "dropped", "trace");
  const json& stacked = trace_object(t, "stacked", "trace");
  v.foreign_wakeups =
      trace_count_of(trace_object(t, "foreign", "trace"), "wakeups", "trace.foreign");
  v.stacked_wakes = trace_count_of(stacked, "wakes", "trace.stacked");
  v.stacked_waker_preempted = trace_count_of(stacked, "waker_preempted", "trace.stacked");
  v.migrations_other =
      trace_count_of(trace_object(t, "migrations", "trace"), "other", "trace.migrations");
  return v;
}

}  // namespace wb
