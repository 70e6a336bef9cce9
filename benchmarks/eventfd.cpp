// One eventfd per direction. eventfd_write wakes the blocked reader with wake_up_locked_poll
// (fs/eventfd.c): no WF_SYNC (docs/policy-model.md section 4).

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "benchmarks/registry.h"
#include "benchmarks/shared_state.h"
#include "common/util/sys.h"

namespace wb {

class EventfdMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "eventfd"; }
  std::string_view round_trip() const override {
    return "waker copies `payload` bytes into shared memory and writes 1 to an eventfd; the wakee "
           "reads the eventfd and the bytes and answers the same way through a second eventfd";
  }
  size_t shared_bytes(const CaseSpec& spec) const override;
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;
};

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

// Listed by all_mechanisms() in registry/registry.json's order (benchmarks/registry.h).
namespace {
const wb::MechanismRegistrar kEventfdMechanism(std::make_unique<wb::EventfdMechanism>());
}  // namespace
