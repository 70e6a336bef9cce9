// Building blocks for links whose hand-off carries no data (futex, eventfd, futex-swap, spin): a
// sequence word per direction on its own cache line, and the payload carried through shared memory.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "common/measure/mechanism.h"
#include "common/measure/shm.h"

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

// A value only one side writes in the hot loop, on cache lines of its own: in threads mode both
// tasks share the Link object, and two sides' fields on one line would bounce it at every hand-off.
template <typename T>
struct alignas(kHotAlign) OwnLine {
  T value{};
};

// Each side's private bytes (what it sends from and receives into), on cache lines of its own.
class SideBuffers {
 public:
  SideBuffers(size_t n, char fill)
      : n_(n),
        stride_((std::max<size_t>(n, 1) + kHotAlign - 1) / kHotAlign * kHotAlign),
        mem_(static_cast<char*>(::operator new (2 * stride_, std::align_val_t{kHotAlign}))) {
    std::memset(mem_.get(), fill, 2 * stride_);
  }
  char* operator[](Role side) const noexcept {
    return mem_.get() + stride_ * static_cast<size_t>(side);
  }
  size_t size() const noexcept { return n_; }

 private:
  struct Free {
    void operator()(char* p) const { ::operator delete (p, std::align_val_t{kHotAlign}); }
  };
  size_t n_, stride_;
  std::unique_ptr<char, Free> mem_;
};

// `payload` bytes per direction in shared memory: the sender copies its bytes in before it hands
// off, the receiver copies them out after it woke. The hand-off orders the copies (a syscall, or
// the release/acquire pair on a SeqWord).
class SharedPayload {
 public:
  static size_t bytes(int payload) {
    const size_t one = (static_cast<size_t>(payload) + kHotAlign - 1) / kHotAlign * kHotAlign;
    return 2 * one;
  }
  // The two areas laid out in `shared` (bytes(payload) bytes).
  SharedPayload(void* shared, int payload)
      : SharedPayload(static_cast<char*>(shared), static_cast<char*>(shared) + bytes(payload) / 2,
                      payload) {}
  // Areas the caller placed: [0] waker -> wakee, [1] wakee -> waker.
  SharedPayload(char* to_wakee, char* to_waker, int payload)
      : area_{to_wakee, to_waker}, local_(static_cast<size_t>(payload), 'w') {}
  void put(Role from) noexcept {
    std::memcpy(area_[static_cast<int>(from)], local_[from], local_.size());
  }
  void get(Role me) noexcept {
    std::memcpy(local_[me], area_[1 - static_cast<int>(me)], local_.size());
  }
  // What `side` copies out to and in from: its own, on lines of its own.
  const char* local(Role side) const noexcept { return local_[side]; }

 private:
  char* area_[2];  // [0]: waker -> wakee, [1]: wakee -> waker
  SideBuffers local_;
};

// The shared memory of a sequence-word link: SeqWord[2] ([0] waker -> wakee, [1] wakee -> waker),
// each direction's payload in its word's line when it fits (one line moves per hand-off, as in a
// cache-line ping-pong), else in areas of their own after the words; plus each side's last
// consumed value (private to its side, on its own line). How a receiver waits for the word to move
// (FUTEX_WAIT, busy polling) is the mechanism's.
class SeqChannel {
 public:
  // Payload bytes that travel in the word's line, after the word.
  static constexpr size_t kInlinePayload = kCacheLine - sizeof(std::atomic<uint32_t>);
  static bool inline_payload(int payload) { return static_cast<size_t>(payload) <= kInlinePayload; }
  static size_t bytes(int payload) {
    return 2 * sizeof(SeqWord) + (inline_payload(payload) ? 0 : SharedPayload::bytes(payload));
  }
  SeqChannel(void* shared, int payload)
      : words_(static_cast<SeqWord*>(shared)),
        payload_(inline_payload(payload)
                     ? SharedPayload(in_line(0), in_line(1), payload)
                     : SharedPayload(static_cast<char*>(shared) + 2 * sizeof(SeqWord), payload)) {}

  // The sender: copies its payload in, then bumps its word (release). Returns the word. Only the
  // sender writes its word, so a plain store does (no locked read-modify-write).
  std::atomic<uint32_t>& publish(Role from) noexcept {
    payload_.put(from);
    std::atomic<uint32_t>& w = words_[static_cast<int>(from)].seq;
    w.store(w.load(std::memory_order_relaxed) + 1, std::memory_order_release);
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
  std::atomic<uint32_t>& incoming(Role me) noexcept { return words_[1 - static_cast<int>(me)].seq; }
  uint32_t last(Role me) const noexcept { return seen_[static_cast<int>(me)].value; }

 private:
  char* in_line(int direction) const {
    return reinterpret_cast<char*>(&words_[direction]) + sizeof(std::atomic<uint32_t>);
  }
  SeqWord* words_;
  SharedPayload payload_;
  OwnLine<uint32_t> seen_[2];
};

}  // namespace wb
