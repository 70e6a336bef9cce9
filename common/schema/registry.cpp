#include "common/schema/registry.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace wb {

extern const std::string_view kRegistryJson;  // generated from registry/registry.json

namespace {

using nlohmann::json;

std::string registry_string(const json& entry, const char* key, const std::string& where) {
  if (!entry.contains(key) || !entry[key].is_string())
    throw std::invalid_argument(where + ": \"" + key + "\" is not a string");
  return entry[key];
}

const json& list_at(const json& doc, const char* key) {
  if (!doc.is_object() || !doc.contains(key) || !doc[key].is_array())
    throw std::invalid_argument(std::string("registry: \"") + key + "\" is not a list");
  return doc[key];
}

// "premise": {"cheaper": CLASS, "than": CLASS | "kernel", "wakes": "sync" | "futex-handoff",
// "text": ...}.
PolicyPremise premise_of(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(where + ": \"premise\" is not an object");
  PolicyPremise p{registry_string(j, "text", where), registry_string(j, "cheaper", where),
                  registry_string(j, "than", where)};
  const std::string wakes = registry_string(j, "wakes", where);
  if (wakes == "futex-handoff") {
    p.wakes = PolicyPremise::Wakes::kFutexHandoff;
  } else if (wakes != "sync") {
    throw std::invalid_argument(where + ": unknown premise wakes \"" + wakes + "\"");
  }
  return p;
}

MechanismEntry mechanism_of(const json& j, const std::string& where) {
  MechanismEntry m{registry_string(j, "id", where)};
  const std::string flags = registry_string(j, "wake_flags", where);
  const auto parsed = parse_wake_flags(flags);
  if (!parsed) throw std::invalid_argument(where + ": unknown wake_flags \"" + flags + "\"");
  m.wake_flags = *parsed;
  if (j.contains("no_kernel_wakeup"))
    m.no_kernel_wakeup = registry_string(j, "no_kernel_wakeup", where);
  if (j.contains("not_modelled")) m.not_modelled = registry_string(j, "not_modelled", where);
  if (j.contains("futex_handoff")) {
    if (!j["futex_handoff"].is_boolean())
      throw std::invalid_argument(where + ": \"futex_handoff\" is not a boolean");
    m.futex_handoff = j["futex_handoff"];
  }
  return m;
}

// "scheduler_settings": {"sysctl": ["kernel.sched_*", ...], ...}: each pattern ends in its only
// "*", and what comes before it is the prefix kept.
std::map<std::string, std::vector<std::string>> settings_of(const json& doc) {
  if (!doc.contains("scheduler_settings") || !doc["scheduler_settings"].is_object())
    throw std::invalid_argument("registry: \"scheduler_settings\" is not an object");
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [kind, patterns] : doc["scheduler_settings"].items()) {
    const std::string where = "scheduler_settings." + kind;
    if (!patterns.is_array()) throw std::invalid_argument(where + " is not a list");
    for (size_t i = 0; i < patterns.size(); ++i) {
      const std::string p = patterns[i].is_string() ? patterns[i].get<std::string>() : "";
      if (p.empty() || p.find('*') != p.size() - 1)
        throw std::invalid_argument(where + "[" + std::to_string(i) +
                                    "]: not a pattern ending in its only \"*\"");
      out[kind].push_back(p.substr(0, p.size() - 1));
    }
  }
  return out;
}

}  // namespace

namespace {

template <class Entry>
std::vector<std::string> ids_of(const std::vector<Entry>& entries) {
  std::vector<std::string> ids;
  for (const Entry& e : entries) ids.push_back(e.id);
  return ids;
}

}  // namespace

std::vector<std::string> Registry::policy_ids() const { return ids_of(policies); }

std::vector<std::string> Registry::kernel_policy_ids() const {
  std::vector<std::string> out;
  for (const PolicyEntry& p : policies)
    if (!p.kernel) out.push_back(p.id);
  return out;
}
std::vector<std::string> Registry::mechanism_ids() const { return ids_of(mechanisms); }

const MechanismEntry* Registry::find_mechanism(std::string_view id) const {
  for (const MechanismEntry& m : mechanisms)
    if (m.id == id) return &m;
  return nullptr;
}

const MechanismEntry& Registry::mechanism(std::string_view id) const {
  if (const MechanismEntry* m = find_mechanism(id)) return *m;
  throw std::logic_error("mechanism \"" + std::string(id) +
                         "\" has no entry in registry/registry.json");
}

bool Registry::scheduler_setting(const std::string& kind, std::string_view name) const {
  const auto it = scheduler_settings.find(kind);
  if (it == scheduler_settings.end()) return false;
  for (const std::string& prefix : it->second)
    if (name.substr(0, prefix.size()) == prefix) return true;
  return false;
}

std::string Registry::scheduler_settings_text() const {
  std::string out;
  for (const auto& [kind, prefixes] : scheduler_settings) {
    out += (out.empty() ? "" : "; ") + kind;
    for (size_t i = 0; i < prefixes.size(); ++i) out += (i == 0 ? " " : ", ") + prefixes[i] + "*";
  }
  return out;
}

Registry parse_registry(std::string_view text) {
  const json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) throw std::invalid_argument("registry: invalid JSON");
  Registry r;
  const json& policies = list_at(doc, "policies");
  for (size_t i = 0; i < policies.size(); ++i) {
    const std::string where = "policies[" + std::to_string(i) + "]";
    PolicyEntry e{registry_string(policies[i], "id", where)};
    if (policies[i].contains("kernel")) e.kernel = registry_string(policies[i], "kernel", where);
    if (policies[i].contains("sched_feature"))
      e.sched_feature = registry_string(policies[i], "sched_feature", where);
    if (policies[i].contains("premise")) e.premise = premise_of(policies[i]["premise"], where);
    r.policies.push_back(std::move(e));
  }
  const json& mechanisms = list_at(doc, "mechanisms");
  for (size_t i = 0; i < mechanisms.size(); ++i)
    r.mechanisms.push_back(mechanism_of(mechanisms[i], "mechanisms[" + std::to_string(i) + "]"));
  r.scheduler_settings = settings_of(doc);
  return r;
}

const Registry& registry() {
  static const Registry r = parse_registry(kRegistryJson);
  return r;
}

}  // namespace wb
