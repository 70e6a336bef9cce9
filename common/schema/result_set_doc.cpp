#include "common/schema/result_set_doc.h"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>

#include "common/schema/result_set.h"  // kResultSchema, readable_result_schema
#include "common/util/input.h"         // check_name

namespace wb {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;
using E = std::invalid_argument;

const json& object_at(const json& v, const std::string& what) {
  if (!v.is_object()) throw E(what + " is not an object");
  return v;
}

// obj[key] (null when absent) as a string, else "WHAT.KEY is not a string".
std::string string_at(const json& obj, const std::string& what, const char* key) {
  const json& v = obj.value(key, json());
  if (!v.is_string()) throw E(what + "." + key + " is not a string");
  return v.get<std::string>();
}

double number_at(const json& obj, const std::string& what, const char* key) {
  const json& v = obj.value(key, json());
  if (!v.is_number()) throw E(what + "." + key + " is not a number");
  return v.get<double>();
}

uint64_t unsigned_at(const json& obj, const std::string& what, const char* key) {
  const json& v = obj.value(key, json());
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    throw E(what + "." + key + " is not an unsigned integer");
  return v.get<uint64_t>();
}

RunOrder read_run(const json& v) {
  object_at(v, "run");
  RunOrder r{string_at(v, "run", "order"), unsigned_at(v, "run", "order_seed"), {}};
  if (const json c = v.value("command", json()); !c.is_null()) {
    if (!c.is_array() || c.empty() ||
        !std::all_of(c.begin(), c.end(), [](const json& a) { return a.is_string(); }))
      throw E("run.command is not a non-empty array of strings");
    r.command = c.get<std::vector<std::string>>();
  }
  return r;
}

// The checks `ab` always had (its ids and values are names: common/util/input.h).
AbSet read_ab(const json& ab) {
  object_at(ab, "ab");
  AbSet a;
  a.id = string_at(ab, "ab", "id");
  check_name("ab.id", a.id);
  a.label = string_at(ab, "ab", "label");
  check_name("ab.label", a.label);
  a.settings = static_cast<int>(json_int_in(ab.value("settings", json()), "ab.settings", 2, 100));
  a.setting =
      static_cast<int>(json_int_in(ab.value("setting", json()), "ab.setting", 0, a.settings - 1));
  a.order_seed = unsigned_at(ab, "ab", "order_seed");
  const json& values = ab.value("values", json());
  if (!values.is_object() || values.empty()) throw E("ab.values is not a non-empty object");
  for (const auto& [key, value] : values.items()) {
    check_name("ab.values key", key);
    if (!value.is_string()) throw E("ab.values." + key + " is not a string");
    check_name("ab.values." + key, value.get<std::string>());
    a.values.emplace_back(key, value.get<std::string>());
  }
  return a;
}

UntilDecidedRecord read_until_decided(const json& v) {
  const std::string at = "until_decided";
  object_at(v, at);
  UntilDecidedRecord u{string_at(v, at, "base"),
                       json_int_in(v.value("looks", json()), at + ".looks", 0, INT64_MAX),
                       json_int_in(v.value("max_looks", json()), at + ".max_looks", 0, INT64_MAX),
                       number_at(v, at, "budget_s"),
                       number_at(v, at, "elapsed_s"),
                       number_at(v, at, "alpha"),
                       {},
                       object_at(v.value("cases", json()), at + ".cases")};
  const json counts = v.value("counts", json());
  for (const auto& [word, n] : object_at(counts, at + ".counts").items())
    u.counts.emplace_back(word, json_int_in(n, at + ".counts." + word, 0, INT64_MAX));
  return u;
}

TopologyRecord read_topology(const json& v) {
  TopologyRecord t;
  for (const auto& [key, x] : object_at(v, "topology").items()) {
    if (key != "xml") {
      t.summary[key] = x;
    } else if (x.is_string()) {
      t.xml = x.get<std::string>();
    } else {
      throw E("topology.xml is not a string");
    }
  }
  return t;
}

ConfigRecord read_config(const json& v) {
  ConfigRecord c;
  for (const auto& [key, x] : object_at(v, "config").items()) {
    if (key == "document") {
      c.document = x;
    } else if (key != "path" && key != "name") {
      c.other[key] = x;
    } else if (!x.is_string()) {
      throw E("config." + key + " is not a string");
    } else {
      (key == "path" ? c.path : c.name) = x.get<std::string>();
    }
  }
  return c;
}

DecisionsRecord read_decisions(const json& v) {
  object_at(v, "decisions");
  return {string_at(v, "decisions", "file"), string_at(v, "decisions", "sha256"),
          json_int_in(v.value("lines", json()), "decisions.lines", 0, INT64_MAX)};
}

// schema, schema_version and the cases array: what makes a document a result set.
void check_header(const json& doc) {
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
}

using MemberReader = std::function<void(ResultSetDoc&, const json&)>;

// Each top-level key after the header, and where it goes.
const std::map<std::string, MemberReader>& member_readers() {
  static const std::map<std::string, MemberReader> readers = {
      {"schema", [](ResultSetDoc&, const json&) {}},
      {"schema_version", [](ResultSetDoc&, const json&) {}},
      {"cases", [](ResultSetDoc& d, const json& v) { d.cases = v; }},
      {"complete",
       [](ResultSetDoc& d, const json& v) {
         if (!v.is_boolean()) throw E("complete is not true or false");
         d.complete = v.get<bool>();
       }},
      {"context", [](ResultSetDoc& d, const json& v) { d.context = v; }},
      {"benchmarks", [](ResultSetDoc& d, const json& v) { d.benchmarks = v; }},
      {"run", [](ResultSetDoc& d, const json& v) { d.run = read_run(v); }},
      {"ab", [](ResultSetDoc& d, const json& v) { d.ab = read_ab(v); }},
      {"until_decided",
       [](ResultSetDoc& d, const json& v) { d.until_decided = read_until_decided(v); }},
      {"environment", [](ResultSetDoc& d, const json& v) { d.environment = v; }},
      {"topology", [](ResultSetDoc& d, const json& v) { d.topology = read_topology(v); }},
      {"config", [](ResultSetDoc& d, const json& v) { d.config = read_config(v); }},
      {"predictions", [](ResultSetDoc& d, const json& v) { d.predictions = v; }},
      {"noise", [](ResultSetDoc& d, const json& v) { d.noise = v; }},
      {"decisions", [](ResultSetDoc& d, const json& v) { d.decisions = read_decisions(v); }},
  };
  return readers;
}

ojson ab_json(const AbSet& a) {
  ojson values = ojson::object();
  for (const auto& [key, value] : a.values) values[key] = value;
  return {{"id", a.id},       {"setting", a.setting}, {"settings", a.settings},
          {"label", a.label}, {"values", values},     {"order_seed", a.order_seed}};
}

// In the order `run` has always written it (its keys sorted).
ojson until_decided_json(const UntilDecidedRecord& u) {
  ojson counts = ojson::object();
  for (const auto& [word, n] : u.counts) counts[word] = n;
  return {{"alpha", u.alpha}, {"base", u.base},          {"budget_s", u.budget_s},
          {"cases", u.cases}, {"counts", counts},        {"elapsed_s", u.elapsed_s},
          {"looks", u.looks}, {"max_looks", u.max_looks}};
}

ojson topology_record_json(const TopologyRecord& t) {
  ojson j = t.summary;
  if (t.xml) j["xml"] = *t.xml;
  return j;
}

ojson config_json(const ConfigRecord& c) {
  ojson j = ojson::object();
  if (c.path) j["path"] = *c.path;
  if (c.name) j["name"] = *c.name;
  if (c.document) j["document"] = *c.document;
  for (const auto& [key, v] : c.other.items()) j[key] = v;
  return j;
}

void put(ojson& j, const char* key, const std::optional<ojson>& v) {
  if (v) j[key] = *v;
}

}  // namespace

int64_t json_int_in(const json& v, const std::string& what, int64_t lo, int64_t hi) {
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    throw E(what + " is " + v.dump().substr(0, 40) + ", not an integer in [" + std::to_string(lo) +
            ", " + std::to_string(hi) + "]");
  return v.get<int64_t>();
}

ResultSetDoc read_result_set_doc(const json& doc) {
  check_header(doc);
  ResultSetDoc d;
  d.schema = doc["schema"];
  d.schema_version = doc["schema_version"].get<int64_t>();
  const auto& readers = member_readers();
  for (const auto& [key, v] : doc.items()) {
    const auto it = readers.find(key);
    if (it == readers.end())
      d.extra[key] = v;
    else
      it->second(d, v);
  }
  return d;
}

ojson result_set_json(const ResultSetDoc& d) {
  ojson j;
  j["schema"] = d.schema;
  j["schema_version"] = d.schema_version;
  if (d.complete) j["complete"] = *d.complete;
  put(j, "context", d.context);
  put(j, "benchmarks", d.benchmarks);
  if (d.run) {
    j["run"] = {{"order", d.run->order}, {"order_seed", d.run->order_seed}};
    if (!d.run->command.empty()) j["run"]["command"] = d.run->command;
  }
  if (d.ab) j["ab"] = ab_json(*d.ab);
  if (d.until_decided) j["until_decided"] = until_decided_json(*d.until_decided);
  put(j, "environment", d.environment);
  if (d.topology) j["topology"] = topology_record_json(*d.topology);
  if (d.config) j["config"] = config_json(*d.config);
  put(j, "predictions", d.predictions);
  put(j, "noise", d.noise);
  j["cases"] = d.cases;
  if (d.decisions)
    j["decisions"] = {{"file", d.decisions->file},
                      {"sha256", d.decisions->sha256},
                      {"lines", d.decisions->lines}};
  for (const auto& [key, v] : d.extra.items()) j[key] = v;
  return j;
}

}  // namespace wb
