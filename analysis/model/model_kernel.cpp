#include "analysis/model/model_kernel.h"

#include <charconv>

namespace wb {

namespace {

std::string version_text(KernelVersion v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

}  // namespace

std::optional<KernelVersion> parse_kernel_version(std::string_view release) {
  KernelVersion v;
  const char* end = release.data() + release.size();
  auto [p, ec] = std::from_chars(release.data(), end, v.major);
  if (ec != std::errc() || p == end || *p != '.') return std::nullopt;
  auto [q, ec2] = std::from_chars(p + 1, end, v.minor);
  if (ec2 != std::errc() || q == p + 1) return std::nullopt;
  return v;
}

std::string model_kernel_range() { return version_text(kModelFrom) + "-" + version_text(kModelTo); }

bool model_follows(std::string_view release) {
  const auto v = parse_kernel_version(release);
  return v && *v >= kModelFrom && *v <= kModelTo;
}

std::string model_kernel_line(std::string_view release) {
  std::string line = "model: Linux " + model_kernel_range();
  if (release.empty()) return line + "; this set names no kernel";
  line += "; this set: " + std::string(release);
  if (model_follows(release)) return line + ", the same version (a vendor's changes unseen)";
  return line + ", a different kernel: the decisions of this one are checked by replay, not " +
         "assumed";
}

}  // namespace wb
