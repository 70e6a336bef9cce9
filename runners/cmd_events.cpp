// `wakebench events [--json]`: the PMUs libpfm4 detects on this machine, the events it can encode
// for them, and whether perf_event_open accepts each default event here (and why not).
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/measure/perf.h"
#include "runners/commands.h"

namespace wb {
namespace {

struct EventsOptions {
  bool json = false;
};

struct DefaultStatus {
  std::string event;
  std::string encoding;  // libpfm4's fully qualified form; empty if it does not encode
  bool available = false;
  std::string reason;
};

// Opens the default events for this thread, exactly as a measured task would.
std::vector<DefaultStatus> default_status() {
  const std::vector<std::string> events = default_events();
  const PerfCounters counters(events);
  std::vector<DefaultStatus> out;
  for (const std::string& e : events) {
    DefaultStatus s{e, encode_event(e).fstr, true, ""};
    if (auto it = counters.unavailable().find(e); it != counters.unavailable().end()) {
      s.available = false;
      s.reason = it->second;
    }
    out.push_back(std::move(s));
  }
  return out;
}

nlohmann::json events_json(const std::vector<PfmPmuInfo>& pmus,
                           const std::vector<DefaultStatus>& defaults) {
  nlohmann::json j;
  const auto paranoid = perf_event_paranoid();
  j["perf_event_paranoid"] = paranoid ? nlohmann::json(*paranoid) : nlohmann::json(nullptr);
  j["kernel_core_pmu"] = core_pmu_present();
  j["pmus"] = nlohmann::json::array();
  for (const PfmPmuInfo& p : pmus) {
    nlohmann::json events = nlohmann::json::array();
    for (const PfmEventInfo& e : p.events) events.push_back({{"name", e.name}, {"desc", e.desc}});
    j["pmus"].push_back({{"name", p.name},
                         {"desc", p.desc},
                         {"type", p.type},
                         {"default", p.is_default},
                         {"counters", p.num_counters},
                         {"fixed_counters", p.num_fixed_counters},
                         {"events", std::move(events)}});
  }
  j["default_events"] = nlohmann::json::array();
  for (const DefaultStatus& d : defaults) {
    nlohmann::json item = {
        {"event", d.event}, {"encoding", d.encoding}, {"available", d.available}};
    item["reason"] = d.available ? nlohmann::json(nullptr) : nlohmann::json(d.reason);
    j["default_events"].push_back(std::move(item));
  }
  return j;
}

std::string padded(std::string s, std::size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}

void print_text(const std::vector<PfmPmuInfo>& pmus, const std::vector<DefaultStatus>& defaults) {
  const auto paranoid = perf_event_paranoid();
  std::cout << "perf_event_paranoid: " << (paranoid ? std::to_string(*paranoid) : "unreadable")
            << "\nkernel CPU PMU: " << (core_pmu_present() ? "present" : "none") << '\n';
  std::cout << "PMUs libpfm4 detects (" << pmus.size() << "):\n";
  for (const PfmPmuInfo& p : pmus) {
    std::cout << "  " << padded(p.name, 12) << ' ' << padded(p.type, 11) << ' '
              << padded(std::to_string(p.events.size()) + " events", 11) << ' ' << p.desc;
    if (p.num_counters > 0 || p.num_fixed_counters > 0) {
      std::cout << " (" << p.num_counters << " generic + " << p.num_fixed_counters
                << " fixed counters)";
    }
    std::cout << '\n';
  }
  std::cout << "default events (perf_event_open for this thread, user+kernel):\n";
  for (const DefaultStatus& d : defaults) {
    std::cout << "  " << padded(d.event, 22) << ' '
              << (d.available ? "ok           " + d.encoding : "unavailable: " + d.reason) << '\n';
  }
  for (const PfmPmuInfo& p : pmus) {
    std::cout << "events of " << p.name << ":\n";
    for (const PfmEventInfo& e : p.events) std::cout << "  " << e.name << '\n';
  }
}

void run_events(const EventsOptions& opt) {
  const std::vector<PfmPmuInfo> pmus = detected_pmus();
  const std::vector<DefaultStatus> defaults = default_status();
  if (opt.json)
    std::cout << events_json(pmus, defaults).dump(2) << std::endl;
  else
    print_text(pmus, defaults);
}

void add_events_command(CLI::App& app) {
  auto opt = std::make_shared<EventsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "events", "PMUs and perf events libpfm4 can encode here, and which default events open");
  cmd->add_flag("--json", opt->json, "Print JSON (event descriptions included)");
  cmd->callback([opt] { run_events(*opt); });
}

static CommandRegistrar events_reg("events", add_events_command);

}  // namespace
}  // namespace wb
