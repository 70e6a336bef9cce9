// Reading what a user hands wakebench: configs, scenarios, result sets, topology XML files. Every
// parser of such a file reads it and reports a JSON syntax error here, so a missing file, a
// directory, a truncated document or a number out of range reads the same whatever the command:
// one line naming the file.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace wb {

// The whole file. Throws std::runtime_error "<what> <path>: cannot open: No such file or
// directory" (or "is a directory", "read error: ...").
std::string read_input_file(const std::string& what, const std::string& path);

// One line for a document nlohmann::json::parse refused (a parse_error, or an out_of_range such
// as the number 1e999), without nlohmann's "[json.exception...]" prefix:
// "invalid JSON at byte 17 (end of file: truncated?): syntax error while parsing object key ...".
std::string describe_json_error(const nlohmann::json::exception& e, size_t text_size);

}  // namespace wb
