#include "common/input.h"

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

}  // namespace wb
