#include <cctype>
#include <cmath>
#include <sstream>

#include "analysis/report/report_parts.h"
#include "common/util/text.h"

namespace wb::report_parts {
namespace {

// A character of a name from a result set, in a gnuplot script or data file: control characters
// (a newline would start a command line, "!..." a shell) become '?'.
char gp_char(char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f ? '?' : ch; }

}  // namespace

// A gnuplot string literal in a script: single-quoted, where gnuplot substitutes nothing (no
// backquoted command, no escape; a double-quoted string runs `...`); a quote is doubled.
std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("''") : std::string(1, gp_char(ch));
  return out + "'";
}

// A string column of a data file: double-quoted (gnuplot reads nothing else as one column), with
// no double quote inside. gnuplot never evaluates data.
std::string dat_quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? '\'' : gp_char(ch);
  return out + "\"";
}

// Script preamble and trailer: PNG through pngcairo when this gnuplot has it (antialiased), else
// libgd's png; then the same plot as SVG. Every script is self-contained and runs from its folder.
std::string gp_begin(const std::string& stem, int width, int height) {
  std::ostringstream s;
  s << "# Rendered by wakebench report; run from this folder: gnuplot " << stem << ".gp\n"
    << "# Writes " << stem << ".png and " << stem << ".svg from " << stem << ".dat.\n"
    << "if (strstrt(GPVAL_TERMINALS, \" pngcairo \") > 0) {\n"
    << "  set terminal pngcairo size " << width << "," << height << " noenhanced font \"sans,10\"\n"
    << "} else {\n"
    << "  set terminal png size " << width << "," << height << " noenhanced\n"
    << "}\n"
    << "set output " << gp_quote(stem + ".png") << "\n"
    << "set datafile missing 'NaN'\n";
  return s.str();
}

std::string gp_end(const std::string& stem, int width, int height) {
  std::ostringstream s;
  s << "set terminal svg size " << width << "," << height << " noenhanced font \"sans,10\"\n"
    << "set output " << gp_quote(stem + ".svg") << "\n"
    << "replot\n"
    << "unset output\n";
  return s.str();
}

// Tics on a logarithmic axis from `lo` to `hi`: at 1, 2 and 5 times each power of ten when the
// data spans up to two of them (gnuplot would label only one or two), else at the powers of ten.
std::string log_tics(const char* axis, double lo, double hi) {
  std::ostringstream s;
  s << "set " << axis << "tics (";
  bool first = true;
  const std::vector<double> steps =
      hi / std::max(lo, 1.0) <= 300 ? std::vector<double>{1, 2, 5} : std::vector<double>{1};
  for (double decade = std::pow(10.0, std::floor(std::log10(std::max(lo, 1.0)))); decade <= hi * 10;
       decade *= 10)
    for (double m : steps)
      if (decade * m >= lo / 2 && decade * m <= hi * 2) {
        s << (first ? "" : ", ") << "'" << fmt("%.0f", decade * m) << "' "
          << fmt("%.0f", decade * m);
        first = false;
      }
  s << ")\n";
  return s.str();
}

std::string Stems::take(const std::string& prefix, const std::string& name) {
  std::string base = prefix + "-" + name;
  for (char& ch : base)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-') ch = ch == '/' ? '-' : '_';
  std::string stem = base;
  for (int n = 2; !taken_.insert(stem).second; ++n) stem = base + "-" + std::to_string(n);
  return stem;
}

Part not_drawn(std::string reason) { return Part{{}, {std::move(reason)}, ""}; }

}  // namespace wb::report_parts
