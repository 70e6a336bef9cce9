#include "common/util/text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace wb {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string us_figure(double ns) {
  const double us = ns / 1000.0;
  return fmt(us < 10 ? "%.2f" : us < 100 ? "%.1f" : "%.0f", us);
}

bool parse_int(std::string_view s, int64_t& v) {
  int64_t out = 0;
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || p != s.data() + s.size()) return false;
  v = out;
  return true;
}

std::string finite_number(const std::string& text) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return !text.empty() && ec == std::errc() && p == text.data() + text.size() && std::isfinite(v)
             ? ""
             : "not a finite number";
}

std::string unsigned_integer(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos
             ? ""
             : "not an unsigned integer";
}

std::string_view trim(std::string_view s) {
  auto blank = [](char c) { return c == '\0' || std::isspace(static_cast<unsigned char>(c)); };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string align_left(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string align_right(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string wrap_hanging(const std::string& first, const std::string& text, const std::string& rest,
                         std::size_t width) {
  std::string out, line = first;
  bool fresh = true;  // no word on the first line yet
  std::istringstream words(text);
  for (std::string w; words >> w; fresh = false) {
    if (!fresh && line.size() + 1 + w.size() > width) {
      out += line + "\n";
      line = rest + w;
    } else {
      line += (fresh ? "" : " ") + w;
    }
  }
  return out + line + "\n";
}

std::string wrap(const std::string& text, const std::string& indent, std::size_t width) {
  return wrap_hanging(indent, text, indent + "  ", width);
}

std::string md_escape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '<') {
      out += "&lt;";
    } else if (ch == '>') {
      out += "&gt;";
    } else if (ch == '&') {
      out += "&amp;";
    } else {
      const bool link = ch == ']' && i + 1 < s.size() && s[i + 1] == '(';
      if (link || (ch != '\0' && std::strchr("|\\`", ch))) out += '\\';
      out += ch;
    }
  }
  return out;
}

std::string format_utc(std::time_t t, const char* format) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

}  // namespace wb
