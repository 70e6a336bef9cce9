#include "common/system/clock.h"

#include <algorithm>
#include <fstream>
#include <vector>

namespace wb {

namespace {

// The clocksource whose counter read_counter() reads on this architecture ("" where none).
constexpr const char* kCounterClocksource =
#if defined(__x86_64__) || defined(__i386__)
    "tsc";
#elif defined(__aarch64__)
    "arch_sys_counter";
#elif defined(__powerpc64__) && defined(__GLIBC__)
    "timebase";
#else
    "";
#endif

constexpr const char* kCounterName =
#if defined(__x86_64__) || defined(__i386__)
    "rdtsc";
#elif defined(__aarch64__)
    "cntvct_el0";
#else
    "mftb";
#endif

// A (counter, CLOCK_MONOTONIC) pair read as close together as the best of a few tries.
std::pair<int64_t, int64_t> calibration_point() {
  int64_t best_gap = INT64_MAX, tick = 0, ns = 0;
  for (int i = 0; i < 16; ++i) {
    const int64_t c0 = read_counter();
    const int64_t m = now_ns();
    const int64_t c1 = read_counter();
    if (c1 - c0 < best_gap) {
      best_gap = c1 - c0;
      tick = c0 + (c1 - c0) / 2;
      ns = m;
    }
  }
  return {tick, ns};
}

}  // namespace

bool detail::choose_counter(std::string* source) {
  std::string current;
  std::ifstream("/sys/devices/system/clocksource/clocksource0/current_clocksource") >> current;
  const bool ok = *kCounterClocksource && current == kCounterClocksource;
  if (source) {
    // Appended piece by piece: GCC 12 warns (-Warray-bounds) on chains of operator+ here.
    std::string& out = *source;
    if (ok) {
      out = kCounterName;
      out += " (clocksource ";
      out += current;
      out += ")";
    } else {
      out = "clock_gettime(CLOCK_MONOTONIC): ";
      if (!*kCounterClocksource) {
        out += "no counter read for this architecture";
      } else {
        out += "clocksource ";
        out += current.empty() ? "unreadable" : current.c_str();
        out += ", not ";
        out += kCounterClocksource;
      }
    }
  }
  return ok;
}

const StampClock& stamp_clock() {
  static const StampClock clock = [] {
    StampClock c;
    detail::choose_counter(&c.source);
    c.counter = counter_stamps();
    if (!c.counter) return c;
    const auto [t0, n0] = calibration_point();
    const timespec pause{0, 5'000'000};
    nanosleep(&pause, nullptr);
    const auto [t1, n1] = calibration_point();
    c.ns_per_tick = t1 > t0 ? static_cast<double>(n1 - n0) / static_cast<double>(t1 - t0) : 1;
    c.tick0 = t1;
    c.ns0 = n1;
    return c;
  }();
  return clock;
}

double StampClock::overhead_ns() const {
  std::vector<int64_t> d(4001);
  for (auto& x : d) {
    const int64_t a = stamp();
    x = stamp() - a;
  }
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return ns(d[d.size() / 2]);
}

}  // namespace wb
