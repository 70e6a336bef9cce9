#include "analysis/predict/replay_io.h"

#include <filesystem>
#include <stdexcept>

#include "analysis/model/model_features.h"
#include "analysis/predict/predict_results.h"
#include "common/schema/environment.h"
#include "common/util/input.h"

namespace wb {

std::vector<std::pair<std::string, std::string>> side_file_cases(const ResultSet& rs,
                                                                 const std::string& set_path) {
  if (!rs.set.decisions)
    throw std::invalid_argument("replay: " + set_path +
                                ": no decision records (a run with --trace-decisions on a kernel "
                                "with the decision event keeps them: runners/lab/KERNELS.md)");
  const DecisionsRecord& d = *rs.set.decisions;
  if (d.file.find('/') != std::string::npos || d.file == ".." || d.file == ".")
    throw std::invalid_argument("replay: " + set_path + ": decisions.file \"" + d.file +
                                "\" is not a file name beside the set");
  const std::string side = (std::filesystem::path(set_path).parent_path() / d.file).string();
  const std::string text = read_input_file("replay: decisions", side);
  if (sha256_hex(text) != d.sha256)
    throw std::invalid_argument("replay: " + side + ": its sha256 is not the one " + set_path +
                                " names (another run's decisions, or changed since)");
  try {
    return decision_cases(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("replay: " + side + ": " + e.what());
  }
}

std::string kernel_policy(const ResultSet& rs) {
  const std::string& policy = rs.machine.lab_policy;
  if (!policy.empty() && policy != "gated" && policy != "mainline") return policy;
  // The gated kernel runs the policy whose sched feature this set (its A/B setting) turned on. A
  // set written inside the guest has no lab_kernel yet (the host adds it); its gates say the same,
  // and only a gated kernel has them.
  const std::string gated = set_features(rs).gated_policy;
  return gated.empty() ? "mainline" : gated;
}

CaseReplays replay_recorded(const ResultSet& rs, const std::string& set_path) {
  return replay_cases(side_file_cases(rs, set_path), sched_topology_of(rs),
                      policy_by_id(kernel_policy(rs)), set_features(rs).model);
}

}  // namespace wb
