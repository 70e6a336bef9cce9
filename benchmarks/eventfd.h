// One eventfd per direction. eventfd_write wakes the blocked reader with wake_up_locked_poll
// (fs/eventfd.c): no WF_SYNC (docs/policy-model.md#wake-flags).
#pragma once

#include "common/driver.h"

namespace wb {

class EventfdMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "eventfd"; }
  WakeFlags wake_flags() const override { return WakeFlags::kNone; }
  std::string_view round_trip() const override {
    return "waker copies `payload` bytes into shared memory and writes 1 to an eventfd; the wakee "
           "reads the eventfd and the bytes and answers the same way through a second eventfd";
  }
  size_t shared_bytes(const CaseSpec& spec) const override;
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;
};

}  // namespace wb
