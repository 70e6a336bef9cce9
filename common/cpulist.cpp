// CPU lists in the kernel's format. The grammar is the one bitmap_parselist() accepts without its
// stride extension ("0-7:2"): comma-separated items, each a decimal id or an inclusive range a-b.
// The printed form matches the kernel's "%*pbl" (bitmap_print_to_pagebuf): runs of two or more
// consecutive ids collapse into "a-b".
#include "common/cpulist.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace wb {
namespace {

// Far above any kernel's NR_CPUS (8192 on the largest distro configs); it only guards against
// a typo such as "0-1000000000" expanding into a huge vector.
constexpr long kMaxCpuId = 1 << 20;

[[noreturn]] void fail(std::string_view text, const std::string& what, size_t pos) {
  throw std::invalid_argument("invalid CPU list \"" + std::string(text) + "\": " + what +
                              " at position " + std::to_string(pos));
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Parses a decimal id at text[pos]; advances pos past it.
long parse_id(std::string_view text, size_t& pos) {
  const size_t start = pos;
  long value = 0;
  while (pos < text.size() && is_digit(text[pos])) {
    value = value * 10 + (text[pos] - '0');
    if (value > kMaxCpuId)
      fail(text, "CPU id too large (max " + std::to_string(kMaxCpuId) + ")", start);
    ++pos;
  }
  if (pos == start) fail(text, "bad number", start);
  return value;
}

}  // namespace

std::vector<int> parse_cpu_list(std::string_view text) {
  // sysfs files end with a newline; an empty list (e.g. /sys/devices/system/cpu/isolated) is "".
  size_t begin = 0, end = text.size();
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  std::vector<int> cpus;
  if (begin == end) return cpus;

  size_t pos = begin;
  while (true) {
    if (pos == end || text[pos] == ',') fail(text, "empty item", pos);
    const size_t item = pos;
    const long first = parse_id(text, pos);
    long last = first;
    if (pos < end && text[pos] == '-') {
      ++pos;
      last = parse_id(text, pos);
      if (last < first) fail(text, "range end below its start", item);
    }
    if (pos < end && text[pos] == ':') fail(text, "stride form (a-b:n) is not supported", pos);
    for (long c = first; c <= last; ++c) cpus.push_back(static_cast<int>(c));
    if (pos == end) break;
    if (text[pos] != ',') fail(text, std::string("unexpected '") + text[pos] + "'", pos);
    ++pos;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpu_list(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace wb
