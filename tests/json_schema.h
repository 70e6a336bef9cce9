// The subset of JSON Schema (draft 2020-12) that docs/result-set.schema.json is written in: type
// (a name or a list), properties, required, items, enum, additionalProperties (false or a schema)
// and $defs with local "#/$defs/NAME" $refs; every other keyword (description, title) is prose.
// The lab's Python reader checks sets with the same subset (runners/lab/wblab/resultset.py).
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "tests/support.h"

namespace wb::test {

class JsonSchema {
 public:
  explicit JsonSchema(nlohmann::json schema) : root_(std::move(schema)) {}

  // The first place `v` breaks the schema, in one line ("$.cases[0]: missing \"status\""); ""
  // when it holds to it.
  std::string violation(const nlohmann::json& v) const { return check(root_, v, "$"); }

 private:
  static bool is_type(const nlohmann::json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    if (t == "integer") return v.is_number_integer();
    if (t == "number") return v.is_number();
    throw std::invalid_argument("the schema names an unknown type " + t);
  }

  const nlohmann::json& resolve(const nlohmann::json& s) const {
    if (!s.contains("$ref")) return s;
    return root_.at("$defs").at(s["$ref"].get<std::string>().substr(sizeof("#/$defs/") - 1));
  }

  std::string check(const nlohmann::json& schema, const nlohmann::json& v,
                    const std::string& at) const {
    const nlohmann::json& s = resolve(schema);
    if (s.contains("type")) {
      const auto types = s["type"].is_string() ? nlohmann::json::array({s["type"]}) : s["type"];
      if (std::none_of(types.begin(), types.end(), [&](const auto& t) { return is_type(v, t); }))
        return at + " is " + v.type_name() + ", not " + types.dump();
    }
    if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end())
      return at + " is " + v.dump().substr(0, 40) + ", not one of " + s["enum"].dump();
    for (std::size_t i = 0; v.is_array() && s.contains("items") && i < v.size(); ++i)
      if (auto why = check(s["items"], v[i], at + "[" + std::to_string(i) + "]"); !why.empty())
        return why;
    return v.is_object() ? check_object(s, v, at) : "";
  }

  std::string check_object(const nlohmann::json& s, const nlohmann::json& v,
                           const std::string& at) const {
    for (const auto& key : s.value("required", nlohmann::json::array()))
      if (!v.contains(key)) return at + ": missing " + key.dump();
    static const nlohmann::json kOpen = true, kNone = nlohmann::json::object();
    const nlohmann::json& extra =
        s.contains("additionalProperties") ? s["additionalProperties"] : kOpen;
    const nlohmann::json& props = s.contains("properties") ? s["properties"] : kNone;
    for (const auto& [key, x] : v.items()) {
      const nlohmann::json& sub = props.contains(key) ? props[key] : extra;
      if (sub == false) return at + ": unknown key \"" + key + "\"";
      if (sub.is_object())
        if (auto why = check(sub, x, at + "." + key); !why.empty()) return why;
    }
    return "";
  }

  nlohmann::json root_;
};

// docs/result-set.schema.json.
inline const JsonSchema& result_set_schema() {
  static const JsonSchema schema(
      nlohmann::json::parse(slurp(std::string(WB_SOURCE_DIR) + "/docs/result-set.schema.json")));
  return schema;
}

}  // namespace wb::test
