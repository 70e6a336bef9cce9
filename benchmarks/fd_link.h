// The link of every fd-based mechanism (pipe, unix-stream, unix-dgram, tcp-loopback): each side
// writes `payload` bytes into one fd and reads the partner's `payload` bytes from another (or the
// same socket). The wakeup is the kernel's: the blocked reader is woken by the writer.
#pragma once

#include <array>
#include <vector>

#include "benchmarks/shared_state.h"
#include "common/measure/mechanism.h"
#include "common/util/sys.h"

namespace wb {

class FdLink final : public Link {
 public:
  enum class Framing {
    kPipe,      // write(2) / read(2), full length across short transfers
    kSocket,    // send(2) with MSG_NOSIGNAL / read(2): a byte stream
    kDatagram,  // one send(2) / recv(2) of exactly `payload` bytes per hand-off
  };
  // `fds`: every fd of the link; tx[r] and rx[r]: the index in `fds` of the fd side r writes to
  // and reads from.
  FdLink(const CaseSpec& spec, std::vector<Fd> fds, std::array<size_t, 2> tx,
         std::array<size_t, 2> rx, Framing framing);

  // Processes mode: the task keeps only the fds its side uses, so that a dead partner shows up as
  // EOF or EPIPE. Threads share every fd.
  void attach(Role role) override;
  int send(Role from) noexcept override;
  int wait(Role me) noexcept override;
  // What `side` writes from and reads into: its own, on lines of its own.
  const char* buffer(Role side) const noexcept { return buf_[side]; }

 private:
  bool processes_;
  std::vector<Fd> fds_;
  std::array<size_t, 2> tx_, rx_;
  Framing framing_;
  SideBuffers buf_;  // one buffer per side: threads never share a line
};

}  // namespace wb
