#include "runners/summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "analysis/predict.h"
#include "common/placement.h"

namespace wb {

namespace {

std::string fmt_us(double ns) {
  char buf[32];
  const double us = ns / 1000.0;
  std::snprintf(buf, sizeof buf, us < 10 ? "%.2f" : us < 100 ? "%.1f" : "%.0f", us);
  return buf;
}

// Row order: the classes in docs/result-set.md order, then kernel placements as they come.
int row_rank(const std::string& placement) {
  for (size_t i = 0; i < kAllClasses.size(); ++i)
    if (placement.rfind(std::string(class_id(kAllClasses[i])), 0) == 0) return static_cast<int>(i);
  return 100;
}

std::string pad(const std::string& s, size_t w, bool right = false) {
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

// A counter per round trip: integers as they are, small values with two decimals.
std::string fmt_count(const nlohmann::json& v) {
  if (!v.is_number()) return "n/a";
  char buf[32];
  const double x = v.get<double>();
  std::snprintf(buf, sizeof buf, x >= 100 ? "%.0f" : "%.2f", x);
  return buf;
}

// For a claim about `policy`: where the model puts the wakee of kernel-placed case `c` under that
// policy and under mainline, with the predicted RTT, from the result set's predictions (one entry
// per mechanism, mode and kernel placement); "" when they hold no such entry.
std::string claim_prediction(const nlohmann::json& rs, const std::string& policy,
                             const nlohmann::json& c) {
  const auto& p = rs.value("predictions", nlohmann::json());
  if (!p.is_object() || !p.contains("mechanisms")) return "";
  for (const auto& m : p["mechanisms"]) {
    if (m.value("mechanism", "") != c.value("mechanism", "") ||
        m.value("mode", "") != c.value("mode", "") ||
        m.value("placement", "") != c.value("placement", "") || !m.contains("policies"))
      continue;
    std::string out = "  model for " + c.value("name", "") + ":";
    std::vector<std::string> ids = {policy};
    if (policy != "mainline") ids.push_back("mainline");
    for (const std::string& id : ids) {
      if (!m["policies"].contains(id)) continue;
      const auto& pp = m["policies"][id];
      out += (id == ids.front() ? " " : "; ") + id + " " +
             classes_text(pp.value("classes", nlohmann::json::object()));
      if (pp.contains("predicted_rtt_ns") && pp["predicted_rtt_ns"].is_number())
        out += " (" + fmt_us(pp["predicted_rtt_ns"].get<double>()) + " us)";
    }
    return out + "\n";
  }
  return "";
}

}  // namespace

std::string summary_table(const nlohmann::json& rs, const std::string& show) {
  std::vector<std::string> columns, rows;
  std::map<std::pair<std::string, std::string>, std::string> cells;
  std::vector<std::string> notes;
  std::set<std::string> seen_notes;
  // A matrix run of more than kMatrixRows cells per column is one row: the range of the cells'
  // medians (the report draws the map).
  constexpr size_t kMatrixRows = 16;
  std::map<std::string, std::vector<double>> matrix;  // column -> medians of its ok cells
  std::map<std::string, size_t> matrix_cells;
  for (const auto& c : rs.at("cases"))
    if (c.value("placement", "").rfind("cpu:", 0) == 0)
      ++matrix_cells[c.at("mechanism").get<std::string>() + "/" + c.at("mode").get<std::string>()];
  for (const auto& c : rs.at("cases")) {
    const std::string col =
        c.at("mechanism").get<std::string>() + "/" + c.at("mode").get<std::string>();
    if (matrix_cells[col] > kMatrixRows && c.value("placement", "").rfind("cpu:", 0) == 0) {
      const std::string row = "matrix (" + std::to_string(matrix_cells[col]) + " cells)";
      if (std::find(columns.begin(), columns.end(), col) == columns.end()) columns.push_back(col);
      if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
      auto& medians = matrix[col];
      if (c.at("status") == "ok") medians.push_back(c["rtt_ns"]["median"].get<double>());
      const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
      cells[{row, col}] = medians.empty() ? "FAILED" : fmt_us(*lo) + " .. " + fmt_us(*hi);
      if (c.at("status") != "ok") {
        const std::string why = c.at("name").get<std::string>() + ": " +
                                c.at("status").get<std::string>() + ": " +
                                c.value("reason", nlohmann::json("")).dump();
        if (seen_notes.insert(why).second) notes.push_back("  " + why);
      }
      continue;
    }
    // Row: the case name after mechanism/mode (placement plus knob and pair suffixes).
    const std::string name = c.at("name").get<std::string>();
    const std::string row = name.substr(col.size() + 1);
    if (std::find(columns.begin(), columns.end(), col) == columns.end()) columns.push_back(col);
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
    const std::string status = c.at("status").get<std::string>();
    std::string cell;
    if (status == "ok" && !show.empty()) {
      const auto& k = c["counters"];
      if (k.is_object() && k["unavailable"].contains(show)) {
        cell = "n/a";
        const std::string note = show + ": " + k["unavailable"][show].get<std::string>();
        if (seen_notes.insert(note).second) notes.push_back("  " + note);
      } else if (k.is_object()) {
        cell = fmt_count(k["waker"].value(show, nlohmann::json())) + " / " +
               fmt_count(k["wakee"].value(show, nlohmann::json()));
      } else {
        cell = "n/a";
      }
    } else if (status == "ok") {
      cell = fmt_us(c["rtt_ns"]["median"].get<double>()) + " / " +
             fmt_us(c["rtt_ns"]["p99"].get<double>());
    } else {
      cell = status == "skipped" ? "-" : "FAILED";
      const std::string reason = c["reason"].is_string() ? c["reason"].get<std::string>() : "";
      // An unavailable class is one note per row; anything else is a note per case.
      const std::string note = status == "failed"                    ? name + ": FAILED: " + reason
                               : reason.rfind("unavailable", 0) == 0 ? row + ": " + reason
                                                                     : name + ": " + reason;
      if (seen_notes.insert(note).second) notes.push_back("  " + note);
    }
    cells[{row, col}] = cell;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const std::string& a, const std::string& b) {
    return row_rank(a) < row_rank(b);
  });
  size_t row_w = 9;
  for (const auto& r : rows) row_w = std::max(row_w, r.size());
  const size_t cell_w = 19;
  const size_t per_table = std::max<size_t>(1, (100 - row_w - 2) / (cell_w + 1));
  std::ostringstream out;
  if (show.empty())
    out << "RTT median / p99 in microseconds (";
  else
    out << show << " per round trip, waker / wakee (";
  out << rs.value("/environment/hostname"_json_pointer, nlohmann::json("this machine")).dump()
      << ")\n";
  for (size_t first = 0; first < columns.size(); first += per_table) {
    const size_t last = std::min(columns.size(), first + per_table);
    out << "\n" << pad("placement", row_w) << " ";
    for (size_t c = first; c < last; ++c) out << " " << pad(columns[c], cell_w, true);
    out << "\n" << std::string(row_w + 1 + (last - first) * (cell_w + 1), '-') << "\n";
    for (const auto& r : rows) {
      bool any = false;
      for (size_t c = first; c < last; ++c) any |= cells.count({r, columns[c]}) > 0;
      if (!any) continue;
      out << pad(r, row_w) << " ";
      for (size_t c = first; c < last; ++c) {
        auto it = cells.find({r, columns[c]});
        out << " " << pad(it == cells.end() ? "" : it->second, cell_w, true);
      }
      out << "\n";
    }
  }
  if (!matrix.empty())
    out << "matrix rows: lowest .. highest median RTT of the ok cells; `wakebench report` draws "
           "the CPU x CPU map\n";
  if (!notes.empty()) {
    out << (show.empty() ? "\nnot measured:\n" : "\nnot measured / not counted:\n");
    for (const auto& n : notes) out << n << "\n";
  }
  return out.str();
}

std::string claims_table(const nlohmann::json& rs) {
  const auto* claims = &rs["config"]["document"];
  if (!claims->contains("claims")) return "";
  std::map<std::string, const nlohmann::json*> by_name;
  for (const auto& c : rs.at("cases")) by_name[c.at("name").get<std::string>()] = &c;
  std::ostringstream out;
  out << "The seed's claims, and this machine's counterparts:\n";
  for (const auto& claim : (*claims)["claims"]) {
    const std::string metric = claim.value("metric", "median");
    const std::string policy = claim.value("policy", "");
    out << "\nseed " << claim["seed"].get<std::string>()
        << (policy.empty() ? "" : " (" + policy + ")") << ": " << claim["text"].get<std::string>()
        << "\n  here (" << (metric == "tps" ? "transactions/s" : metric + " RTT") << "):";
    for (const auto& name : claim["cases"]) {
      out << "\n    " << pad(name.get<std::string>(), 40) << " ";
      auto it = by_name.find(name.get<std::string>());
      if (it == by_name.end()) {
        out << "not run (filtered out?)";
      } else if ((*it->second)["status"] != "ok") {
        out << (*it->second)["status"].get<std::string>() << ": "
            << (*it->second)["reason"].get<std::string>();
      } else if (metric == "tps") {
        const auto& tps = (*it->second)["tps"];
        out << (tps.is_number() ? std::to_string(static_cast<int64_t>(tps.get<double>()))
                                : std::string("no tps"));
      } else {
        out << fmt_us((*it->second)["rtt_ns"][metric].get<double>()) << " us";
      }
    }
    out << "\n";
    // The model's word on the claim's patch, for its first kernel-placed case.
    if (policy.empty()) continue;
    for (const auto& name : claim["cases"]) {
      auto it = by_name.find(name.get<std::string>());
      if (it == by_name.end() || it->second->value("placement", "").rfind("kernel", 0) != 0)
        continue;
      out << claim_prediction(rs, policy, *it->second);
      break;
    }
  }
  return out.str();
}

}  // namespace wb
