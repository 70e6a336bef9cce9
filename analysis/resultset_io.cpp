#include "analysis/resultset_io.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <stdexcept>

#include "common/util/input.h"

namespace wb {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("results " + path + ": " + what);
}

// First string found at any of the JSON pointers, else "".
std::string first_string(const nlohmann::json& doc, std::initializer_list<const char*> pointers) {
  for (const char* p : pointers) {
    const nlohmann::json::json_pointer ptr(p);
    if (doc.contains(ptr) && doc.at(ptr).is_string()) return doc.at(ptr).get<std::string>();
  }
  return "";
}

int int_or(const nlohmann::json& obj, const char* key, int fallback) {
  if (obj.is_object() && obj.contains(key) && obj[key].is_number_integer())
    return obj[key].get<int>();
  return fallback;
}

MachineSummary summarize_machine(const nlohmann::json& doc) {
  MachineSummary m;
  // Unreadable environment fields are {"unavailable": reason} objects: first_string skips them.
  m.hostname = first_string(doc, {"/environment/hostname", "/context/host_name"});
  m.cpu_model = first_string(doc, {"/environment/cpu/model"});
  m.kernel_release = first_string(doc, {"/environment/kernel/release"});
  m.topology_source = first_string(doc, {"/topology/source"});
  m.config_hash = first_string(doc, {"/environment/config_hash"});
  if (doc.contains("topology") && doc["topology"].is_object()) {
    const nlohmann::json& topo = doc["topology"];
    if (topo.contains("counts") && topo["counts"].is_object()) {
      const nlohmann::json& c = topo["counts"];
      m.counts = TopologyCounts{int_or(c, "pus", 0),        int_or(c, "cores", 0),
                                int_or(c, "l2_groups", 0),  int_or(c, "llcs", 0),
                                int_or(c, "numa_nodes", 0), int_or(c, "packages", 0)};
    }
    if (topo.contains("smt")) m.smt_width = int_or(topo["smt"], "width", 0);
  }
  return m;
}

// The names outside cases[] that the commands use (is_safe_name): the host, and in predictions
// every entry's case, mechanism, mode and placement and every key (policies, classes).
void check_document_names(const nlohmann::json& doc) {
  for (const char* ptr : {"/environment/hostname", "/context/host_name"})
    if (const nlohmann::json::json_pointer p(ptr); doc.contains(p) && doc.at(p).is_string())
      check_name(ptr + 1, doc.at(p).get<std::string>());
  const nlohmann::json::json_pointer entries("/predictions/mechanisms");
  if (!doc.contains(entries) || !doc.at(entries).is_array()) return;
  const nlohmann::json& list = doc.at(entries);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = "predictions.mechanisms[" + std::to_string(i) + "]";
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

std::string format_counts(const MachineSummary& m) {
  if (!m.counts) return "";
  const TopologyCounts& c = *m.counts;
  std::ostringstream out;
  out << "pus " << c.pus << ", cores " << c.cores << ", llcs " << c.llcs << ", numa "
      << c.numa_nodes;
  if (m.smt_width > 0) out << ", smt " << m.smt_width;
  return out.str();
}

std::string machine_line(const MachineSummary& m) {
  std::string out;
  for (const std::string& part :
       {m.hostname, m.cpu_model, m.kernel_release.empty() ? "" : "Linux " + m.kernel_release,
        format_counts(m)}) {
    if (!part.empty()) out += (out.empty() ? "" : "; ") + part;
  }
  return out.empty() ? "(no machine description in the result set)" : out;
}

std::vector<CaseView> check_result_set(const nlohmann::json& doc) {
  using E = std::invalid_argument;
  if (!doc.is_object()) throw E("not a JSON object");
  if (!doc.contains("schema") || doc["schema"] != kResultSchema)
    throw E(std::string("not a wakebench result set (expected \"schema\": \"") + kResultSchema +
            "\")");
  if (!doc.contains("schema_version") || !doc["schema_version"].is_number_integer())
    throw E("missing or non-integer \"schema_version\"");
  // As the 64-bit number it is: 4294967297 must not read as 1.
  if (!readable_result_schema(doc["schema_version"].get<int64_t>()))
    throw E("schema_version " + doc["schema_version"].dump() +
            " is not supported (this wakebench reads versions " +
            std::to_string(kOldestResultSchemaVersion) + " to " +
            std::to_string(kResultSchemaVersion) + ")");
  if (!doc.contains("cases") || !doc["cases"].is_array()) throw E("missing \"cases\" array");
  std::vector<CaseView> views = parse_cases(doc["cases"]);
  parse_ab_view(doc);  // its one-line error, if any
  check_document_names(doc);
  // Every other string and key is free text (the CPU model, the kernel release, the topology
  // source: compare and predict print them), topology.xml excepted: a document for hwloc.
  check_texts(doc, {"topology.xml"});
  check_topology_xml(doc);
  return views;
}

ResultSet parse_result_set(const std::string& text, const std::string& path) {
  ResultSet rs;
  rs.path = path;
  try {
    rs.doc = parse_input_json(text);
  } catch (const std::invalid_argument& e) {
    fail(path, e.what());
  }
  try {
    rs.views = check_result_set(rs.doc);
    rs.ab = parse_ab_view(rs.doc);
  } catch (const std::invalid_argument& e) {
    fail(path, e.what());
  }
  const nlohmann::json& doc = rs.doc;
  rs.complete =
      !doc.contains("complete") || !doc["complete"].is_boolean() || doc["complete"].get<bool>();
  rs.machine = summarize_machine(doc);
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
