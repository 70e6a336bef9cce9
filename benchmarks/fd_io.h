// Full-length read/write on a stream fd for the hot loop: retries EINTR and short transfers,
// returns 0 or an errno (EPIPE when the partner closed its end).
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace wb {

// Calls io(buf, len) until all `len` bytes moved, retrying EINTR and short transfers. 0 or an
// errno; a transfer of 0 bytes (the partner closed its end) is EPIPE.
template <class Ptr, class Io>
inline int transfer_all(Ptr buf, size_t len, Io io) noexcept {
  while (len > 0) {
    const ssize_t n = io(buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EPIPE;
    buf += n;
    len -= static_cast<size_t>(n);
  }
  return 0;
}

inline int write_all(int fd, const char* buf, size_t len) noexcept {
  return transfer_all(buf, len, [fd](const char* b, size_t n) { return ::write(fd, b, n); });
}

// write_all for sockets: MSG_NOSIGNAL turns a closed peer into EPIPE instead of SIGPIPE.
inline int send_all(int fd, const char* buf, size_t len) noexcept {
  return transfer_all(buf, len,
                      [fd](const char* b, size_t n) { return ::send(fd, b, n, MSG_NOSIGNAL); });
}

inline int read_all(int fd, char* buf, size_t len) noexcept {
  return transfer_all(buf, len, [fd](char* b, size_t n) { return ::read(fd, b, n); });
}

}  // namespace wb
