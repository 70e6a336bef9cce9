// Holding CPUs out of deep idle states for a run through the CPU latency PM QoS interface
// (/dev/cpu_dma_latency, Documentation/power/pm_qos_interface.rst): while a process keeps the
// device open with a value written, cpuidle governors only pick states whose exit latency is at
// most that value on every CPU. Closing the file drops the request.
#pragma once

#include <optional>
#include <string>

#include "common/util/sys.h"

namespace wb {

class IdleLatencyGuard {
 public:
  // Opens /dev/cpu_dma_latency and writes `us` (a binary s32, as cpu_latency_qos_write() takes
  // it). Throws std::invalid_argument for us < 0 and std::runtime_error with the reason when the
  // device cannot be opened or written (e.g. not root).
  explicit IdleLatencyGuard(int us);
  ~IdleLatencyGuard() = default;  // closing the fd removes the request
  IdleLatencyGuard(IdleLatencyGuard&&) noexcept = default;
  IdleLatencyGuard& operator=(IdleLatencyGuard&&) noexcept = default;
  IdleLatencyGuard(const IdleLatencyGuard&) = delete;
  IdleLatencyGuard& operator=(const IdleLatencyGuard&) = delete;

  int requested_us() const { return us_; }

 private:
  Fd fd_;
  int us_ = 0;
};

// The system-wide effective CPU latency limit in us (the minimum over all requests), read from
// /dev/cpu_dma_latency; nullopt + reason if it cannot be read. With no request the kernel reports
// PM_QOS_CPU_LATENCY_DEFAULT_VALUE (2000 s), i.e. no limit: see kCpuLatencyNoLimitUs.
std::optional<int> read_cpu_latency_limit_us(std::string* why_not);
inline constexpr int kCpuLatencyNoLimitUs = 2000 * 1000 * 1000;

}  // namespace wb
