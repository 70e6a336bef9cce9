#include "benchmarks/futex.h"

#include <cerrno>

#include "benchmarks/shared_state.h"
#include "common/sys.h"

namespace wb {

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
      : words_(static_cast<SeqWord*>(shared)),
        payload_(static_cast<char*>(shared) + 2 * sizeof(SeqWord), spec.params.payload),
        shared_(spec.mode == Mode::kProcesses) {}

  int send(Role from) noexcept override {
    payload_.put(from);
    std::atomic<uint32_t>& w = words_[static_cast<int>(from)].seq;
    w.fetch_add(1, std::memory_order_release);
    return futex_wake(&w, 1, shared_);
  }

  int wait(Role me) noexcept override {
    std::atomic<uint32_t>& w = words_[1 - static_cast<int>(me)].seq;
    uint32_t& last = seen_[static_cast<int>(me)].value;
    for (;;) {
      const uint32_t now = w.load(std::memory_order_acquire);
      if (now != last) {
        last = now;
        break;
      }
      const int rc = futex_wait(&w, last, shared_);
      if (rc != 0 && rc != EAGAIN && rc != EINTR) return rc;
    }
    payload_.get(me);
    return 0;
  }

 private:
  // The last partner value each side consumed; private to its side, on its own line so that the
  // two threads of threads mode do not share one.
  struct alignas(kHotAlign) Seen {
    uint32_t value = 0;
  };
  SeqWord* words_;
  SharedPayload payload_;
  bool shared_;
  Seen seen_[2];
};

}  // namespace

size_t FutexMechanism::shared_bytes(const CaseSpec& spec) const {
  return 2 * sizeof(SeqWord) + SharedPayload::bytes(spec.params.payload);
}

std::unique_ptr<Link> FutexMechanism::make_link(const CaseSpec& spec, void* shared) const {
  return std::make_unique<FutexLink>(spec, shared);
}

}  // namespace wb
