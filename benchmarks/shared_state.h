// Building blocks for links whose hand-off carries no data (futex, eventfd, futex-swap, spin): a
// sequence word per direction on its own cache line, and the payload carried through shared memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/driver.h"
#include "common/shm.h"

namespace wb {

// One direction's hand-off counter. The sender increments it, the receiver waits until it moves
// past the last value it saw: a lost-wakeup-free protocol with no reset and no ABA within 2^32
// round trips (a wrap compares unequal, which is all the receiver asks).
struct alignas(kHotAlign) SeqWord {
  std::atomic<uint32_t> seq;
};
static_assert(sizeof(SeqWord) == kHotAlign && alignof(SeqWord) == kHotAlign,
              "each hot word must own its cache line");
static_assert(std::atomic<uint32_t>::is_always_lock_free);

// `payload` bytes per direction in shared memory: the sender copies its bytes in before it hands
// off, the receiver copies them out after it woke. The hand-off orders the copies (a syscall, or
// the release/acquire pair on a SeqWord).
class SharedPayload {
 public:
  static size_t bytes(int payload) {
    const size_t one = (static_cast<size_t>(payload) + kHotAlign - 1) / kHotAlign * kHotAlign;
    return 2 * one;
  }
  SharedPayload(void* shared, int payload)
      : n_(static_cast<size_t>(payload)),
        area_{static_cast<char*>(shared), static_cast<char*>(shared) + bytes(payload) / 2} {
    for (auto& b : local_) b.assign(n_, 'w');
  }
  void put(Role from) noexcept {
    const int me = static_cast<int>(from);
    std::memcpy(area_[me], local_[me].data(), n_);
  }
  void get(Role me_role) noexcept {
    const int me = static_cast<int>(me_role);
    std::memcpy(local_[me].data(), area_[1 - me], n_);
  }

 private:
  size_t n_;
  char* area_[2];               // [0]: waker -> wakee, [1]: wakee -> waker
  std::vector<char> local_[2];  // each side's private bytes
};

// The shared memory of a sequence-word link: SeqWord[2] ([0] waker -> wakee, [1] wakee -> waker),
// then the payload areas; plus each side's last consumed value (private to its side, on its own
// line so that the two threads of threads mode do not share one). How a receiver waits for the
// word to move (FUTEX_WAIT, busy polling) is the mechanism's.
class SeqChannel {
 public:
  static size_t bytes(int payload) { return 2 * sizeof(SeqWord) + SharedPayload::bytes(payload); }
  SeqChannel(void* shared, int payload)
      : words_(static_cast<SeqWord*>(shared)),
        payload_(static_cast<char*>(shared) + 2 * sizeof(SeqWord), payload) {}

  // The sender: copies its payload in, then bumps its word (release). Returns the word.
  std::atomic<uint32_t>& publish(Role from) noexcept {
    payload_.put(from);
    std::atomic<uint32_t>& w = words_[static_cast<int>(from)].seq;
    w.fetch_add(1, std::memory_order_release);
    return w;
  }
  // The receiver: true (and the payload copied out) once the partner's word moved past the last
  // value `me` consumed.
  bool try_consume(Role me) noexcept {
    uint32_t& last = seen_[static_cast<int>(me)].value;
    const uint32_t now = incoming(me).load(std::memory_order_acquire);
    if (now == last) return false;
    last = now;
    payload_.get(me);
    return true;
  }
  std::atomic<uint32_t>& incoming(Role me) noexcept {
    return words_[1 - static_cast<int>(me)].seq;
  }
  uint32_t last(Role me) const noexcept { return seen_[static_cast<int>(me)].value; }

 private:
  struct alignas(kHotAlign) Seen {
    uint32_t value = 0;
  };
  SeqWord* words_;
  SharedPayload payload_;
  Seen seen_[2];
};

}  // namespace wb
