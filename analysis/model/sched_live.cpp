// The live machine's side of the sched-domain model: the scheduler's LLC as debugfs names it, and
// the topology a command reasons about (docs/policy-model.md#llc). It reads the host through
// common/system (one reader per subject); analysis/model/policy_model.cpp builds the domains from a
// Topology alone.
#include <stdexcept>
#include <utility>

#include "analysis/model/policy_model.h"
#include "common/system/sched_domains.h"
#include "common/util/text.h"

namespace wb {

std::optional<LlcSource> live_llc_source(const Topology& topo, const std::string& root) {
  const std::vector<int> cpus = topo.cpus();
  if (cpus.empty()) return std::nullopt;
  std::string why_not;
  const auto entries = read_sched_domains({cpus.front()}, &why_not, root);
  if (!entries || entries->empty()) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> domains;
  for (const SchedDomainEntry& e : *entries) domains.emplace_back(e.name, join(e.flags, " "));
  return llc_source_from_domains(domains);
}

SchedTopology load_sched_topology(const std::string& command, const std::string& xml,
                                  const std::string& llc_level, std::optional<LlcSource> fallback) {
  std::optional<LlcSource> llc = fallback;
  if (!llc_level.empty()) {
    try {
      llc = parse_llc_level(llc_level);
    } catch (const std::exception& e) {
      throw std::invalid_argument(command + " --llc-level: " + e.what());
    }
  }
  if (!xml.empty()) return SchedTopology(Topology::from_xml(xml), llc.value_or(LlcSource::kAuto));
  // The live machine: the scheduler's own LLC from debugfs if readable (docs/policy-model.md#llc).
  Topology topo = Topology::from_system();
  if (!llc) llc = live_llc_source(topo);
  return SchedTopology(std::move(topo), llc.value_or(LlcSource::kAuto));
}

}  // namespace wb
