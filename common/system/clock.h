// The clocks of wakebench.
//  - now_ns(): CLOCK_MONOTONIC, read through the vDSO; what the supervisor's deadlines use.
//  - stamp(): what the timed loops read, in ticks of the clock that backs CLOCK_MONOTONIC when the
//    kernel trusts it (clocksource "tsc" on x86_64: rdtsc; "arch_sys_counter" on arm64:
//    cntvct_el0; "timebase" on ppc64: mftb), else CLOCK_MONOTONIC itself (ticks = ns). The kernel
//    only runs CLOCK_MONOTONIC on a counter that is synchronized across CPUs, so a stamp taken by
//    the waker on one CPU and one taken by the wakee on another can be subtracted
//    (docs/result-set.md#cases: wakeup_ns).
//    Reading the counter takes about 10 ns where clock_gettime takes 23 (x86 KVM guest, EPYC).
//    stamp_clock() converts ticks to ns: calibrated once per process against CLOCK_MONOTONIC, so
//    it must be called (the driver does) before a timed loop stamps anything.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#elif defined(__powerpc64__) && defined(__GLIBC__)
#include <sys/platform/ppc.h>
#endif

namespace wb {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// The architecture's free-running counter (0 where there is none: then stamp() never reads it).
inline int64_t read_counter() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return static_cast<int64_t>(__rdtsc());
#elif defined(__aarch64__)
  uint64_t v;
  asm volatile("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");  // isb: not read ahead of time
  return static_cast<int64_t>(v);
#elif defined(__powerpc64__) && defined(__GLIBC__)
  return static_cast<int64_t>(__ppc_get_timebase());
#else
  return 0;
#endif
}

// How stamps turn into CLOCK_MONOTONIC nanoseconds.
struct StampClock {
  bool counter = false;  // stamps read read_counter(); false: now_ns()
  // "rdtsc (clocksource tsc)", or "clock_gettime(CLOCK_MONOTONIC): clocksource kvm-clock is not
  // the counter" etc.
  std::string source;
  double ns_per_tick = 1;
  int64_t tick0 = 0, ns0 = 0;  // one calibration point: ns = ns0 + (t - tick0) * ns_per_tick
  double ns(int64_t ticks_elapsed) const {
    return static_cast<double>(ticks_elapsed) * ns_per_tick;
  }
  int64_t to_ns(int64_t t) const { return ns0 + static_cast<int64_t>(ns(t - tick0)); }
  // The cost of the timer in one round trip sample: the median difference of two back-to-back
  // stamps, in ns (what a hand-off that took no time would measure).
  double overhead_ns() const;
};

namespace detail {
bool choose_counter(std::string* source);  // clock.cpp: reads the current clocksource once
}

// Whether stamps come from the counter: decided once per process, before any stamp is taken.
inline bool counter_stamps() noexcept {
  static const bool use = detail::choose_counter(nullptr);
  return use;
}

inline int64_t stamp() noexcept { return counter_stamps() ? read_counter() : now_ns(); }

// Calibrated on first use (about 5 ms); call it before forking the tasks that stamp.
const StampClock& stamp_clock();

// Stamps inside the timed path of one round trip (common/measure/ping_pong.cpp): the waker's one (a
// round trip starts where the previous one ended) and the wakee's wake stamp.
inline constexpr int kStampsPerRoundTrip = 2;

}  // namespace wb
