#include "benchmarks/eventfd.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "benchmarks/shared_state.h"
#include "common/sys.h"

namespace wb {

namespace {

class EventfdLink final : public Link {
 public:
  EventfdLink(const CaseSpec& spec, void* shared) : payload_(shared, spec.params.payload) {
    for (Fd& fd : efd_) fd.reset(static_cast<int>(check(eventfd(0, EFD_CLOEXEC), "eventfd")));
  }

  // Both sides use both eventfds, so nothing is closed in processes mode: a dead partner is found
  // by the driver's supervisor instead of an EOF.
  int send(Role from) noexcept override {
    payload_.put(from);
    const uint64_t one = 1;
    for (;;) {
      if (write(efd_[static_cast<int>(from)].get(), &one, sizeof one) == sizeof one) return 0;
      if (errno != EINTR) return errno;
    }
  }

  int wait(Role me) noexcept override {
    uint64_t count = 0;
    for (;;) {
      if (read(efd_[1 - static_cast<int>(me)].get(), &count, sizeof count) == sizeof count) break;
      if (errno != EINTR) return errno;
    }
    payload_.get(me);
    return 0;
  }

 private:
  SharedPayload payload_;
  Fd efd_[2];  // [0]: waker -> wakee, [1]: wakee -> waker
};

}  // namespace

size_t EventfdMechanism::shared_bytes(const CaseSpec& spec) const {
  return SharedPayload::bytes(spec.params.payload);
}

std::unique_ptr<Link> EventfdMechanism::make_link(const CaseSpec& spec, void* shared) const {
  return std::make_unique<EventfdLink>(spec, shared);
}

}  // namespace wb
