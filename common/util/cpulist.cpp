// CPU lists in the kernel's format. The grammar is the one bitmap_parselist() accepts without its
// stride extension ("0-7:2"): comma-separated items, each a decimal id or an inclusive range a-b.
// The printed form matches the kernel's "%*pbl" (bitmap_print_to_pagebuf): runs of two or more
// consecutive ids collapse into "a-b".
#include "common/util/cpulist.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

namespace wb {
namespace {

// Ids are below kMaxCpus, and ranges are merged before they are expanded, so the result has at most
// kMaxCpus ids and the work is bounded by the list's length, whatever it repeats
// ("0-8191,0-8191,..." is one range after merging).
static_assert(kMaxCpus > 0 && kMaxCpus <= (1 << 20));

[[noreturn]] void fail(std::string_view text, const std::string& what, size_t pos) {
  throw std::invalid_argument("invalid CPU list \"" + std::string(text) + "\": " + what +
                              " at position " + std::to_string(pos));
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Parses a decimal id at text[pos]; advances pos past it. An id of kMaxCpus or more is an error
// naming the id as written (never accumulated past the limit, so it cannot overflow).
int parse_id(std::string_view text, size_t& pos) {
  const size_t start = pos;
  long value = 0;
  bool too_large = false;
  while (pos < text.size() && is_digit(text[pos])) {
    if (!too_large) {
      value = value * 10 + (text[pos] - '0');
      too_large = value >= kMaxCpus;
    }
    ++pos;
  }
  if (pos == start) fail(text, "bad number", start);
  if (too_large)
    fail(text,
         "CPU id " + std::string(text.substr(start, pos - start)) + " above the maximum " +
             std::to_string(kMaxCpus - 1) + " (the kernel's NR_CPUS limit is " +
             std::to_string(kMaxCpus) + ")",
         start);
  return static_cast<int>(value);
}

}  // namespace

std::vector<int> parse_cpu_list(std::string_view text) {
  // sysfs files end with a newline; an empty list (e.g. /sys/devices/system/cpu/isolated) is "".
  size_t begin = 0, end = text.size();
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  std::vector<int> cpus;
  if (begin == end) return cpus;

  std::vector<std::pair<int, int>> ranges;  // inclusive [first, last], as written
  size_t pos = begin;
  while (true) {
    if (pos == end || text[pos] == ',') fail(text, "empty item", pos);
    const size_t item = pos;
    const int first = parse_id(text, pos);
    int last = first;
    if (pos < end && text[pos] == '-') {
      ++pos;
      last = parse_id(text, pos);
      if (last < first) fail(text, "range end below its start", item);
    }
    if (pos < end && text[pos] == ':') fail(text, "stride form (a-b:n) is not supported", pos);
    ranges.emplace_back(first, last);
    if (pos == end) break;
    if (text[pos] != ',') fail(text, std::string("unexpected '") + text[pos] + "'", pos);
    ++pos;
  }
  std::sort(ranges.begin(), ranges.end());
  int next = 0;  // the lowest id not yet in cpus
  for (auto [first, last] : ranges) {
    for (int c = std::max(first, next); c <= last; ++c) cpus.push_back(c);
    next = std::max(next, last + 1);
  }
  // Each id was pushed once, in increasing order: ranges are sorted by their start and `next`
  // skips what an earlier range already covered.
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
