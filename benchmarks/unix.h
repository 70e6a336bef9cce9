// AF_UNIX socket pairs. Both kinds wake the blocked receiver through sk_data_ready =
// sock_def_readable() -> wake_up_interruptible_sync_poll (net/unix/af_unix.c unix_stream_sendmsg,
// unix_dgram_sendmsg; docs/policy-model.md#wake-flags): WF_SYNC.
#pragma once

#include "common/driver.h"

namespace wb {

class UnixStreamMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "unix-stream"; }
  WakeFlags wake_flags() const override { return WakeFlags::kSync; }
  std::string_view round_trip() const override {
    return "waker sends `payload` bytes on an AF_UNIX SOCK_STREAM socketpair; the wakee reads "
           "them and sends them back on the same connection";
  }
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;
};

class UnixDgramMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "unix-dgram"; }
  WakeFlags wake_flags() const override { return WakeFlags::kSync; }
  std::string_view round_trip() const override {
    return "waker sends one `payload`-byte datagram on an AF_UNIX SOCK_DGRAM socketpair; the "
           "wakee receives it and sends it back";
  }
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;

 protected:
  // One datagram must fit the send buffer, which setsockopt caps at net.core.wmem_max.
  std::optional<std::string> mechanism_skip_reason(const CaseSpec& spec) const override;
};

}  // namespace wb
