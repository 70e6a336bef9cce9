// A connected TCP pair on 127.0.0.1 with TCP_NODELAY. The receive wakeup is sk_data_ready =
// sock_def_readable() (tcp_data_ready): WF_SYNC, but it runs in NET_RX softirq on the sender's CPU
// (loopback_xmit -> __netif_rx -> enqueue_to_backlog on smp_processor_id(); docs/policy-model.md
// section 4), the case Chen Yu raises in the review of seed 001.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "benchmarks/fd_link.h"
#include "benchmarks/registry.h"
#include "common/util/sys.h"

namespace wb {

class TcpLoopbackMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "tcp-loopback"; }
  std::string_view round_trip() const override {
    return "waker sends `payload` bytes on a TCP_NODELAY connection over 127.0.0.1; the wakee "
           "reads them and sends them back";
  }
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;
};

std::unique_ptr<Link> TcpLoopbackMechanism::make_link(const CaseSpec& spec, void*) const {
  Fd listener(static_cast<int>(check(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket")));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // any free port
  socklen_t len = sizeof addr;
  check(bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), "bind(127.0.0.1)");
  check(listen(listener.get(), 1), "listen");
  check(getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len), "getsockname");
  std::vector<Fd> fds;
  fds.emplace_back(
      static_cast<int>(check(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket")));
  check(connect(fds[0].get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr),
        "connect(127.0.0.1)");
  fds.emplace_back(
      static_cast<int>(check(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC), "accept4")));
  // Nagle would hold back a small segment while the previous one is unacknowledged.
  const int one = 1;
  for (const Fd& fd : fds)
    check(setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one),
          "setsockopt(TCP_NODELAY)");
  // [0] the waker's end (connected), [1] the wakee's (accepted).
  return std::make_unique<FdLink>(spec, std::move(fds), std::array<size_t, 2>{0, 1},
                                  std::array<size_t, 2>{0, 1}, FdLink::Framing::kSocket);
}

}  // namespace wb

// Listed by all_mechanisms() in registry/registry.json's order (benchmarks/registry.h).
namespace {
const wb::MechanismRegistrar kTcpLoopbackMechanism(std::make_unique<wb::TcpLoopbackMechanism>());
}  // namespace
