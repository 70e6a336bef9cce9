// The one clock of wakebench: CLOCK_MONOTONIC, read through the vDSO on x86_64, arm64 and ppc64le.
// It is the same clock on every CPU, so a timestamp taken by the waker on one CPU and one taken by
// the wakee on another can be subtracted (docs/result-set.md#cases: wakeup_ns).
#pragma once

#include <cstdint>
#include <ctime>

namespace wb {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace wb
