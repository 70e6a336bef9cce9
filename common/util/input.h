// Reading what a user hands wakebench: configs, scenarios, result sets, topology XML files. Every
// parser of such a file reads it and reports a JSON syntax error here, so a missing file, a
// directory, a truncated document or a number out of range reads the same whatever the command:
// one line naming the file.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace wb {

// The whole file. Throws std::runtime_error "<what> <path>: cannot open: No such file or
// directory" (or "is a directory", "read error: ...").
std::string read_input_file(const std::string& what, const std::string& path);

// One line for a document nlohmann::json::parse refused (a parse_error, or an out_of_range such
// as the number 1e999), without nlohmann's "[json.exception...]" prefix:
// "invalid JSON at byte 17 (end of file: truncated?): syntax error while parsing object key ...".
std::string describe_json_error(const nlohmann::json::exception& e, size_t text_size);

// `s` as a JSON string literal, invalid UTF-8 replaced: safe to print in a message.
std::string json_text(const std::string& s);

// Names a result set or config holds (case names, mechanisms, placements, knob values, classes,
// policies, events, host names) are made of [A-Za-z0-9._:,=/+-] and at most 200 characters: no
// quote, space, backquote or control character, so none can reach gnuplot, a shell or a path as
// code; and no part between slashes is empty, "." or "..", so none climbs out of a folder (files
// are still never named by these: analysis/report.cpp's plot_stem).
bool is_safe_name(std::string_view s);
// Throws std::invalid_argument "<what> \"...\" has a character outside [A-Za-z0-9._:,=/+-]" (or
// the other fault, the value JSON-escaped) unless is_safe_name(s).
void check_name(const std::string& what, const std::string& s);
// Free text (a reason, a verdict): no control character. Throws std::invalid_argument like
// check_name.
void check_text(const std::string& what, const std::string& s);

}  // namespace wb
