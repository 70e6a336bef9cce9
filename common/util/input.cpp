#include "common/util/input.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace wb {

std::string read_input_file(const std::string& what, const std::string& path) {
  const std::string where = what + " " + path;
  std::error_code ec;
  // An ifstream opens a directory and reads nothing: say what it is instead of "empty".
  if (std::filesystem::is_directory(path, ec)) throw std::runtime_error(where + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(where + ": cannot open: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error(where + ": read error: " + std::strerror(errno));
  return text.str();
}

std::string describe_json_error(const nlohmann::json::exception& e, size_t text_size) {
  std::string detail = e.what();
  if (const auto pos = detail.find("] "); pos != std::string::npos) detail.erase(0, pos + 2);
  if (const auto* p = dynamic_cast<const nlohmann::json::parse_error*>(&e)) {
    const bool truncated = p->byte >= text_size;
    return "invalid JSON at byte " + std::to_string(p->byte) +
           (truncated ? " (end of file: truncated?)" : "") + ": " + detail;
  }
  return "invalid JSON: " + detail;
}

std::string json_text(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// Why `s` cannot be a name, or nullptr when it can.
const char* name_fault(std::string_view s) {
  if (s.empty() || s.size() > 200) return "is empty or longer than 200 characters";
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) &&
        (ch == '\0' || !std::strchr("._:,=/+-", ch)))
      return "has a character outside [A-Za-z0-9._:,=/+-]";
  // Split at '/', no part may be empty, "." or "..": a name joined to a folder stays in it.
  for (std::size_t from = 0, to; from <= s.size(); from = to + 1) {
    to = std::min(s.find('/', from), s.size());
    const std::string_view part = s.substr(from, to - from);
    if (part.empty() || part == "." || part == "..")
      return "has an empty, \".\" or \"..\" part between slashes";
  }
  return nullptr;
}

}  // namespace

bool is_safe_name(std::string_view s) { return name_fault(s) == nullptr; }

void check_name(const std::string& what, const std::string& s) {
  if (const char* fault = name_fault(s))
    throw std::invalid_argument(what + " " + json_text(s) + " " + fault);
}

void check_text(const std::string& what, const std::string& s) {
  for (char ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
      throw std::invalid_argument(what + " " + json_text(s) + " has a control character");
}

}  // namespace wb
