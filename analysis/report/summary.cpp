#include "analysis/report/summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "analysis/predict/predict_results.h"
#include "analysis/results/case_view.h"
#include "analysis/results/resultset_io.h"
#include "common/schema/placement.h"
#include "common/util/text.h"

namespace wb {

namespace {

// A counter per round trip: integers as they are, small values with two decimals.
std::string fmt_count(const std::map<std::string, std::optional<double>>& side,
                      const std::string& event) {
  auto it = side.find(event);
  if (it == side.end() || !it->second) return "n/a";
  char buf[32];
  const double x = *it->second;
  std::snprintf(buf, sizeof buf, x >= 100 ? "%.0f" : "%.2f", x);
  return buf;
}

// For a claim about `policy`: where the model puts the wakee of kernel-placed case `c` under that
// policy and under mainline, with the predicted RTT (costed from the pinned cases of c's own
// params), from the set's predictions (one entry per kernel-placed case); "" when they hold no
// entry for c.
std::string claim_prediction(const ResultsPrediction& p, const std::string& policy,
                             const CaseView& c) {
  for (const CasePrediction& e : p.cases) {
    if (e.label != c.name || e.skipped) continue;
    std::string out = "  model for " + c.name + ":";
    std::vector<std::string> ids = {policy};
    if (policy != "mainline") ids.push_back("mainline");
    for (const std::string& id : ids) {
      const auto pp =
          std::find_if(e.policies.begin(), e.policies.end(),
                       [&](const PolicyPrediction& x) { return x.steady.policy == id; });
      if (pp == e.policies.end()) continue;
      out += (id == ids.front() ? " " : "; ") + id + " " +
             classes_text(class_shares(pp->steady.classes));
      if (pp->rtt_ns)
        out += " (" + us_figure(*pp->rtt_ns) + " us)";
      else if (!pp->missing.empty())
        out += " (" + pp->unpriced + ")";
    }
    return out + "\n";
  }
  return "";
}

// The cases' marked repetitions (docs/result-set.md#blocked) under their heading, within 100
// columns; "" when none is marked.
std::string marked_block(const std::vector<CaseView>& cases) {
  std::string out;
  for (const CaseView& c : cases)
    if (const std::string t = marked_text(c); !t.empty()) out += wrap(t, "  ");
  return out.empty() ? "" : "\n" + marked_heading() + "\n" + out;
}

// A matrix run of more than kMatrixRows cells per column is one row: the range of the cells'
// medians (the report draws the map).
constexpr size_t kMatrixRows = 16;

// The columns (mechanism/mode) whose matrix run is one row, with their number of cells.
std::map<std::string, size_t> large_matrices(const std::vector<CaseView>& cases) {
  std::map<std::string, size_t> cells;
  for (const CaseView& c : cases)
    if (c.kind == PlacementKind::kMatrix) ++cells[c.mech_mode()];
  std::erase_if(cells, [](const auto& column) { return column.second <= kMatrixRows; });
  return cells;
}

bool in_large_matrix(const CaseView& c, const std::map<std::string, size_t>& large) {
  return c.kind == PlacementKind::kMatrix && large.count(c.mech_mode()) > 0;
}

std::string matrix_row(size_t cells) { return "matrix (" + std::to_string(cells) + " cells)"; }

// A case's row: its large matrix's, else the case name after mechanism/mode (placement plus knob
// and pair suffixes).
std::string summary_row(const CaseView& c, const std::map<std::string, size_t>& large) {
  return in_large_matrix(c, large) ? matrix_row(large.at(c.mech_mode())) : c.row();
}

void add_unique(std::vector<std::string>& list, const std::string& s) {
  if (std::find(list.begin(), list.end(), s) == list.end()) list.push_back(s);
}

// Columns in the order of their first case.
std::vector<std::string> summary_columns(const std::vector<CaseView>& cases) {
  std::vector<std::string> columns;
  for (const CaseView& c : cases) add_unique(columns, c.mech_mode());
  return columns;
}

// Rows by placement_rank (of their last case), rows of equal rank in the order of their first.
std::vector<std::string> summary_rows(const std::vector<CaseView>& cases,
                                      const std::map<std::string, size_t>& large) {
  std::vector<std::string> rows;
  std::map<std::string, int> rank;
  for (const CaseView& c : cases) {
    const std::string row = summary_row(c, large);
    add_unique(rows, row);
    rank[row] = placement_rank(c);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const std::string& a, const std::string& b) { return rank[a] < rank[b]; });
  return rows;
}

// The cell of a case outside a large matrix: "median / p99" RTT, or with `show` that counter per
// round trip, "waker / wakee"; "-" when skipped, "FAILED" when failed.
std::string case_cell(const CaseView& c, const std::string& show) {
  if (c.ok() && !show.empty()) {
    const CounterView& k = c.counters;
    if (!k.recorded || k.unavailable.count(show)) return "n/a";
    return fmt_count(k.side[0], show) + " / " + fmt_count(k.side[1], show);
  }
  if (c.ok())
    return us_figure(*c.rtt.get("median")) + " / " + us_figure(c.rtt.get("p99").value_or(0));
  return c.status == CaseStatus::kSkipped ? "-" : "FAILED";
}

using Cells = std::map<std::pair<std::string, std::string>, std::string>;  // (row, column) -> text

// Every cell; a large matrix's is the range of its ok cells' medians, "FAILED" when none is ok.
Cells summary_cells(const std::vector<CaseView>& cases, const std::string& show,
                    const std::map<std::string, size_t>& large) {
  Cells cells;
  std::map<std::string, std::vector<double>> medians;  // column -> its matrix's ok medians
  for (const CaseView& c : cases) {
    if (!in_large_matrix(c, large))
      cells[{c.row(), c.mech_mode()}] = case_cell(c, show);
    else if (c.ok())
      medians[c.mech_mode()].push_back(*c.rtt.get("median"));
  }
  for (const auto& [column, count] : large) {
    const std::vector<double>& m = medians[column];
    const auto [lo, hi] = std::minmax_element(m.begin(), m.end());
    cells[{matrix_row(count), column}] =
        m.empty() ? "FAILED" : us_figure(*lo) + " .. " + us_figure(*hi);
  }
  return cells;
}

// Why a case has no figure, or no count of `show`; "" when it has them. An unavailable class is
// one note per row, anything else a note per case; a large matrix's cell is a note per case.
std::string case_note(const CaseView& c, const std::string& show,
                      const std::map<std::string, size_t>& large) {
  if (in_large_matrix(c, large))
    return c.ok() ? ""
                  : c.name + ": " + std::string(status_id(c.status)) + ": " +
                        nlohmann::json(c.reason).dump();
  if (c.ok()) {
    const CounterView& k = c.counters;
    if (show.empty() || !k.recorded) return "";
    if (k.unavailable.count(show)) return show + ": " + k.unavailable.at(show);
    return k.notes.count(show) ? show + ": " + k.notes.at(show) : "";
  }
  if (c.status == CaseStatus::kFailed) return c.name + ": FAILED: " + c.reason;
  return (c.reason.rfind("unavailable", 0) == 0 ? c.row() : c.name) + ": " + c.reason;
}

// The cases' notes in case order, each once, indented.
std::vector<std::string> summary_notes(const std::vector<CaseView>& cases, const std::string& show,
                                       const std::map<std::string, size_t>& large) {
  std::vector<std::string> notes;
  std::set<std::string> seen;
  for (const CaseView& c : cases)
    if (const std::string note = case_note(c, show, large);
        !note.empty() && seen.insert(note).second)
      notes.push_back("  " + note);
  return notes;
}

// The grid as tables of at most 100 columns, as many columns each as fit; a table leaves out the
// rows with no cell in its columns.
std::string summary_grid(const std::vector<std::string>& columns,
                         const std::vector<std::string>& rows, const Cells& cells) {
  size_t row_w = 9;
  for (const auto& r : rows) row_w = std::max(row_w, r.size());
  const size_t cell_w = 19;
  const size_t per_table = std::max<size_t>(1, (kTextWidth - row_w - 2) / (cell_w + 1));
  std::ostringstream out;
  for (size_t first = 0; first < columns.size(); first += per_table) {
    const size_t last = std::min(columns.size(), first + per_table);
    out << "\n" << align_left("placement", row_w) << " ";
    for (size_t c = first; c < last; ++c) out << " " << align_right(columns[c], cell_w);
    out << "\n" << std::string(row_w + 1 + (last - first) * (cell_w + 1), '-') << "\n";
    for (const auto& r : rows) {
      bool any = false;
      for (size_t c = first; c < last; ++c) any |= cells.count({r, columns[c]}) > 0;
      if (!any) continue;
      out << align_left(r, row_w) << " ";
      for (size_t c = first; c < last; ++c) {
        auto it = cells.find({r, columns[c]});
        out << " " << align_right(it == cells.end() ? "" : it->second, cell_w);
      }
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace

std::string summary_table(const ResultSet& rs, const std::string& show) {
  const std::vector<CaseView>& cases = rs.views;
  const std::map<std::string, size_t> large = large_matrices(cases);
  std::ostringstream out;
  if (show.empty())
    out << "RTT median / p99 in microseconds (";
  else
    out << show << " per round trip, waker / wakee (";
  const std::string& host = rs.machine.hostname;
  out << nlohmann::json(host.empty() ? "this machine" : host).dump() << ")\n"
      << summary_grid(summary_columns(cases), summary_rows(cases, large),
                      summary_cells(cases, show, large));
  if (!large.empty())
    out << "matrix rows: lowest .. highest median RTT of the ok cells; `wakebench report` draws "
           "the CPU x CPU map\n";
  const std::vector<std::string> notes = summary_notes(cases, show, large);
  if (!notes.empty()) {
    out << (show.empty() ? "\nnot measured:\n" : "\nnot measured / not counted:\n");
    for (const auto& n : notes) out << n << "\n";
  }
  out << marked_block(cases);
  return out.str();
}

namespace {

// Where a kernel-placed case's wakee ran, "llc 64% same-cpu 36%"; a pinned case's class.
std::string placement_text(const CaseView& c) {
  if (c.kind != PlacementKind::kKernel)
    return c.cls ? "pinned " + std::string(class_id(*c.cls)) : "pinned";
  double total = 0;
  for (const auto& [cls, n] : c.observed.histogram) total += n;
  if (total <= 0) return "no placement recorded";
  auto hist = c.observed.histogram;  // most round trips first
  std::stable_sort(hist.begin(), hist.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [cls, n] : hist) parts.push_back(cls + " " + fmt("%.0f", 100 * n / total) + "%");
  return join(parts, " ");
}

}  // namespace

std::string claims_table(const ResultSet& rs, const ResultsPrediction* predictions) {
  if (rs.claims.empty()) return "";
  std::map<std::string, const CaseView*> by_name;
  for (const CaseView& c : rs.views) by_name[c.name] = &c;
  std::ostringstream out;
  out << "The seed's claims, and this machine's counterparts:\n";
  const bool emulated = rs.machine.emulated;
  for (const Claim& claim : rs.claims) {
    const std::string& metric = claim.metric;
    const std::string& policy = claim.policy;
    out << "\nseed " << claim.seed << (policy.empty() ? "" : " (" + policy + ")") << ": "
        << claim.text;
    if (emulated && claim.needs_hardware)
      out << "\n  needs hardware: this set's timings are emulated, so they do not test it";
    out << "\n  here ("
        << (metric == "tps"         ? "transactions/s"
            : metric == "placement" ? "where the wakee ran"
                                    : metric + " RTT")
        << "):";
    for (const std::string& name : claim.cases) {
      out << "\n    " << align_left(name, 40) << " ";
      auto it = by_name.find(name);
      if (it == by_name.end()) {
        out << "not run (filtered out?)";
        continue;
      }
      const CaseView& c = *it->second;
      const std::optional<double> v = metric == "tps" ? c.tps : c.rtt.get(metric);
      if (!c.ok())
        out << status_id(c.status) << ": " << c.reason;
      else if (metric == "placement")
        out << placement_text(c);
      else if (!v)
        out << "no " << metric;
      else if (metric == "tps")
        out << static_cast<int64_t>(*v);
      else
        out << us_figure(*v) << " us";
    }
    out << "\n";
    // The model's word on the claim's patch, for each kernel-placed case it names.
    if (policy.empty() || !predictions) continue;
    for (const std::string& name : claim.cases) {
      auto it = by_name.find(name);
      if (it != by_name.end() && it->second->kind == PlacementKind::kKernel)
        out << claim_prediction(*predictions, policy, *it->second);
    }
  }
  return out.str();
}

}  // namespace wb
