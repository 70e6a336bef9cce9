#include "analysis/results/resultset_io.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <sstream>
#include <stdexcept>

#include "common/util/input.h"

namespace wb {
namespace {

[[noreturn]] void fail_reading(const std::string& path, const std::string& what) {
  throw std::runtime_error("results " + path + ": " + what);
}

// The string at `pointer` in `block` (an open block of the set: environment, context, the
// topology's summary), else "". Unreadable environment fields are {"unavailable": reason}.
std::string string_at(const nlohmann::ordered_json& block, const char* pointer) {
  const nlohmann::ordered_json::json_pointer ptr(pointer);
  return block.contains(ptr) && block.at(ptr).is_string() ? block.at(ptr).get<std::string>() : "";
}
std::string string_at(const std::optional<nlohmann::ordered_json>& block, const char* pointer) {
  return block ? string_at(*block, pointer) : "";
}

int int_or(const nlohmann::ordered_json& obj, const char* key, int fallback) {
  if (obj.is_object() && obj.contains(key) && obj[key].is_number_integer())
    return obj[key].get<int>();
  return fallback;
}

// environment.sched_features and sched_domains, typed (EnvironmentView).
void read_sched_blocks(const nlohmann::ordered_json& env, EnvironmentView& m) {
  using ojson = nlohmann::ordered_json;
  const ojson features = env.value("sched_features", ojson());
  if (features.is_object() && !features.contains("unavailable")) {
    m.sched_features.emplace();
    for (const auto& [name, on] : features.items())
      if (on.is_boolean()) (*m.sched_features)[name] = on.get<bool>();
  }
  const ojson domains = env.value("sched_domains", ojson());
  if (!domains.is_array() || domains.empty()) {
    m.no_sched_domains = string_at(domains, "/unavailable");
    return;
  }
  for (const ojson& e : domains) {
    if (!e.is_object() || !e.value("cpu", ojson()).is_number_integer()) continue;
    RecordedDomain d{e["cpu"].get<int>(), std::nullopt, std::nullopt, ""};
    if (e.value("domain", ojson()).is_number_integer()) d.domain = e["domain"].get<int>();
    if (e.value("name", ojson()).is_string()) d.name = e["name"].get<std::string>();
    for (const ojson& f : e.value("flags", ojson::array()))
      if (f.is_string()) d.flags += f.get<std::string>() + " ";
    m.sched_domains.push_back(std::move(d));
  }
}

EnvironmentView summarize_machine(const ResultSetDoc& set) {
  EnvironmentView m;
  if (set.environment && set.environment->is_object()) {
    const nlohmann::ordered_json& env = *set.environment;
    m.emulated = env.value("emulated", nlohmann::ordered_json(false)) == true;
    m.lab_policy = string_at(env, "/lab_kernel/policy");
    read_sched_blocks(env, m);
  } else {
    m.no_sched_domains = "";
  }
  m.hostname = string_at(set.environment, "/hostname");
  if (m.hostname.empty()) m.hostname = string_at(set.context, "/host_name");
  m.cpu_model = string_at(set.environment, "/cpu/model");
  m.kernel_release = string_at(set.environment, "/kernel/release");
  m.kernel_cmdline = string_at(set.environment, "/kernel/cmdline");
  m.config_hash = string_at(set.environment, "/config_hash");
  const nlohmann::ordered_json::json_pointer applies("/fair_placement/applies");
  if (set.environment && set.environment->contains(applies) &&
      set.environment->at(applies) == false) {
    m.not_fair = string_at(set.environment, "/fair_placement/why");
    if (m.not_fair.empty()) m.not_fair = "environment.fair_placement.applies is false";
  }
  if (set.topology) {
    const nlohmann::ordered_json& topo = set.topology->summary;
    m.topology_source = string_at(topo, "/source");
    if (topo.contains("counts") && topo["counts"].is_object()) {
      const nlohmann::ordered_json& c = topo["counts"];
      m.counts = TopologyCounts{int_or(c, "pus", 0),        int_or(c, "cores", 0),
                                int_or(c, "l2_groups", 0),  int_or(c, "llcs", 0),
                                int_or(c, "numa_nodes", 0), int_or(c, "packages", 0)};
    }
    if (topo.contains("smt")) m.smt_width = int_or(topo["smt"], "width", 0);
  }
  return m;
}

}  // namespace

const nlohmann::json* prediction_cases(const nlohmann::json& predictions) {
  if (!predictions.is_object()) return nullptr;
  for (const char* key : {"cases", "mechanisms"})
    if (predictions.contains(key) && predictions[key].is_array()) return &predictions[key];
  return nullptr;
}

namespace {

std::optional<double> number_at(const nlohmann::json& obj, const char* key) {
  if (obj.is_object() && obj.contains(key) && obj[key].is_number()) return obj[key].get<double>();
  return std::nullopt;
}

RecordedPolicy recorded_policy(const nlohmann::json& pol) {
  RecordedPolicy r;
  if (!pol.is_object()) return r;
  r.has_classes = pol.contains("classes");
  if (r.has_classes && pol["classes"].is_object())
    for (const auto& [cls, v] : pol["classes"].items())
      if (v.is_number()) r.classes.emplace_back(cls, v.get<double>());
  r.uncertain = pol.contains("uncertain");
  if (pol.contains("verdict") && pol["verdict"].is_string()) r.verdict = pol["verdict"];
  r.predicted_rtt_ns = number_at(pol, "predicted_rtt_ns");
  return r;
}

// Its case; in sets from before predictions were per case, mechanism/mode[/placement].
std::string entry_label(const nlohmann::json& e) {
  if (e.contains("case") && e["case"].is_string()) return e["case"].get<std::string>();
  const auto text = [&e](const char* key) {
    return e.contains(key) && e[key].is_string() ? e[key].get<std::string>() : std::string("?");
  };
  std::string label = text("mechanism") + "/" + text("mode");
  if (e.contains("placement") && e["placement"].is_string())
    label += "/" + e["placement"].get<std::string>();
  return label;
}

std::vector<RecordedPrediction> recorded_predictions(const ResultSetDoc& set) {
  std::vector<RecordedPrediction> out;
  const nlohmann::json predictions(set.predictions.value_or(nullptr));
  const nlohmann::json* entries = prediction_cases(predictions);
  for (const nlohmann::json& e : entries ? *entries : nlohmann::json::array()) {
    if (!e.is_object()) continue;
    RecordedPrediction r{entry_label(e), {}, std::nullopt};
    if (e.contains("policies") && e["policies"].is_object())
      for (const auto& [id, pol] : e["policies"].items())
        r.policies.emplace_back(id, recorded_policy(pol));
    if (e.contains("measured")) r.measured_rtt_ns = number_at(e["measured"], "rtt_ns");
    out.push_back(std::move(r));
  }
  return out;
}

// The claims of the set's config (one line naming the claim for one that does not check).
std::vector<Claim> recorded_claims(const ResultSetDoc& set) {
  if (!set.config || !set.config->document) return {};
  try {
    return parse_claims(nlohmann::json(*set.config->document), "of the set");
  } catch (const std::runtime_error& e) {  // "config of the set: claims[1].seed: missing"
    throw std::invalid_argument(e.what());
  }
}

}  // namespace

namespace {

// The names outside cases[] that the commands use (is_safe_name): the host, and in predictions
// every entry's case, mechanism, mode and placement and every key (policies, classes).
void check_document_names(const nlohmann::json& doc) {
  for (const char* ptr : {"/environment/hostname", "/context/host_name"})
    if (const nlohmann::json::json_pointer p(ptr); doc.contains(p) && doc.at(p).is_string())
      check_name(ptr + 1, doc.at(p).get<std::string>());
  const nlohmann::json* entries =
      doc.contains("predictions") ? prediction_cases(doc["predictions"]) : nullptr;
  if (!entries) return;
  const nlohmann::json& list = *entries;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = "predictions.cases[" + std::to_string(i) + "]";
    if (!list[i].is_object()) throw std::invalid_argument(at + " is not an object");
    const nlohmann::json flat = list[i].flatten();
    for (const auto& [path, v] : flat.items()) {
      for (std::size_t from = 1, to; from < path.size(); from = to + 1) {
        to = std::min(path.find('/', from), path.size());
        const std::string key = path.substr(from, to - from);
        if (key.find_first_not_of("0123456789") != std::string::npos) check_name(at + " key", key);
      }
      const std::string field = path.substr(path.rfind('/') + 1);
      if (v.is_string() && path.find('/', 1) == std::string::npos &&
          (field == "case" || field == "mechanism" || field == "mode" || field == "placement"))
        check_name(at + path, v.get<std::string>());
    }
  }
}

// topology.xml, a document for hwloc only, nests no deeper than kMaxInputDepth.
void check_topology_xml(const nlohmann::json& doc) {
  const nlohmann::json::json_pointer xml("/topology/xml");
  if (!doc.contains(xml) || !doc.at(xml).is_string()) return;
  try {
    check_xml_depth(doc.at(xml).get_ref<const std::string&>());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("topology.xml: ") + e.what());
  }
}

}  // namespace

std::string format_counts(const EnvironmentView& m) {
  if (!m.counts) return "";
  const TopologyCounts& c = *m.counts;
  std::ostringstream out;
  out << "pus " << c.pus << ", cores " << c.cores << ", llcs " << c.llcs << ", numa "
      << c.numa_nodes;
  if (m.smt_width > 0) out << ", smt " << m.smt_width;
  return out.str();
}

std::string machine_line(const EnvironmentView& m) {
  std::string out;
  for (const std::string& part :
       {m.hostname, m.cpu_model, m.kernel_release.empty() ? "" : "Linux " + m.kernel_release,
        format_counts(m)}) {
    if (!part.empty()) out += (out.empty() ? "" : "; ") + part;
  }
  return out.empty() ? "(no machine description in the result set)" : out;
}

namespace {

// What qemu TCG makes of a hardware event: cycles follow the guest's virtual time (target/*/
// cpu_get_*_cycles: icount or the virtual clock), cache and TLB events are not emulated.
enum class TcgEvent { kCounted, kVirtualTime, kNotEmulated };

TcgEvent tcg_event(std::string e) {
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char ch) { return std::tolower(ch); });
  const auto has = [&](const char* part) { return e.find(part) != std::string::npos; };
  if (has("cycles")) return TcgEvent::kVirtualTime;
  if (has("cache") || has("llc") || has("l1d") || has("l2d") || has("tlb") || has("miss"))
    return TcgEvent::kNotEmulated;
  return TcgEvent::kCounted;
}

// An emulated set's counters as they are: cycles noted as virtual time; a cache or TLB event
// that reads 0 on a side is unavailable there, with the reason, never shown as a count.
void label_emulated_counters(const EnvironmentView& env, std::vector<CaseView>& views) {
  if (!env.emulated) return;
  for (CaseView& c : views)
    for (auto& side : c.counters.side)
      for (auto it = side.begin(); it != side.end();) {
        const TcgEvent kind = tcg_event(it->first);
        if (kind == TcgEvent::kVirtualTime)
          c.counters.notes[it->first] = "virtual time under qemu TCG, not the CPU's cycles";
        if (kind != TcgEvent::kNotEmulated || it->second != 0.0) {
          ++it;
          continue;
        }
        c.counters.unavailable[it->first] = "not emulated under qemu TCG: reads 0, not measured";
        it = side.erase(it);
      }
}

}  // namespace

ResultSet typed_result_set(ResultSetDoc&& set, const std::string& path) {
  ResultSet rs;
  rs.path = path;
  rs.views = parse_cases(nlohmann::json(set.cases));
  rs.machine = summarize_machine(set);
  label_emulated_counters(rs.machine, rs.views);
  rs.predictions = recorded_predictions(set);
  rs.claims = recorded_claims(set);
  rs.set = std::move(set);
  return rs;
}

ResultSet check_result_set(const nlohmann::json& doc) {
  ResultSet rs;
  rs.set = read_result_set_doc(doc);
  rs.views = parse_cases(doc["cases"]);
  check_document_names(doc);
  // Every other string and key is free text (the CPU model, the kernel release, the topology
  // source: compare and predict print them), topology.xml excepted: a document for hwloc.
  check_texts(doc, {"topology.xml"});
  check_topology_xml(doc);
  rs.machine = summarize_machine(rs.set);
  label_emulated_counters(rs.machine, rs.views);
  rs.predictions = recorded_predictions(rs.set);
  rs.claims = recorded_claims(rs.set);
  return rs;
}

ResultSet parse_result_set(const std::string& text, const std::string& path) {
  nlohmann::json doc;
  try {
    doc = parse_input_json(text);
  } catch (const std::invalid_argument& e) {
    fail_reading(path, e.what());
  }
  ResultSet rs;
  try {
    rs = check_result_set(doc);
  } catch (const std::invalid_argument& e) {
    fail_reading(path, e.what());
  }
  rs.path = path;
  return rs;
}

ResultSet load_result_set(const std::string& path) {
  return parse_result_set(read_input_file("results", path), path);
}

std::string format_params(const nlohmann::json& params, const std::vector<std::string>& keys) {
  std::string out;
  if (!params.is_object()) return out;
  for (const auto& [k, v] : params.items()) {
    if (!keys.empty() && std::find(keys.begin(), keys.end(), k) == keys.end()) continue;
    if (!out.empty()) out += ' ';
    out += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

}  // namespace wb
