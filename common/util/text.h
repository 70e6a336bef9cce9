// Text helpers shared by every part of wakebench (pure: no I/O).
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

// One number through a printf format: fmt("%.2f", 1.5) == "1.50".
std::string fmt(const char* format, double v);
// A time in ns as microseconds with three significant figures where it can: 6.22, 33.4, 148.
std::string us_figure(double ns);
// The whole of `s` as a decimal integer into `v`; false (v untouched) when `s` is empty or holds
// anything else.
bool parse_int(std::string_view s, int64_t& v);
// Checks of a number given on a command line (CLI11 validators): "" when the text is acceptable,
// else why not. CLI11's own ranges let NaN through (no comparison with it is false) and read "-1"
// as a huge unsigned number.
std::string finite_number(const std::string& text);
std::string unsigned_integer(const std::string& text);
// `s` without leading and trailing whitespace or NULs (some kernel files end in one).
std::string_view trim(std::string_view s);
// The width of everything wakebench prints for people (a mail's table has its own, 72).
inline constexpr std::size_t kTextWidth = 100;
// `text` as lines of at most `width` columns broken at spaces, the first after `first`, the
// others after `rest`; a word longer than a line stays whole; a final newline.
std::string wrap_hanging(const std::string& first, const std::string& text, const std::string& rest,
                         std::size_t width = kTextWidth);
// wrap_hanging with `indent` first and two more spaces on the continuation lines.
std::string wrap(const std::string& text, const std::string& indent,
                 std::size_t width = kTextWidth);
// `text` in a column of `width`: spaces after it (align_left) or before it (align_right); a
// longer text as it is.
std::string align_left(const std::string& text, std::size_t width);
std::string align_right(const std::string& text, std::size_t width);
// "a, b, c" for join({"a", "b", "c"}, ", ").
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// Text from a result set or a user as markdown, also inside a table cell: '<', '>' and '&' as HTML
// entities (no element, such as a <script>, reaches a renderer), and '|', '\\', '`' and the ']'
// of "](" backslash-escaped (no cell break, code span or inline link).
std::string md_escape(std::string_view s);
// `t` in UTC through strftime's `format` ("%Y-%m-%dT%H:%M:%SZ").
std::string format_utc(std::time_t t, const char* format);

}  // namespace wb
