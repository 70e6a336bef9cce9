// FUTEX_WAKE then FUTEX_WAIT on one 32-bit word per direction: the FUTEX_SWAP paper's wake + wait
// baseline (seed 004). futex_wake -> wake_up_q -> wake_up_process: no WF_SYNC (docs/policy-model.md
// section 4). Private futexes in threads mode, shared ones (keyed on the page of the shared
// mapping) in processes mode.

#include <cerrno>

#include "benchmarks/registry.h"
#include "benchmarks/shared_state.h"
#include "common/util/sys.h"

namespace wb {

class FutexMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "futex"; }
  std::string_view round_trip() const override {
    return "waker copies `payload` bytes into shared memory, bumps its sequence word and "
           "FUTEX_WAKEs; the wakee, in FUTEX_WAIT on that word, reads them and answers the same "
           "way "
           "through the other word";
  }
  size_t shared_bytes(const CaseSpec& spec) const override;
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;
};

namespace {

// Shared memory: SeqWord[2] ([0] waker -> wakee, [1] wakee -> waker), then the payload areas.
//
// Protocol: the sender bumps its word (release) and always issues FUTEX_WAKE, as the paper's
// baseline does. The receiver returns as soon as the partner's word differs from the last value
// it consumed; otherwise it sleeps in FUTEX_WAIT(word, last). The kernel compares the word with
// `last` under the futex hash-bucket lock, so a bump that lands before the sleep makes the wait
// fail with EAGAIN, and the next load sees it: no wakeup is lost and EAGAIN is never spun on.
class FutexLink final : public Link {
 public:
  FutexLink(const CaseSpec& spec, void* shared)
      : ch_(shared, spec.params.payload), shared_(spec.mode == Mode::kProcesses) {}

  int send(Role from) noexcept override { return futex_wake(&ch_.publish(from), 1, shared_); }

  int wait(Role me) noexcept override {
    while (!ch_.try_consume(me)) {
      const int rc = futex_wait(&ch_.incoming(me), ch_.last(me), shared_);
      if (rc != 0 && rc != EAGAIN && rc != EINTR) return rc;
    }
    return 0;
  }

 private:
  SeqChannel ch_;
  bool shared_;
};

}  // namespace

size_t FutexMechanism::shared_bytes(const CaseSpec& spec) const {
  return SeqChannel::bytes(spec.params.payload);
}

std::unique_ptr<Link> FutexMechanism::make_link(const CaseSpec& spec, void* shared) const {
  return std::make_unique<FutexLink>(spec, shared);
}

}  // namespace wb

// Listed by all_mechanisms() in registry/registry.json's order (benchmarks/registry.h).
namespace {
const wb::MechanismRegistrar kFutexMechanism(std::make_unique<wb::FutexMechanism>());
}  // namespace
