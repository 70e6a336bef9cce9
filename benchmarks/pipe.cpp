#include "benchmarks/pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include "benchmarks/fd_link.h"
#include "common/sys.h"

namespace wb {

std::unique_ptr<Link> PipeMechanism::make_link(const CaseSpec& spec, void*) const {
  // fds: [0] waker -> wakee read end, [1] its write end, [2] wakee -> waker read end, [3] write.
  std::vector<Fd> fds;
  for (int dir = 0; dir < 2; ++dir) {
    int p[2];
    check(pipe2(p, O_CLOEXEC), "pipe2");
    fds.emplace_back(p[0]);
    fds.emplace_back(p[1]);
  }
  return std::make_unique<FdLink>(spec, std::move(fds), std::array<size_t, 2>{1, 3},
                                  std::array<size_t, 2>{2, 0}, FdLink::Framing::kPipe);
}

}  // namespace wb
