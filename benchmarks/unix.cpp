// AF_UNIX socket pairs. Both kinds wake the blocked receiver through sk_data_ready =
// sock_def_readable() -> wake_up_interruptible_sync_poll (net/unix/af_unix.c unix_stream_sendmsg,
// unix_dgram_sendmsg; docs/policy-model.md section 4): WF_SYNC.

#include <sys/socket.h>

#include <fstream>

#include "benchmarks/fd_link.h"
#include "benchmarks/registry.h"
#include "common/util/sys.h"

namespace wb {

class UnixStreamMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "unix-stream"; }
  std::string_view round_trip() const override {
    return "waker sends `payload` bytes on an AF_UNIX SOCK_STREAM socketpair; the wakee reads "
           "them and sends them back on the same connection";
  }
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;
};

class UnixDgramMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "unix-dgram"; }
  std::string_view round_trip() const override {
    return "waker sends one `payload`-byte datagram on an AF_UNIX SOCK_DGRAM socketpair; the "
           "wakee receives it and sends it back";
  }
  std::unique_ptr<Link> make_link(const CaseSpec& spec, void* shared) const override;

 protected:
  // One datagram must fit the send buffer, which setsockopt caps at net.core.wmem_max.
  std::optional<std::string> mechanism_skip_reason(const CaseSpec& spec) const override;
};

namespace {

// A connected pair: [0] the waker's socket, [1] the wakee's. Each side writes and reads its own.
std::unique_ptr<Link> socketpair_link(const CaseSpec& spec, int type, FdLink::Framing framing) {
  int sv[2];
  check(socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv), "socketpair");
  std::vector<Fd> fds;
  fds.emplace_back(sv[0]);
  fds.emplace_back(sv[1]);
  if (framing == FdLink::Framing::kDatagram) {
    // unix_dgram_sendmsg refuses (EMSGSIZE) a datagram larger than sk_sndbuf - 32; the kernel
    // doubles the value set here, capped at net.core.wmem_max.
    const int want = spec.params.payload + 4096;
    for (const Fd& fd : fds)
      check(setsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &want, sizeof want),
            "setsockopt(SO_SNDBUF)");
  }
  return std::make_unique<FdLink>(spec, std::move(fds), std::array<size_t, 2>{0, 1},
                                  std::array<size_t, 2>{0, 1}, framing);
}

}  // namespace

std::unique_ptr<Link> UnixStreamMechanism::make_link(const CaseSpec& spec, void*) const {
  return socketpair_link(spec, SOCK_STREAM, FdLink::Framing::kSocket);
}

std::unique_ptr<Link> UnixDgramMechanism::make_link(const CaseSpec& spec, void*) const {
  return socketpair_link(spec, SOCK_DGRAM, FdLink::Framing::kDatagram);
}

std::optional<std::string> UnixDgramMechanism::mechanism_skip_reason(const CaseSpec& spec) const {
  std::ifstream in("/proc/sys/net/core/wmem_max");
  long wmem_max = 0;
  if (!(in >> wmem_max)) return std::nullopt;  // unknown: the send itself will say
  if (static_cast<long>(spec.params.payload) + 4096 > 2 * wmem_max)
    return "unsupported: a " + std::to_string(spec.params.payload) +
           "-byte datagram exceeds the send buffer net.core.wmem_max allows (" +
           std::to_string(wmem_max) + ")";
  return std::nullopt;
}

}  // namespace wb

// Listed by all_mechanisms() in registry/registry.json's order (benchmarks/registry.h).
namespace {
const wb::MechanismRegistrar kUnixStreamMechanism(std::make_unique<wb::UnixStreamMechanism>());
const wb::MechanismRegistrar kUnixDgramMechanism(std::make_unique<wb::UnixDgramMechanism>());
}  // namespace
