#include "benchmarks/pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "benchmarks/fd_io.h"
#include "common/sys.h"

namespace wb {

namespace {

class PipeLink final : public Link {
 public:
  PipeLink(const CaseSpec& spec) : processes_(spec.mode == Mode::kProcesses) {
    for (auto& dir : dirs_) {
      int fds[2];
      check(pipe2(fds, O_CLOEXEC), "pipe2");
      dir.read_end.reset(fds[0]);
      dir.write_end.reset(fds[1]);
    }
    for (auto& b : buf_) b.assign(static_cast<size_t>(spec.params.payload), 'w');
  }

  void attach(Role role) override {
    if (!processes_) return;  // both threads share the fds
    // In its own process each task keeps only its ends, so a dead partner shows up as EOF/EPIPE.
    const int me = static_cast<int>(role);
    dirs_[me].read_end.reset();        // I write into dirs_[me]
    dirs_[1 - me].write_end.reset();   // I read from dirs_[1 - me]
  }

  int send(Role from) noexcept override {
    auto& b = buf_[static_cast<int>(from)];
    return write_all(dirs_[static_cast<int>(from)].write_end.get(), b.data(), b.size());
  }

  int wait(Role me) noexcept override {
    auto& b = buf_[static_cast<int>(me)];
    return read_all(dirs_[1 - static_cast<int>(me)].read_end.get(), b.data(), b.size());
  }

 private:
  struct Direction {
    Fd read_end, write_end;
  };
  bool processes_;
  Direction dirs_[2];          // [0]: waker -> wakee, [1]: wakee -> waker
  std::vector<char> buf_[2];   // one buffer per side: threads never share one
};

}  // namespace

std::unique_ptr<Link> PipeMechanism::make_link(const CaseSpec& spec, void*) const {
  return std::make_unique<PipeLink>(spec);
}

}  // namespace wb
