// The live machine's side of the sched-domain model: the scheduler's LLC as debugfs names it, and
// the topology a command reasons about (docs/policy-model.md#llc). Everything that reads the host
// is here; analysis/policy_model.cpp builds the domains from a Topology alone.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "analysis/policy_model.h"

namespace wb {

std::optional<LlcSource> live_llc_source(const std::string& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return std::nullopt;
  std::vector<int> cpus;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind("cpu", 0) == 0 && n.size() > 3 &&
        std::all_of(n.begin() + 3, n.end(), [](char c) { return std::isdigit(c); })) {
      cpus.push_back(std::stoi(n.substr(3)));
    }
  }
  if (ec || cpus.empty()) return std::nullopt;
  std::sort(cpus.begin(), cpus.end());
  std::vector<std::pair<std::string, std::string>> domains;
  for (int d = 0;; ++d) {
    fs::path dir =
        fs::path(root) / ("cpu" + std::to_string(cpus.front())) / ("domain" + std::to_string(d));
    if (!fs::is_directory(dir, ec)) break;
    std::ifstream name_in(dir / "name"), flags_in(dir / "flags");
    if (!name_in || !flags_in) return std::nullopt;
    std::string name, flags;
    std::getline(name_in, name);
    std::getline(flags_in, flags);
    domains.emplace_back(name, flags);
  }
  if (domains.empty()) return std::nullopt;
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
  if (!llc) llc = live_llc_source();
  return SchedTopology(Topology::from_system(), llc.value_or(LlcSource::kAuto));
}

}  // namespace wb
