// A connected TCP pair on 127.0.0.1 with TCP_NODELAY. The receive wakeup is sk_data_ready =
// sock_def_readable() (tcp_data_ready): WF_SYNC, but it runs in NET_RX softirq on the sender's CPU
// (loopback_xmit -> __netif_rx -> enqueue_to_backlog on smp_processor_id(); docs/policy-model.md
// section 4), the case Chen Yu raises in the review of seed 001.
#pragma once

#include "common/driver.h"

namespace wb {

class TcpLoopbackMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "tcp-loopback"; }
  WakeFlags wake_flags() const override { return WakeFlags::kSync; }
  std::string_view round_trip() const override {
    return "waker sends `payload` bytes on a TCP_NODELAY connection over 127.0.0.1; the wakee "
           "reads them and sends them back";
  }
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;
};

}  // namespace wb
