#include "common/system/idle_latency.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace wb {
namespace {

constexpr const char* kDevice = "/dev/cpu_dma_latency";

std::string open_failure(int err) {
  // Appended piecewise: GCC 12 flags operator+ chains on a temporary with a false -Warray-bounds.
  std::string msg = "open ";
  msg.append(kDevice).append(": ").append(std::strerror(err));
  if (err == EACCES || err == EPERM) msg += " (needs root)";
  if (err == ENOENT) msg += " (kernel without CPU latency PM QoS)";
  return msg;
}

}  // namespace

IdleLatencyGuard::IdleLatencyGuard(int us) : us_(us) {
  if (us < 0) {
    throw std::invalid_argument("--idle-latency-us must be >= 0, got " + std::to_string(us));
  }
  fd_ = Fd(::open(kDevice, O_WRONLY | O_CLOEXEC));
  if (!fd_) throw std::runtime_error("idle latency guard: " + open_failure(errno));
  const int32_t value = us;
  ssize_t n = ::write(fd_.get(), &value, sizeof value);
  if (n != static_cast<ssize_t>(sizeof value)) {
    int err = n < 0 ? errno : EIO;
    throw std::runtime_error(std::string("idle latency guard: write ") + kDevice + ": " +
                             std::strerror(err));
  }
}

std::optional<int> read_cpu_latency_limit_us(std::string* why_not) {
  // Opening adds a request at the default (no limit) until close, so reading changes nothing.
  Fd fd(::open(kDevice, O_RDONLY | O_CLOEXEC));
  if (!fd) {
    *why_not = open_failure(errno);
    return std::nullopt;
  }
  int32_t value = 0;
  ssize_t n = ::read(fd.get(), &value, sizeof value);
  if (n != static_cast<ssize_t>(sizeof value)) {
    const char* what = n < 0 ? std::strerror(errno) : "short read";
    why_not->assign("read ").append(kDevice).append(": ").append(what);
    return std::nullopt;
  }
  return value;
}

}  // namespace wb
