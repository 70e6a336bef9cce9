// Busy-poll ping-pong on a cache line: no kernel, no wakeup (wake flags: none); the hardware floor
// of each placement class, the cost of moving the line between the two CPUs and back.

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#elif defined(__powerpc64__) && defined(__GLIBC__)
#include <sys/platform/ppc.h>
#endif

#include <set>

#include "benchmarks/registry.h"
#include "benchmarks/shared_state.h"

namespace wb {

class SpinMechanism final : public LinkMechanism {
 public:
  std::string_view id() const override { return "spin"; }
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

namespace {

// The architecture's spin-wait hint: it frees pipeline resources for an SMT sibling and, on x86,
// avoids the memory-order machine clear when the polled line changes (as the kernel's cpu_relax()).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#elif defined(__powerpc64__) && defined(__GLIBC__)
  __ppc_yield();
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);  // no hint: keep the compiler from folding
#endif
}

// Shared memory: a SeqChannel; the receiver busy-polls its word.
class SpinLink final : public Link {
 public:
  SpinLink(const CaseSpec& spec, void* shared) : ch_(shared, spec.params.payload) {}

  int send(Role from) noexcept override {
    ch_.publish(from);
    return 0;
  }

  int wait(Role me) noexcept override {
    while (!ch_.try_consume(me)) cpu_relax();
    return 0;
  }

 private:
  SeqChannel ch_;
};

}  // namespace

size_t SpinMechanism::shared_bytes(const CaseSpec& spec) const {
  return SeqChannel::bytes(spec.params.payload);
}

std::unique_ptr<Link> SpinMechanism::make_link(const CaseSpec& spec, void* shared) const {
  return std::make_unique<SpinLink>(spec, shared);
}

std::optional<std::string> SpinMechanism::mechanism_skip_reason(const CaseSpec& spec) const {
  if (spec.by_kernel()) {
    if (spec.cpuset.size() < 2 * static_cast<size_t>(spec.params.pairs))
      return "unsupported: spin busy-polls and never blocks, so it needs a CPU per task (" +
             std::to_string(2 * spec.params.pairs) + ") in the cpuset";
    return std::nullopt;
  }
  std::set<int> used;
  for (auto [waker, wakee] : concurrent_pairs(spec))
    if (!used.insert(waker).second || !used.insert(wakee).second)
      return std::string(
          "unsupported: spin busy-polls and never blocks, so it cannot make progress with two "
          "tasks on one CPU");
  return std::nullopt;
}

}  // namespace wb

// Listed by all_mechanisms() in registry/registry.json's order (benchmarks/registry.h).
namespace {
const wb::MechanismRegistrar kSpinMechanism(std::make_unique<wb::SpinMechanism>());
}  // namespace
