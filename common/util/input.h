// Reading what a user hands wakebench: configs, scenarios, result sets, noise files, topology XML
// files. Every parser of such a file reads it here and reports a JSON syntax error here, so a
// missing file, a directory, a device, a truncated document, a number out of range or a document
// nested too deep reads the same whatever the command: one line naming the file.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

// The most bytes an input may hold unless WAKEBENCH_MAX_INPUT_MIB (a whole number of MiB) says
// otherwise: 256 MiB, several times the largest set this suite writes (a traced lab run: tens of
// MB).
inline constexpr std::size_t kDefaultMaxInputMiB = 256;
inline constexpr const char* kMaxInputEnv = "WAKEBENCH_MAX_INPUT_MIB";
// The deepest nesting of a JSON document (arrays and objects) or an XML document (elements) a
// command reads; wakebench's own files nest at most 10 deep. Deeper documents are refused before
// any recursive code (hwloc, a JSON walk) sees them.
inline constexpr int kMaxInputDepth = 128;

// The whole file, or stdin when `path` is "-" (read once, the same text every time). Only a regular
// file is opened (O_NONBLOCK, so a FIFO cannot block), checked with fstat before a byte is read;
// stdin is read whatever it is. Both are read up to the size limit. Throws std::runtime_error
// "<what> <path>: cannot open: No such file or directory" (or "is a FIFO, not a regular file", "is
// 300000000 bytes, larger than the input limit of 256 MiB (WAKEBENCH_MAX_INPUT_MIB raises it)",
// "read error: ...").
std::string read_input_file(const std::string& what, const std::string& path);

// The document in `text`, its nesting checked first. Throws std::invalid_argument with one line,
// without nlohmann's "[json.exception...]" prefix: "invalid JSON at byte 17 (end of file:
// truncated?): syntax error while parsing object key ...", "invalid JSON at byte 128: nested
// deeper than 128 levels", "invalid JSON: number overflow parsing '1e999'".
nlohmann::json parse_input_json(const std::string& text);

// Throws std::invalid_argument "XML nested deeper than 128 levels at byte N" when the elements of
// `xml` nest deeper than kMaxInputDepth (comments, declarations and quoted values skipped).
void check_xml_depth(std::string_view xml);

// `s` as a JSON string literal, invalid UTF-8 replaced, control characters (C0, DEL, C1) escaped:
// safe to print in a message.
std::string json_text(const std::string& s);

// Names a result set or config holds (case names, mechanisms, placements, knob values, classes,
// policies, events, host names) are made of [A-Za-z0-9._:,=/+-] and at most 200 characters: no
// quote, space, backquote or control character, so none can reach gnuplot, a shell or a path as
// code; and no part between slashes is empty, "." or "..", so none climbs out of a folder (files
// are still never named by these: analysis/report/report.cpp's plot_stem).
bool is_safe_name(std::string_view s);
// Throws std::invalid_argument "<what> \"...\" has a character outside [A-Za-z0-9._:,=/+-]" (or
// the other fault, the value JSON-escaped) unless is_safe_name(s).
void check_name(const std::string& what, const std::string& s);
// Where `s` first holds a control character (C0, DEL or C1, which terminals take as escape
// sequences; a C1 is two bytes there), else npos.
std::size_t control_at(std::string_view s);
// Free text (a reason, a verdict, a CPU model): no control character. Throws
// std::invalid_argument like check_name.
void check_text(const std::string& what, const std::string& s);
// A line of a text input (a trace, a side file) for an error: its first 100 bytes as json_text,
// "..." inside the quotes when cut.
std::string quoted_line(std::string_view line);
// check_text on every string and every key in `doc`, each named by its place ("environment.cpu.
// model", "cases[2].reason"), except the places listed in `except`.
void check_texts(const nlohmann::json& doc, const std::vector<std::string>& except = {});

}  // namespace wb
