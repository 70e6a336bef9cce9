#include "benchmarks/fd_link.h"

#include <sys/socket.h>

#include <cerrno>

#include "benchmarks/fd_io.h"

namespace wb {

FdLink::FdLink(const CaseSpec& spec, std::vector<Fd> fds, std::array<size_t, 2> tx,
               std::array<size_t, 2> rx, Framing framing)
    : processes_(spec.mode == Mode::kProcesses),
      fds_(std::move(fds)),
      tx_(tx),
      rx_(rx),
      framing_(framing),
      buf_(static_cast<size_t>(spec.params.payload), 'w') {}

void FdLink::attach(Role role) {
  if (!processes_) return;
  const int me = static_cast<int>(role);
  for (size_t i = 0; i < fds_.size(); ++i)
    if (i != tx_[me] && i != rx_[me]) fds_[i].reset();
}

int FdLink::send(Role from) noexcept {
  const int me = static_cast<int>(from);
  const int fd = fds_[tx_[me]].get();
  const char* b = buf_[from];
  const size_t n = buf_.size();
  switch (framing_) {
    case Framing::kPipe:
      return write_all(fd, b, n);
    case Framing::kSocket:
      return send_all(fd, b, n);
    case Framing::kDatagram:
      for (;;) {
        if (::send(fd, b, n, MSG_NOSIGNAL) >= 0) return 0;
        if (errno != EINTR) return errno;
      }
  }
  return EINVAL;
}

int FdLink::wait(Role me_role) noexcept {
  const int me = static_cast<int>(me_role);
  const int fd = fds_[rx_[me]].get();
  char* b = buf_[me_role];
  const size_t size = buf_.size();
  if (framing_ != Framing::kDatagram) return read_all(fd, b, size);
  for (;;) {
    const ssize_t n = ::recv(fd, b, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EPIPE;  // payload >= 1: an empty read is the partner's close
    return static_cast<size_t>(n) == size ? 0 : EMSGSIZE;
  }
}

}  // namespace wb
