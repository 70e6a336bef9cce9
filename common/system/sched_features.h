#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

// /sys/kernel/debug/sched/features (sched_feat_show(): names in definition order, disabled ones
// prefixed NO_).
struct SchedFeature {
  std::string name;
  bool enabled = false;
};
std::vector<SchedFeature> parse_sched_features(std::string_view text, const std::string& path);
// Under `root`: sched/features (5.13+) or sched_features in debugfs.
std::optional<std::vector<SchedFeature>> read_sched_features(std::string* why_not,
                                                             const std::string& root = "/");

}  // namespace wb
