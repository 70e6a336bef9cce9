// `wakebench predict --results R.json` and the predictions block of `wakebench run`: for every
// mechanism and mode of a result set, each policy's steady-state placement (docs/policy-model.md
// section 10) priced with the measured pinned RTT of each class, held against what the kernel
// placement cases measured, plus each patch's premise on this machine.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "analysis/predict.h"
#include "analysis/resultset_io.h"

namespace wb {

namespace {

using nlohmann::json;

// A kernel histogram is "consistent" with a group when their class distributions differ by at
// most this total-variation distance (0.5 * sum |p - q|): the model has no delayed-dequeue or
// wakelist races (section 2), which move a minority of wakes, not the bulk.
constexpr double kConsistentDistance = 0.25;

// Wake flags a mechanism carries on a real kernel (section 4), used when a case lacks the tag.
std::optional<std::string> default_wake_flags(const std::string& mechanism) {
  static const std::map<std::string, std::string> kFlags = {
      {"pipe", "sync"},         {"unix-stream", "sync"},      {"unix-dgram", "sync"},
      {"tcp-loopback", "sync"}, {"binder-like", "sync"},      {"eventfd", "none"},
      {"futex", "none"},        {"futex-swap", "current-cpu"}};
  auto it = kFlags.find(mechanism);
  if (it == kFlags.end()) return std::nullopt;
  return it->second;
}

double round2(double v) { return std::round(v * 100.0) / 100.0; }

struct MechMode {
  std::string mechanism;
  Mode mode;
  std::vector<const CaseView*> cases;
};

json distribution(const json& histogram) {
  json out = json::object();
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

double tv_distance(const json& p, const json& q) {
  std::set<std::string> keys;
  for (const auto& [k, v] : p.items()) keys.insert(k);
  for (const auto& [k, v] : q.items()) keys.insert(k);
  double d = 0;
  for (const auto& k : keys) d += std::fabs(p.value(k, 0.0) - q.value(k, 0.0));
  return d / 2;
}

// Premise check: is class `a` cheaper than `b` (pinned medians) for one mechanism/mode.
json compare(const std::string& mech, const std::string& mode, const std::string& a_label,
             std::optional<double> a, const std::string& b_label, std::optional<double> b) {
  json j = {{"mechanism", mech}, {"mode", mode}, {"a", a_label}, {"b", b_label}};
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
std::string missing_reason(const SchedTopology& sched, const std::vector<MechMode>& groups,
                           const std::string& cls) {
  for (const auto& g : groups)
    for (const CaseView* c : g.cases)
      if (c->kind == PlacementKind::kPinned && class_id(*c->cls) == cls && !c->ok() &&
          !c->reason.empty())
        return c->reason;
  for (const auto& cp : choose_pairs(sched.topology())) {
    if (std::string(class_id(cp.cls)) == cls && !cp.available) return cp.reason;
  }
  return "no ok " + cls + " case in the result set";
}

}  // namespace

namespace {

json predict(const json& rs, const std::vector<CaseView>& views) {
  if (!rs.contains("topology") || !rs["topology"].is_object() || !rs["topology"].contains("xml") ||
      !rs["topology"]["xml"].is_string()) {
    throw std::invalid_argument("result set: no embedded topology XML at topology.xml");
  }
  std::string source = rs["topology"].value("source", std::string("result set"));
  SchedTopology sched(Topology::from_xml_buffer(rs["topology"]["xml"].get<std::string>(), source));

  std::vector<MechMode> groups;
  for (const CaseView& c : views) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const MechMode& g) {
      return g.mechanism == c.mechanism && g.mode == c.mode;
    });
    if (it == groups.end()) {
      groups.push_back({c.mechanism, c.mode, {}});
      it = groups.end() - 1;
    }
    it->cases.push_back(&c);
  }

  json entries = json::array();
  // Pinned medians per (mechanism, mode, class), reused by the premises.
  std::map<std::pair<std::string, std::string>, std::map<std::string, double>> pinned_all;
  std::map<std::pair<std::string, std::string>, std::optional<double>> kernel_rtt;
  std::map<std::pair<std::string, std::string>, std::string> flags_of;
  for (const auto& g : groups) {
    const std::string mode(mode_id(g.mode));
    std::map<std::string, double> pinned;
    std::vector<const CaseView*> kernel_cases;
    std::optional<std::string> flags;
    for (const CaseView* c : g.cases) {
      if (c->wake_flags && !flags) flags = c->wake_flags;
      if (c->kind == PlacementKind::kKernel) {
        kernel_cases.push_back(c);
      } else if (c->kind == PlacementKind::kPinned && c->ok()) {
        pinned.try_emplace(std::string(class_id(*c->cls)), *c->rtt.get("median"));
      }
    }
    if (!flags) flags = default_wake_flags(g.mechanism);
    pinned_all[{g.mechanism, mode}] = pinned;
    if (flags) flags_of[{g.mechanism, mode}] = *flags;
    if (kernel_cases.empty()) kernel_cases.push_back(nullptr);  // predicted, not measured

    for (const CaseView* kc : kernel_cases) {
      const std::string placement = kc ? kc->placement : "kernel";
      json e = {{"mechanism", g.mechanism}, {"mode", mode}, {"placement", placement}};
      json pj = json::object();
      for (const auto& [cls, m] : pinned) pj[cls] = m;
      e["pinned_rtt_ns"] = pj;
      if (g.mechanism == "spin" || !flags ||
          (*flags != "sync" && *flags != "none" && *flags != "current-cpu")) {
        e["skipped"] = g.mechanism == "spin" ? std::string("busy-poll: no kernel wakeup to model")
                                             : "no kernel wakeup to model (wake_flags " +
                                                   (flags ? *flags : std::string("unknown")) + ")";
        entries.push_back(e);
        continue;
      }
      e["wake_flags"] = *flags;
      SteadyOptions opt;
      opt.sync = *flags == "sync";
      opt.current_cpu = *flags == "current-cpu";
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
        double rtt = 0;
        json missing = json::array();
        for (const auto& [cls, f] : r["classes"].items()) {
          auto it = pinned.find(cls);
          if (it == pinned.end()) {
            missing.push_back(cls);
          } else {
            rtt += f.get<double>() * it->second;
          }
        }
        p["predicted_rtt_ns"] = missing.empty() ? json(round2(rtt)) : json(nullptr);
        if (!missing.empty()) p["missing_classes"] = missing;
        policies[id] = p;
      }
      e["policies"] = policies;

      json measured = nullptr;
      json observed_dist;
      if (kc) {
        measured = {{"status", kc->status}};
        if (auto m = kc->rtt.get("median")) measured["rtt_ns"] = *m;
        // The premises compare with the default-cpuset kernel case when there are several.
        if (kc->ok() && (placement == "kernel" || !kernel_rtt.count({g.mechanism, mode}))) {
          kernel_rtt[{g.mechanism, mode}] = kc->rtt.get("median");
        }
        if (kc->observed.recorded) {
          json h = json::object();
          for (const auto& [cls, n] : kc->observed.histogram) h[cls] = n;
          measured["histogram"] = h;
          observed_dist = distribution(h);
          measured["classes"] = observed_dist;
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

      json gj = json::array();
      std::optional<size_t> best;
      double best_d = 0;
      for (auto g2 : steady["groups"]) {
        json out = {{"name", g2["name"]}, {"policies", g2["policies"]}, {"classes", g2["classes"]}};
        out["predicted_rtt_ns"] =
            policies[g2["policies"][0].get<std::string>()]["predicted_rtt_ns"];
        if (observed_dist.is_object() && !observed_dist.empty()) {
          double d = tv_distance(observed_dist, g2["classes"]);
          out["distance"] = round2(d);
          if (!best || d < best_d) {
            best = gj.size();
            best_d = d;
          }
        }
        gj.push_back(out);
      }
      e["groups"] = gj;
      if (!observed_dist.is_object() || observed_dist.empty()) {
        e["consistent_with"] = nullptr;
        e["verdict"] = "no observed kernel placement in the result set";
      } else if (best && best_d <= kConsistentDistance) {
        e["consistent_with"] = gj[*best]["name"];
        e["verdict"] = "kernel placement consistent with " + gj[*best]["name"].get<std::string>() +
                       " (distance " + json(round2(best_d)).dump() + ")";
      } else {
        e["consistent_with"] = nullptr;
        std::string why = "see policy-model.md section 2 bypasses";
        if (measured.is_object() && measured.contains("trace")) {
          const json& t = measured["trace"];
          int64_t n = 0, bypass = 0;
          if (t["wakeups"].is_number_integer()) n = t["wakeups"].get<int64_t>();
          for (const auto& [path, k] : t["paths"].items())
            if (path != "selection" && k.is_number_integer()) bypass += k.get<int64_t>();
          why = "traced: " + std::to_string(bypass) + " of " + std::to_string(n) +
                " wakeups bypassed the selection (policy-model.md section 2)";
        }
        e["verdict"] = "kernel placement matches no policy (closest " +
                       gj[*best]["name"].get<std::string>() + ", distance " +
                       json(round2(best_d)).dump() + "): " + why;
      }
      entries.push_back(e);
    }
  }

  // Each patch's premise with the measured numbers (section 6; the seeds' claims).
  auto pinned_at = [&](const std::pair<std::string, std::string>& k,
                       const std::string& cls) -> std::optional<double> {
    auto it = pinned_all[k].find(cls);
    if (it == pinned_all[k].end()) return std::nullopt;
    return it->second;
  };
  auto class_premise = [&](const std::string& a, const std::string& b, const std::string& text,
                           const std::string& flags) {
    json checks = json::array();
    for (const auto& [k, f] : flags_of) {
      if (f != flags) continue;
      checks.push_back(compare(k.first, k.second, a, pinned_at(k, a), b, pinned_at(k, b)));
    }
    json p = {{"premise", text}, {"checks", checks}};
    for (const auto& cls : {a, b}) {
      bool any = false;
      for (const auto& [k, f] : flags_of) any |= f == flags && pinned_at(k, cls).has_value();
      if (!any) {
        p["not_measurable"] = "not measurable here: no " + cls + " class (" +
                              missing_reason(sched, groups, cls) + ")";
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
    for (const auto& [k, f] : flags_of) {
      if (!want(k.first, f)) continue;
      std::optional<double> kr;
      if (auto it = kernel_rtt.find(k); it != kernel_rtt.end()) kr = it->second;
      checks.push_back(
          compare(k.first, k.second, "same-cpu", pinned_at(k, "same-cpu"), "kernel", kr));
    }
    json p = {{"premise", text}, {"checks", checks}};
    if (checks.empty()) p["not_measurable"] = "not measurable here: no matching mechanism";
    return p;
  };
  premises["sync-2017"] =
      kernel_premise("sync wakeups: the waker CPU is cheaper than the kernel's choice",
                     [](const std::string&, const std::string& f) { return f == "sync"; });
  premises["current-cpu"] =
      kernel_premise("futex handoff: the waker CPU is cheaper than the kernel's choice",
                     [](const std::string& m, const std::string&) { return m == "futex"; });

  return {{"topology", sched.topology().source()},
          {"llc", std::string(llc_source_name(sched.llc_source()))},
          {"node_reclaim_distance", sched.node_reclaim_distance()},
          {"model",
           "policy-model.md sections 3, 6, 10: steady state of an otherwise idle box; "
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
    out << "  " << e.at("mechanism").get<std::string>() << "/" << e.at("mode").get<std::string>()
        << "/" << e.at("placement").get<std::string>();
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
          << std::setw(10) << us(g.at("predicted_rtt_ns")) << classes_text(g.at("classes")) << "\n";
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
      o << c.at("mechanism").get<std::string>() << "/" << c.at("mode").get<std::string>() << " "
        << c.at("a").get<std::string>() << " " << us(c.at("a_rtt_ns")) << " vs "
        << c.at("b").get<std::string>() << " " << us(c.at("b_rtt_ns"));
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
