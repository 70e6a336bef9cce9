#include "common/case.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace wb {

std::string_view mode_id(Mode m) { return m == Mode::kThreads ? "threads" : "processes"; }

std::optional<Mode> parse_mode(std::string_view id) {
  if (id == "threads") return Mode::kThreads;
  if (id == "processes") return Mode::kProcesses;
  return std::nullopt;
}

std::string_view wake_flags_id(WakeFlags f) {
  switch (f) {
    case WakeFlags::kSync: return "sync";
    case WakeFlags::kNone: return "none";
    case WakeFlags::kCurrentCpu: return "current-cpu";
  }
  return "none";
}

namespace {
int int_in_range(const std::string& key, const nlohmann::json& v, int64_t lo, int64_t hi) {
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    throw std::invalid_argument("params." + key + ": expected an integer in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                                v.dump());
  return static_cast<int>(v.get<int64_t>());
}
}  // namespace

void set_param(Params& p, const std::string& key, const nlohmann::json& value) {
  if (key == "payload") {
    p.payload = int_in_range(key, value, 1, 1 << 20);
  } else {
    throw std::invalid_argument("params: unknown knob \"" + key + "\"");
  }
}

nlohmann::json to_json(const Params& p) { return {{"payload", p.payload}}; }

std::string name_suffix(const Params& p) {
  const Params d;
  std::string s;
  if (p.payload != d.payload) s += "/payload=" + std::to_string(p.payload);
  return s;
}

}  // namespace wb
