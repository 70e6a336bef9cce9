
#include <fcntl.h>
#include <unistd.h>

#include "benchmarks/fd_link.h"
#include "benchmarks/registry.h"
#include "common/util/sys.h"

namespace wb {

// Two pipes, one per direction. A pipe write wakes the blocked reader with
// wake_up_interruptible_sync_poll (fs/pipe.c anon_pipe_write): WF_SYNC.
class PipeMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "pipe"; }
  std::string_view round_trip() const override {
    return "waker writes `payload` bytes into a pipe; the wakee reads them and writes them back "
           "through a second pipe";
  }
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;
};

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

// Listed by all_mechanisms() in registry/registry.json's order (benchmarks/registry.h).
namespace {
const wb::MechanismRegistrar kPipeMechanism(std::make_unique<wb::PipeMechanism>());
}  // namespace
