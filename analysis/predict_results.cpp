// `wakebench predict --results R.json` and the predictions block of `wakebench run`: for every
// kernel-placed case of a result set, each policy's steady-state placement (docs/policy-model.md
// section 10) priced with the RTT measured pinned on each class at the case's own params, held
// against what the case measured, plus each patch's premise on this machine, per params point.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "analysis/mix.h"
#include "analysis/predict.h"
#include "analysis/resultset_io.h"
#include "common/registry.h"

namespace wb {

namespace {

using nlohmann::json;

// A kernel histogram is "consistent" with a group when its class distribution is at most this
// total-variation distance (0.5 * sum |p - q|) from the group's prediction, or from a mix of its
// steady state and one alternative where the prediction is uncertain: the model has no
// delayed-dequeue or wakelist races (section 2), which move a minority of wakes, not the bulk.
constexpr double kConsistentDistance = 0.25;

// Wake flags a mechanism carries on a real kernel (section 4), used when a case lacks the tag.
std::optional<std::string> default_wake_flags(const std::string& mechanism) {
  const MechanismEntry* m = registry().find_mechanism(mechanism);
  if (!m || m->no_kernel_wakeup) return std::nullopt;
  return std::string(wake_flags_id(m->wake_flags));
}

// Why a mechanism's tasks never block ("busy-poll"); nullopt: they block (or it is unknown).
std::optional<std::string> no_kernel_wakeup(const std::string& mechanism) {
  const MechanismEntry* m = registry().find_mechanism(mechanism);
  return m ? m->no_kernel_wakeup : std::nullopt;
}

double round2(double v) { return std::round(v * 100.0) / 100.0; }
double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// The cases of one params point: one mechanism and mode at one set of knob values
// (CaseView::same_point). A kernel case is predicted and costed from its own point's pinned cases.
struct Point {
  std::vector<const CaseView*> cases;
  std::map<std::string, double> pinned;  // class -> median of its first ok pinned case
  std::optional<std::string> flags;      // wake flags
  std::optional<double> kernel_rtt;      // the default-cpuset kernel case's median, else the first
  const CaseView& first() const { return *cases.front(); }
  // "pipe/threads/work=500ns", "binder-like/processes/w2s4", "pipe/threads" at the defaults.
  std::string label() const { return first().mech_mode() + first().suffix; }
  std::optional<double> pinned_at(const std::string& cls) const {
    auto it = pinned.find(cls);
    if (it == pinned.end()) return std::nullopt;
    return it->second;
  }
  // Why class `cls` has no cost here: "n/a: no pinned llc case with work=10000ns", or what
  // happened to that pinned case. Never another point's cost.
  std::string no_cost(const std::string& cls) const {
    const std::string what = "pinned " + cls + " case with " + params_text(first().params);
    for (const CaseView* c : cases)
      if (c->kind == PlacementKind::kPinned && class_id(*c->cls) == cls && !c->ok())
        return "n/a: " + what + " " + std::string(status_id(c->status)) +
               (c->reason.empty() ? "" : ": " + c->reason);
    return "n/a: no " + what;
  }
};

ClassShares distribution(const json& histogram) {
  ClassShares out;
  double total = 0;
  for (const auto& [c, n] : histogram.items()) {
    if (n.is_number()) total += n.get<double>();
  }
  if (total <= 0) return out;
  for (const auto& [c, n] : histogram.items()) {
    if (n.is_number() && n.get<double>() > 0) out[c] = n.get<double>() / total;
  }
  return out;
}

// How far the observed distribution is from a steady_to_json policy: its steady state alone and the
// closest mix with its alternatives (analysis/mix.h).
RangeFit fit_policy(const ClassShares& observed, const json& policy) {
  std::vector<ClassShares> alternatives;
  if (policy.contains("uncertain"))
    for (const auto& a : policy["uncertain"]["alternatives"])
      alternatives.push_back(a["classes"].get<ClassShares>());
  return closest_in_range(observed, policy["classes"].get<ClassShares>(), alternatives);
}

json fit_json(const RangeFit& f) {
  return {{"strict", round3(f.strict)},
          {"best", round3(f.best)},
          {"share", round3(f.share)},
          {"alternative", f.alternative ? json(*f.alternative) : json(nullptr)},
          {"weights", [&] {
             json w = json::array();
             for (double x : f.weights) w.push_back(round3(x));
             return w;
           }()}};
}

// Premise check at one params point: is `a` cheaper than `b` (medians of that point's cases).
json compare(const Point& pt, const std::string& a_label, std::optional<double> a,
             const std::string& b_label, std::optional<double> b) {
  json j = {{"case", pt.label()},
            {"mechanism", pt.first().mechanism},
            {"mode", std::string(mode_id(pt.first().mode))},
            {"params", pt.first().params_json},
            {"a", a_label},
            {"b", b_label}};
  j["a_rtt_ns"] = a ? json(*a) : json(nullptr);
  j["b_rtt_ns"] = b ? json(*b) : json(nullptr);
  if (a && b && *b > 0) {
    j["saving_ns"] = round2(*b - *a);
    j["saving_pct"] = round2(100.0 * (*b - *a) / *b);
    j["holds"] = *a < *b;
  }
  return j;
}

// Why a class has no measurement: the skipped case's reason, else the topology's.
std::string missing_reason(const SchedTopology& sched, const std::vector<CaseView>& views,
                           const std::string& cls) {
  for (const CaseView& c : views)
    if (c.kind == PlacementKind::kPinned && class_id(*c.cls) == cls && !c.ok() && !c.reason.empty())
      return c.reason;
  for (const auto& cp : choose_pairs(sched.topology())) {
    if (std::string(class_id(cp.cls)) == cls && !cp.available) return cp.reason;
  }
  return "no ok " + cls + " case in the result set";
}

json predict(const json& rs, const std::vector<CaseView>& views) {
  if (!rs.contains("topology") || !rs["topology"].is_object() || !rs["topology"].contains("xml") ||
      !rs["topology"]["xml"].is_string()) {
    throw std::invalid_argument("result set: no embedded topology XML at topology.xml");
  }
  std::string source = rs["topology"].value("source", std::string("result set"));
  SchedTopology sched(Topology::from_xml_buffer(rs["topology"]["xml"].get<std::string>(), source));

  std::vector<Point> points;
  for (const CaseView& c : views) {
    auto it = std::find_if(points.begin(), points.end(),
                           [&](const Point& p) { return p.first().same_point(c); });
    if (it == points.end()) {
      points.push_back({});
      it = points.end() - 1;
    }
    it->cases.push_back(&c);
  }

  // A guest under qemu TCG (environment.emulated, set by the lab) switches tasks out slowly next
  // to its partner's reaction (docs/policy-model.md#switching-out).
  const bool emulated = rs.contains("environment") && rs["environment"].is_object() &&
                        rs["environment"].value("emulated", false) == true;
  json entries = json::array();
  for (Point& pt : points) {
    const CaseView& first = pt.first();
    const std::string mode(mode_id(first.mode));
    std::vector<const CaseView*> kernel_cases;
    for (const CaseView* c : pt.cases) {
      if (c->wake_flags && !pt.flags) pt.flags = c->wake_flags;
      if (c->kind == PlacementKind::kKernel) {
        kernel_cases.push_back(c);
        // The premises compare with the default-cpuset kernel case when there are several.
        if (c->ok() && (c->placement == "kernel" || !pt.kernel_rtt))
          pt.kernel_rtt = c->rtt.get("median");
      } else if (c->kind == PlacementKind::kPinned && c->ok()) {
        pt.pinned.try_emplace(std::string(class_id(*c->cls)), *c->rtt.get("median"));
      }
    }
    if (!pt.flags) pt.flags = default_wake_flags(first.mechanism);
    const std::optional<std::string>& flags = pt.flags;
    if (kernel_cases.empty()) kernel_cases.push_back(nullptr);  // predicted, not measured

    for (const CaseView* kc : kernel_cases) {
      const std::string placement = kc ? kc->placement : "kernel";
      json e = {{"case", kc ? kc->name : pt.label()},
                {"mechanism", first.mechanism},
                {"mode", mode},
                {"placement", placement},
                {"params", first.params_json}};
      json pj = json::object();
      for (const auto& [cls, m] : pt.pinned) pj[cls] = m;
      e["pinned_rtt_ns"] = pj;
      const std::optional<std::string> busy = no_kernel_wakeup(first.mechanism);
      if (busy || !flags || (*flags != "sync" && *flags != "none" && *flags != "current-cpu")) {
        e["skipped"] = busy ? *busy + ": no kernel wakeup to model"
                            : "no kernel wakeup to model (wake_flags " +
                                  (flags ? *flags : std::string("unknown")) + ")";
        entries.push_back(e);
        continue;
      }
      e["wake_flags"] = *flags;
      SteadyOptions opt;
      opt.sync = *flags == "sync";
      opt.current_cpu = *flags == "current-cpu";
      opt.slow_switch_out = emulated;
      if (kc) {
        const KernelSetup k = kernel_setup(*kc, sched.topology());
        opt.allowed = k.allowed;
        if (k.start) std::tie(opt.start_a, opt.start_b) = *k.start;
      }
      auto results = simulate_steady_state(sched, opt);
      json steady = steady_to_json(sched, opt, results);
      e["start"] = steady["start"];
      e["allowed"] = steady["allowed"];

      json policies = json::object();
      for (auto& [id, r] : steady["policies"].items()) {
        json p = {{"classes", r["classes"]},
                  {"cpus", r["cpus"]},
                  {"settled", r["settled"]},
                  {"first_paths", r["path"]}};
        // Where one disturbed wake can move the pair instead (steady_to_json): the range.
        if (r.contains("uncertain")) p["uncertain"] = r["uncertain"];
        double rtt = 0;
        json missing = json::array();
        std::string unpriced;
        for (const auto& [cls, f] : r["classes"].items()) {
          if (auto m = pt.pinned_at(cls)) {
            rtt += f.get<double>() * *m;
          } else {
            missing.push_back(cls);
            unpriced += (unpriced.empty() ? "" : "; ") + pt.no_cost(cls);
          }
        }
        p["predicted_rtt_ns"] = missing.empty() ? json(round2(rtt)) : json(nullptr);
        if (!missing.empty()) {
          p["missing_classes"] = missing;
          p["unpriced"] = unpriced;
        }
        policies[id] = p;
      }

      json measured = nullptr;
      ClassShares observed;
      if (kc) {
        measured = {{"status", status_id(kc->status)}};
        if (auto m = kc->rtt.get("median")) measured["rtt_ns"] = *m;
        if (kc->observed.recorded) {
          json h = json::object();
          for (const auto& [cls, n] : kc->observed.histogram) h[cls] = n;
          measured["histogram"] = h;
          observed = distribution(h);
          measured["classes"] = observed;
          if (!kc->observed.migrations_json.is_null())
            measured["migrations"] = kc->observed.migrations_json;
        }
        // --trace-wakeups: how the kernel's wakeups were placed (selection vs the bypasses of
        // section 2, which the model does not take), next to the model's first paths.
        if (const json& t = kc->trace;
            t.is_object() && t.contains("paths") && t["paths"].is_object()) {
          measured["trace"] = {{"wakeups", t.value("wakeups", json(0))},
                               {"paths", t["paths"]},
                               {"dropped", t.value("dropped", json(0))}};
          if (t.contains("classes_by_path"))
            measured["trace"]["classes_by_path"] = t["classes_by_path"];
        }
      }
      e["measured"] = measured;

      // Each policy's distance from the observed placements (analysis/mix.h).
      std::map<std::string, RangeFit> fits;  // unrounded: consistent_with is chosen on these
      if (!observed.empty()) {
        for (auto& [id, p] : policies.items()) {
          fits[id] = fit_policy(observed, steady["policies"][id]);
          p["distance"] = fit_json(fits[id]);
        }
      }
      e["policies"] = policies;

      // A group's members predict the same classes and alternatives (steady_to_json): its first
      // member's price and distance are every member's.
      json gj = json::array();
      std::optional<size_t> best;
      double best_d = 0;
      for (auto g2 : steady["groups"]) {
        json out = {{"name", g2["name"]}, {"policies", g2["policies"]}, {"classes", g2["classes"]}};
        if (g2.contains("alternatives")) out["alternatives"] = g2["alternatives"];
        const std::string first_id = g2["policies"][0].get<std::string>();
        const json& first_policy = policies[first_id];
        out["predicted_rtt_ns"] = first_policy["predicted_rtt_ns"];
        if (first_policy.contains("unpriced")) out["unpriced"] = first_policy["unpriced"];
        if (!observed.empty()) {
          out["distance"] = first_policy["distance"];
          if (const double d = fits.at(first_id).best; !best || d < best_d) {
            best = gj.size();
            best_d = d;
          }
        }
        gj.push_back(out);
      }
      e["groups"] = gj;
      if (observed.empty()) {
        e["consistent_with"] = nullptr;
        e["verdict"] = "no observed kernel placement in the result set";
        entries.push_back(e);
        continue;
      }
      const json& closest = gj[*best];
      const std::string closest_id = closest["policies"][0].get<std::string>();
      const RangeFit& fit = fits.at(closest_id);
      const std::string distance = json(round2(fit.best)).dump();
      if (fit.best <= kConsistentDistance) {
        e["consistent_with"] = closest["name"];
        std::string verdict = "kernel placement consistent with " +
                              closest["name"].get<std::string>() + " (distance " + distance + ")";
        if (fit.alternative) {
          const json& alts = policies[closest_id]["uncertain"]["alternatives"];
          std::string parts;
          for (size_t i = 0; i < fit.weights.size(); ++i) {
            if (fit.weights[i] < 0.005) continue;
            parts += std::string(parts.empty() ? "" : ", ") +
                     std::to_string(std::lround(fit.weights[i] * 100)) + "% of the alternative " +
                     classes_text(alts[i]["classes"]) + " once " +
                     alts[i]["cause"].get<std::string>();
          }
          if (!parts.empty())
            verdict += ", within its uncertain range: " + parts + " (strict distance " +
                       json(round2(fit.strict)).dump() + ")";
        }
        e["verdict"] = verdict;
      } else {
        e["consistent_with"] = nullptr;
        std::string why = "see docs/policy-model.md section 2 bypasses";
        if (measured.is_object() && measured.contains("trace")) {
          const json& t = measured["trace"];
          int64_t n = 0, bypass = 0;
          if (t["wakeups"].is_number_integer()) n = t["wakeups"].get<int64_t>();
          for (const auto& [path, k] : t["paths"].items())
            if (path != "selection" && k.is_number_integer()) bypass += k.get<int64_t>();
          why = "traced: " + std::to_string(bypass) + " of " + std::to_string(n) +
                " wakeups bypassed the selection (docs/policy-model.md section 2)";
        }
        e["verdict"] = "kernel placement matches no policy (closest " +
                       closest["name"].get<std::string>() + ", distance " + distance + "): " + why;
      }
      entries.push_back(e);
    }
  }

  // Each patch's premise with the measured numbers (section 6; the seeds' claims), at each params
  // point apart: pinned cases are only held against cases of the same knob values.
  auto class_premise = [&](const std::string& a, const std::string& b, const std::string& text,
                           const std::string& flags) {
    json checks = json::array();
    for (const Point& pt : points)
      if (pt.flags == flags) checks.push_back(compare(pt, a, pt.pinned_at(a), b, pt.pinned_at(b)));
    json p = {{"premise", text}, {"checks", checks}};
    for (const auto& cls : {a, b}) {
      const bool any = std::any_of(points.begin(), points.end(), [&](const Point& pt) {
        return pt.flags == flags && pt.pinned_at(cls).has_value();
      });
      if (!any) {
        p["not_measurable"] =
            "not measurable here: no " + cls + " class (" + missing_reason(sched, views, cls) + ")";
      }
    }
    if (checks.empty()) p["not_measurable"] = "not measurable here: no " + flags + " mechanism";
    return p;
  };
  json premises = json::object();
  premises["sync-pair"] = class_premise(
      "same-cpu", "llc",
      "sync wakeups: handing off on the waker CPU is cheaper than another core of the LLC", "sync");
  premises["sync-core"] = class_premise(
      "smt-sibling", "llc",
      "sync wakeups: the waker's SMT sibling is cheaper than another core of the LLC", "sync");
  premises["sync-core-v2"] = premises["sync-core"];
  // sync-2017 and current-cpu: stacking on the waker vs what the running kernel chose.
  auto kernel_premise = [&](const std::string& text, auto want) {
    json checks = json::array();
    for (const Point& pt : points)
      if (pt.flags && want(pt.first().mechanism, *pt.flags))
        checks.push_back(
            compare(pt, "same-cpu", pt.pinned_at("same-cpu"), "kernel", pt.kernel_rtt));
    json p = {{"premise", text}, {"checks", checks}};
    if (checks.empty()) {
      p["not_measurable"] = "not measurable here: no matching mechanism";
    } else if (std::none_of(checks.begin(), checks.end(),
                            [](const json& c) { return c["a_rtt_ns"].is_number(); })) {
      p["not_measurable"] = "not measurable here: no same-cpu class (" +
                            missing_reason(sched, views, "same-cpu") + ")";
    }
    return p;
  };
  premises["sync-2017"] =
      kernel_premise("sync wakeups: the waker CPU is cheaper than the kernel's choice",
                     [](const std::string&, const std::string& f) { return f == "sync"; });
  premises["current-cpu"] =
      kernel_premise("futex handoff: the waker CPU is cheaper than the kernel's choice",
                     [](const std::string& m, const std::string&) {
                       const MechanismEntry* e = registry().find_mechanism(m);
                       return e && e->futex_handoff;
                     });

  return {{"topology", sched.topology().source()},
          {"llc", std::string(llc_source_name(sched.llc_source()))},
          {"node_reclaim_distance", sched.node_reclaim_distance()},
          {"model",
           "docs/policy-model.md sections 3, 6, 10: steady state of an otherwise idle box; "
           "no delayed-dequeue or wakelist races (section 2)"},
          {"consistent_distance", kConsistentDistance},
          {"mechanisms", entries},
          {"premises", premises}};
}

}  // namespace

json predict_for_results(const json& rs) {
  std::vector<CaseView> views;
  try {
    views = check_result_set(rs);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("result set: ") + e.what());
  }
  return predict(rs, views);
}

json predict_for_results_file(const std::string& path) {
  // The loader compare and report use: the same schema checks and messages for every command.
  const ResultSet rs = load_result_set(path);
  try {
    return predict(rs.doc, rs.views);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("results " + path + ": " + e.what());
  }
}

namespace {

std::string us(const json& ns) {
  if (!ns.is_number()) return "n/a";
  std::ostringstream o;
  o << std::fixed << std::setprecision(2) << ns.get<double>() / 1000.0 << "us";
  return o.str();
}

}  // namespace

std::string entry_label(const json& e) {
  if (e.contains("case") && e["case"].is_string()) return e["case"].get<std::string>();
  // Sets from before predictions were per case: one entry per mechanism, mode (and placement).
  std::string label = e.value("mechanism", "?") + "/" + e.value("mode", "?");
  if (e.contains("placement") && e["placement"].is_string())
    label += "/" + e["placement"].get<std::string>();
  return label;
}

std::string classes_text(const json& classes) {
  std::ostringstream o;
  bool first = true;
  for (const auto& [c, f] : classes.items()) {
    o << (first ? "" : " ") << c << " " << std::fixed << std::setprecision(0)
      << f.get<double>() * 100 << "%";
    first = false;
  }
  return o.str();
}

std::string render_results_text(const json& p) {
  std::ostringstream out;
  out << "policy predictions (" << p.at("topology").get<std::string>() << ", LLC "
      << p.at("llc").get<std::string>() << "):\n";
  for (const auto& e : p.at("mechanisms")) {
    out << "  " << entry_label(e);
    if (e.contains("skipped")) {
      out << ": " << e["skipped"].get<std::string>() << "\n";
      continue;
    }
    out << " (" << e.at("wake_flags").get<std::string>() << "): ";
    const json& m = e.at("measured");
    if (m.is_object() && m.contains("classes")) {
      out << "kernel " << us(m.value("rtt_ns", json())) << " [" << classes_text(m["classes"])
          << "] -> " << e.at("verdict").get<std::string>() << "\n";
      if (m.contains("trace")) {
        const json& t = m["trace"];
        out << "      traced " << t.at("wakeups").dump() << " wakeups:";
        const json& paths = t.at("paths");
        for (const char* path : {"selection", "ttwu_runnable", "queued_remote"})
          if (paths.contains(path)) out << " " << path << " " << paths[path].dump();
        if (t.value("dropped", json(0)) != json(0))
          out << " (" << t["dropped"].dump() << " events dropped)";
        out << "\n";
      }
    } else {
      out << "no kernel measurement\n";
    }
    for (const auto& g : e.at("groups")) {
      out << "      " << std::left << std::setw(44) << g.at("name").get<std::string>() << "  "
          << std::setw(10) << us(g.at("predicted_rtt_ns")) << classes_text(g.at("classes"));
      if (g.contains("unpriced")) {  // the column says n/a already; the reason follows
        std::string why = g["unpriced"].get<std::string>();
        if (why.rfind("n/a: ", 0) == 0) why.erase(0, 5);
        out << "  (" << why << ")";
      }
      out << "\n";
      // Uncertain (steady_to_json): where one disturbed wake leads instead.
      const json& first = e.at("policies").at(g.at("policies")[0].get<std::string>());
      if (first.contains("uncertain"))
        for (const auto& a : first["uncertain"]["alternatives"])
          out << std::string(58, ' ') << "uncertain: or " << classes_text(a.at("classes")) << "\n";
    }
  }
  out << "  premises:\n";
  for (const auto* policy : all_policies()) {
    const std::string id(policy->id());
    if (!p.at("premises").contains(id)) continue;
    const json& pr = p.at("premises").at(id);
    out << "    " << std::left << std::setw(13) << id;
    if (pr.contains("not_measurable")) {
      out << pr["not_measurable"].get<std::string>() << "\n";
      continue;
    }
    std::vector<std::string> parts;
    for (const auto& c : pr.at("checks")) {
      std::ostringstream o;
      o << entry_label(c) << " " << c.at("a").get<std::string>() << " " << us(c.at("a_rtt_ns"))
        << " vs " << c.at("b").get<std::string>() << " " << us(c.at("b_rtt_ns"));
      if (c.contains("holds")) {
        o << (c["holds"].get<bool>() ? " (holds, " : " (fails, ") << c["saving_pct"].dump() << "%)";
      }
      parts.push_back(o.str());
    }
    out << pr.at("premise").get<std::string>() << ":";
    for (const auto& s : parts) out << "\n      " << s;
    out << "\n";
  }
  return out.str();
}

}  // namespace wb
