// The kernel whose code the policy model follows (docs/policy-model.md, version notes), held
// against the kernel a result set ran on. Pure: no system I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace wb {

struct KernelVersion {
  int major = 0, minor = 0;
  auto operator<=>(const KernelVersion&) const = default;
};

// The model's rules follow mainline's fair class from `kModelFrom` to `kModelTo`, both included.
inline constexpr KernelVersion kModelFrom{6, 18}, kModelTo{7, 1};

// "6.12.118+deb12-cloud-amd64" -> 6.12; nullopt for a release that starts otherwise.
std::optional<KernelVersion> parse_kernel_version(std::string_view release);

// "6.18-7.1".
std::string model_kernel_range();

// Whether a kernel release lies in the model's range, by its version number only: a vendor's own
// changes to the same version are not seen (replay checks its decisions).
bool model_follows(std::string_view release);

// One line for predict and the run's summary: the model's kernel beside the set's, e.g.
// "model: Linux 6.18-7.1; this set: 6.12.118+deb12-cloud-amd64, a different kernel: the
// decisions of this one are checked by replay, not assumed".
std::string model_kernel_line(std::string_view release);

}  // namespace wb
