// Busy-poll ping-pong on a cache line: no kernel, no wakeup (wake flags: none); the hardware floor
// of each placement class, the cost of moving the line between the two CPUs and back.
#pragma once

#include "common/driver.h"

namespace wb {

class SpinMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "spin"; }
  WakeFlags wake_flags() const override { return WakeFlags::kNone; }
  std::string_view round_trip() const override {
    return "waker copies `payload` bytes into shared memory and bumps its sequence word; the "
           "wakee, polling that word, reads them and answers the same way through the other word";
  }
  size_t shared_bytes(const CaseSpec& spec) const override;
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;
  bool blocks() const override { return false; }

 protected:
  // A busy-poll never blocks: with both tasks on one CPU it waits for a tick to preempt it.
  std::optional<std::string> mechanism_skip_reason(const CaseSpec& spec) const override;
};

}  // namespace wb
