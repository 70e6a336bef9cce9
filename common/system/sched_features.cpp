#include "common/system/sched_features.h"

#include <cctype>
#include <filesystem>

#include "common/system/kernel_files.h"

namespace wb {

using namespace ktext;
namespace fs = std::filesystem;

std::vector<SchedFeature> parse_sched_features(std::string_view text, const std::string& path) {
  std::vector<SchedFeature> out;
  for_each_line(text, [&](std::string_view line, int n) {
    for (auto tok : split_ws(line)) {
      SchedFeature f;
      f.enabled = tok.substr(0, 3) != "NO_";
      f.name = std::string(f.enabled ? tok : tok.substr(3));
      bool ok = !f.name.empty();
      for (char ch : f.name) {
        ok = ok && (std::isupper(static_cast<unsigned char>(ch)) ||
                    std::isdigit(static_cast<unsigned char>(ch)) || ch == '_');
      }
      if (!ok) fail(where(path, n), "\"" + std::string(tok) + "\" is not a sched feature name");
      out.push_back(std::move(f));
    }
  });
  if (out.empty()) fail(path, "no sched features listed");
  return out;
}

std::optional<std::vector<SchedFeature>> read_sched_features(std::string* why_not,
                                                             const std::string& root) {
  // sched/features since 5.13 (commit d27e9ae2f244 "sched: Move /proc/sched_debug to debugfs"
  // moved the debug files under sched/); sched_features before.
  std::error_code ec;
  for (const char* path :
       {"/sys/kernel/debug/sched/features", "/sys/kernel/debug/sched_features"}) {
    const std::string file = under_root(root, path);
    if (!fs::exists(file, ec)) continue;
    auto text = read_debugfs_file(path, why_not, root);
    if (!text) return std::nullopt;
    try {
      return parse_sched_features(*text, file);
    } catch (const std::exception& e) {
      *why_not = e.what();
      return std::nullopt;
    }
  }
  std::string reason = debugfs_unavailable_reason(root);
  *why_not = reason.empty() ? "/sys/kernel/debug/sched/features absent" : reason;
  return std::nullopt;
}

}  // namespace wb
