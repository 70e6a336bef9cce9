// Full-length read/write on a stream fd for the hot loop: retries EINTR and short transfers,
// returns 0 or an errno (EPIPE when the partner closed its end).
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace wb {

inline int write_all(int fd, const char* buf, size_t len) noexcept {
  while (len > 0) {
    const ssize_t n = ::write(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    buf += n;
    len -= static_cast<size_t>(n);
  }
  return 0;
}

// write_all for sockets: MSG_NOSIGNAL turns a closed peer into EPIPE instead of SIGPIPE.
inline int send_all(int fd, const char* buf, size_t len) noexcept {
  while (len > 0) {
    const ssize_t n = ::send(fd, buf, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    buf += n;
    len -= static_cast<size_t>(n);
  }
  return 0;
}

inline int read_all(int fd, char* buf, size_t len) noexcept {
  while (len > 0) {
    const ssize_t n = ::read(fd, buf, len);
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

}  // namespace wb
