// `wakebench topology [--topology FILE.xml] [--json] [--pairs-per-class N]`: what the machine looks
// like to wakebench, which CPU pairs each placement class resolves to, and why a class is missing.
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/schema/placement.h"
#include "common/system/topology.h"
#include "common/util/cpulist.h"
#include "common/util/text.h"
#include "runners/commands.h"

namespace wb {
namespace {

struct TopologyOptions {
  std::string topology_file;
  bool json = false;
  int pairs_per_class = 1;
};

// "name (k): 0-7,16-23 | 8-15,24-31", wrapped at 100 columns under the first list.
void print_groups(const std::string& name, const std::map<int, std::vector<int>>& groups,
                  const std::string& label_prefix = "") {
  std::string line = name + " (" + std::to_string(groups.size()) + "):";
  const std::string indent(4, ' ');
  bool first = true;
  for (const auto& [id, cpus] : groups) {
    std::string item = (first ? " " : " | ") + label_prefix;
    if (!label_prefix.empty()) item += std::to_string(id) + " ";
    item += format_cpu_list(cpus);
    if (line.size() + item.size() > kTextWidth) {
      std::cout << line << (first ? "" : " |") << '\n';
      line = indent + item.substr(first ? 1 : 3);
    } else {
      line += item;
    }
    first = false;
  }
  std::cout << line << '\n';
}

std::map<int, std::vector<int>> group_by(const Topology& topo, int Pu::*field) {
  std::map<int, std::vector<int>> groups;
  for (const Pu& p : topo.pus())
    if (p.*field >= 0) groups[p.*field].push_back(p.os);
  return groups;
}

std::string smt_text(const Topology& topo) {
  const SmtInfo smt = topo.smt();
  std::string text = "width " + std::to_string(smt.width) + ", numbering " + smt.numbering;
  if (smt.numbering == "strided") text += " +" + std::to_string(smt.stride);
  if (smt.numbering == "mixed") {
    std::map<size_t, int> cores_by_width;  // PUs per core -> number of cores
    for (const auto& [core, cpus] : group_by(topo, &Pu::core)) ++cores_by_width[cpus.size()];
    std::string detail;
    for (const auto& [width, cores] : cores_by_width)
      detail += (detail.empty() ? "" : ", ") + std::to_string(cores) + " cores with " +
                std::to_string(width) + (width == 1 ? " PU" : " PUs");
    text += " (" + detail + ")";
  }
  return text;
}

void print_topology_text(const Topology& topo, const std::vector<ClassPairs>& classes) {
  const TopologyCounts n = topo.counts();
  std::cout << "source: " << topo.source() << '\n';
  if (auto model = topo.info("CPUModel")) std::cout << "CPU model: " << *model << '\n';
  std::cout << "CPUs: " << format_cpu_list(topo.cpus()) << '\n';
  std::cout << "counts: " << n.pus << " PUs, " << n.cores << " cores, " << n.l2_groups
            << " L2 groups, " << n.llcs << " LLCs, " << n.numa_nodes << " NUMA nodes, "
            << n.packages << " packages\n";
  std::cout << "SMT: " << smt_text(topo) << '\n';
  print_groups("LLCs", group_by(topo, &Pu::llc));
  const auto clusters = group_by(topo, &Pu::cluster);
  if (clusters.empty())
    std::cout << "clusters: none\n";
  else
    print_groups("clusters", clusters);
  print_groups("NUMA nodes with CPUs", group_by(topo, &Pu::numa), "P#");
  std::cout << "placement classes (pairs are waker,wakee CPU ids):\n";
  for (const ClassPairs& cp : classes) {
    std::string cell;
    if (cp.available) {
      for (const auto& [waker, wakee] : cp.pairs)
        cell += (cell.empty() ? "" : "  ") + std::to_string(waker) + "," + std::to_string(wakee);
    } else {
      cell = "unavailable: " + cp.reason;
    }
    std::string id(class_id(cp.cls));
    id.resize(12, ' ');
    std::cout << "  " << id << ' ' << cell << '\n';
  }
}

void run_topology(const TopologyOptions& opt) {
  const Topology topo =
      opt.topology_file.empty() ? Topology::from_system() : Topology::from_xml(opt.topology_file);
  const std::vector<ClassPairs> classes = choose_pairs(topo, opt.pairs_per_class);
  if (opt.json)
    std::cout << topology_json(topo, classes).dump(2) << std::endl;
  else
    print_topology_text(topo, classes);
}

void add_topology_command(CLI::App& app) {
  auto opt = std::make_shared<TopologyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "topology", "Placement classes, the CPU pairs chosen for each, and why a class is missing");
  cmd->add_option("--topology", opt->topology_file,
                  "hwloc XML file to use instead of the live machine (restricted to the CPUs "
                  "this process may run on)");
  cmd->add_flag("--json", opt->json, "Print the JSON summary (docs/cli.md#topology)");
  cmd->add_option("--pairs-per-class", opt->pairs_per_class,
                  "Pairs to choose per class, spread over cores / LLCs / NUMA nodes")
      ->check(CLI::Range(1, 4096));
  cmd->callback([opt] { run_topology(*opt); });
}

static CommandRegistrar topology_reg("topology", add_topology_command);

}  // namespace
}  // namespace wb
