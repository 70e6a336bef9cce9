#include "analysis/model/replay.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/util/cpulist.h"
#include "common/util/text.h"

namespace wb {

bool listed_idle(const DecisionRecord& d, int cpu) {
  return std::binary_search(d.idle.begin(), d.idle.end(), cpu);
}

WakeInput wake_input_of(const DecisionRecord& d, const SchedTopology& sched) {
  WakeInput in;
  in.waker = d.waker_cpu;
  in.prev = d.prev;
  in.sync = (d.wake_flags & kWfSync) != 0;
  in.current_cpu = (d.wake_flags & kWfCurrentCpu) != 0;
  in.waker_flips = d.waker_flips;
  in.wakee_flips = d.wakee_flips;
  in.waker_last_wakee_is_wakee = d.last_wakee;
  in.reciprocal = d.wakee_last_wakee.value_or(d.last_wakee);
  in.recent_used_cpu = d.recent_used_cpu;
  in.allowed = d.allowed;
  in.wakee_queued = d.on_rq;
  in.wakee_on_cpu = d.on_cpu;
  in.prev_nr_running = d.prev_nr_running;
  in.waker_kthread = d.kthread;
  in.in_task = d.in_task;
  const auto scan = [](int n) { return n < 0 ? std::nullopt : std::optional<int>(n); };
  in.llc_hints = {{d.waker_cpu, d.has_idle_cores, scan(d.nr_idle_scan)},
                  {d.prev, d.prev_has_idle_cores, scan(d.prev_nr_idle_scan)}};
  for (int c : sched.cpus())
    if (!listed_idle(d, c)) in.nr_running[c] = 1;
  in.nr_running[d.waker_cpu] = d.waker_nr_running;
  // The records list a CPU idle where available_idle_cpu() || sched_idle_cpu() holds; the waker
  // runs on its CPU, so listed there it is sched_idle_cpu(): only SCHED_IDLE tasks, the waker one.
  if (d.waker_nr_running > 0 && listed_idle(d, d.waker_cpu)) in.sched_idle.push_back(d.waker_cpu);
  in.delayed[d.waker_cpu] = d.waker_delayed;
  if (const auto& l = d.loads) {
    in.load = {{d.prev, l->prev_cpu}, {d.waker_cpu, l->waker_cpu}};
    in.capacity = {{d.prev, l->prev_capacity}, {d.waker_cpu, l->waker_capacity}};
    in.waker_load = l->waker;
    in.wakee_load = l->wakee;
  }
  return in;
}

int64_t ReplayResult::total() const {
  int64_t n = 0;
  for (const auto& [rule, t] : by_rule) n += t.count;
  return n;
}

int64_t ReplayResult::agreed() const {
  int64_t n = 0;
  for (const auto& [rule, t] : by_rule) n += t.agree;
  return n;
}

int64_t ReplayResult::unrecorded() const { return std::max<int64_t>(0, wakings - total()); }

void ReplayResult::add(const ReplayResult& o) {
  wakings += o.wakings;
  self_wakes += o.self_wakes;
  wide.count += o.wide.count;
  wide.agree += o.wide.agree;
  inferred += o.inferred;
  unlabelled += o.unlabelled;
  at_waking += o.at_waking;
  flags_from_registry += o.flags_from_registry;
  moved.count += o.moved.count;
  moved.agree += o.moved.agree;
  baseline_prev += o.baseline_prev;
  baseline_waker += o.baseline_waker;
  baseline_last += o.baseline_last;
  for (const auto& [rule, n] : o.first_rules) first_rules[rule] += n;
  hint_read += o.hint_read;
  hint_stale_true += o.hint_stale_true;
  hint_stale_false += o.hint_stale_false;
  llc_wider += o.llc_wider;
  for (const auto& [rule, t] : o.by_rule) {
    by_rule[rule].count += t.count;
    by_rule[rule].agree += t.agree;
  }
  disagreements.insert(disagreements.end(), o.disagreements.begin(), o.disagreements.end());
}

std::vector<DecisionRule> ReplayResult::uncovered() const {
  std::vector<DecisionRule> out;
  for (DecisionRule r : all_decision_rules())
    if (!by_rule.count(r)) out.push_back(r);
  return out;
}

namespace {

// The state checks of ReplayResult: `in` is the record's input as the model reads it.
void tally_state(const DecisionRecord& d, const WakeInput& in, const SchedTopology& sched,
                 std::set<int>& seen, ReplayResult& out) {
  if (d.allowed.size() != 1 && seen.insert(d.pid).second && d.rule)
    ++out.first_rules[std::string(decision_rule_id(*d.rule))];
  out.llc_wider += d.nr_idle_scan >= 0 && !sched.sd_llc(d.waker_cpu);
  if (d.on_rq || d.on_cpu || d.allowed.size() == 1) return;
  const bool exact = exact_has_idle_cores(sched, in, d.waker_cpu);
  ++out.hint_read;
  out.hint_stale_true += d.has_idle_cores && !exact;
  out.hint_stale_false += !d.has_idle_cores && exact;
}

}  // namespace

std::string inputs_text(const DecisionRecord& d) {
  char flags[16];
  std::snprintf(flags, sizeof flags, "0x%x", d.wake_flags);
  return "waker " + std::to_string(d.waker_cpu) + " prev " + std::to_string(d.prev) + " flags " +
         flags + " idle " + (d.idle.empty() ? "-" : format_cpu_list(d.idle)) + " recent " +
         std::to_string(d.recent_used_cpu) + " has_idle_cores " + std::to_string(d.has_idle_cores) +
         " nr_running " + std::to_string(d.waker_nr_running);
}

namespace {

// One block of a case's records replayed on what the case carries; a record's position runs on
// from the records before it.
void replay_block(const std::vector<DecisionRecord>& records, const SchedTopology& sched,
                  const WakeupPolicy& policy, const ModelFeatures& features, RunReplayer::Case& c) {
  ReplayResult& out = c.result;
  const auto first = static_cast<std::size_t>(out.total());
  for (std::size_t i = first; i < first + records.size(); ++i) {
    const DecisionRecord& d = records[i - first];
    const std::string at =
        "decision " + std::to_string(i + 1) + " (pid " + std::to_string(d.pid) + ")";
    WakeInput in = wake_input_of(d, sched);
    in.features = features;
    WakeDecision model;
    try {
      model = predict_wakeup(sched, in, policy);
    } catch (const std::exception& e) {
      throw std::invalid_argument(at + ": " + e.what());
    }
    tally_state(d, in, sched, c.seen, out);
    RuleTally& t = out.by_rule[d.rule.value_or(model.rule)];
    const bool agree = !d.unlabelled && model.cpu == d.cpu && (!d.rule || model.rule == *d.rule);
    ++t.count;
    t.agree += agree;
    out.inferred += !d.rule && !d.unlabelled;
    out.unlabelled += d.unlabelled;
    out.at_waking += d.source == DecisionSource::kTpBtf;
    out.flags_from_registry += d.wake_flags_from.rfind("registry:", 0) == 0;
    out.moved.count += d.idle_moved;
    out.moved.agree += d.idle_moved && agree;
    out.wide.count += d.wake_wide;
    out.wide.agree += d.wake_wide && agree;
    const auto last = c.last_choice.find(d.pid);
    out.baseline_prev += d.cpu == d.prev;
    out.baseline_waker += d.cpu == d.waker_cpu;
    out.baseline_last += d.cpu == (last == c.last_choice.end() ? d.prev : last->second);
    c.last_choice[d.pid] = d.cpu;
    if (!agree) out.disagreements.push_back({c.name, i, d, model});
  }
}

}  // namespace

ReplayResult replay_decisions(const std::vector<DecisionRecord>& records,
                              const SchedTopology& sched, const WakeupPolicy& policy,
                              const ModelFeatures& features) {
  RunReplayer::Case c;
  c.result.policy = std::string(policy.id());
  replay_block(records, sched, policy, features, c);
  return std::move(c.result);
}

RunReplayer::RunReplayer(SchedTopology sched, const WakeupPolicy& policy, ModelFeatures features)
    : sched_(std::move(sched)), policy_(&policy), features_(features) {}

void RunReplayer::add(const std::string& name, std::string_view text) {
  auto c =
      std::find_if(cases_.begin(), cases_.end(), [&](const Case& k) { return k.name == name; });
  if (c == cases_.end()) {
    c = cases_.insert(cases_.end(), Case{name, {}, {}, {}});
    c->result.policy = std::string(policy_->id());
  }
  try {
    const DecisionTrace t = parse_decision_trace(text);
    replay_block(t.records, sched_, *policy_, features_, *c);
    c->result.wakings += t.wakings;
    c->result.self_wakes += t.self_wakes;
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("case " + name + ": " + e.what());
  }
}

CaseReplays RunReplayer::replays() const {
  CaseReplays out;
  out.total.policy = std::string(policy_->id());
  for (const Case& c : cases_) {
    out.total.add(c.result);
    out.cases.emplace_back(c.name, c.result);
  }
  return out;
}

CaseReplays replay_cases(const std::vector<std::pair<std::string, std::string>>& cases,
                         const SchedTopology& sched, const WakeupPolicy& policy,
                         const ModelFeatures& features) {
  RunReplayer r(sched, policy, features);
  for (const auto& [name, text] : cases) r.add(name, text);
  return r.replays();
}

namespace {

std::string percent(int64_t part, int64_t whole) {
  return whole ? fmt("%.2f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole))
               : "-";
}

std::string rule_list(const std::vector<DecisionRule>& rules) {
  std::vector<std::string> ids;
  for (DecisionRule r : rules) ids.emplace_back(decision_rule_id(r));
  return join(ids, ", ");
}

// One line of the table: the rule left-aligned, the counts right-aligned.
std::string table_row(const std::string& rule, const std::string& count, const std::string& agree,
                      const std::string& disagree) {
  std::ostringstream l;
  l << std::left << std::setw(28) << rule << std::right << std::setw(10) << count << std::setw(10)
    << agree << std::setw(10) << disagree;
  return l.str();
}

}  // namespace

// What agreement means for these records: CPU and rule, or the CPU alone where the recorder
// holds no rule (the BPF recorder's).
std::string agreement_kind(const ReplayResult& r) {
  if (r.inferred == 0) return "CPU and rule";
  if (r.inferred == r.total()) return "CPU";
  return "CPU (and rule in " + std::to_string(r.total() - r.inferred) + ")";
}

// The trivial predictors and the records whose inputs moved, for the BPF recorder's records.
std::string recorder_lines(const ReplayResult& r) {
  if (r.inferred == 0) return "";
  const int64_t n = r.total();
  return wrap(
             "the recorder holds the inputs and the CPU: each rule below is the model's; "
             "baselines on the same records: prev " +
                 percent(r.baseline_prev, n) + ", the waker's CPU " + percent(r.baseline_waker, n) +
                 ", the last choice " + percent(r.baseline_last, n),
             "") +
         (r.at_waking == 0
              ? ""
              : wrap(std::to_string(r.at_waking) +
                         " records read at sched_waking (tp_btf), before the selection; wake "
                         "flags from the mechanism's documented wake in " +
                         std::to_string(r.flags_from_registry) + ", none assumed in " +
                         std::to_string(r.at_waking - r.flags_from_registry) +
                         " (a waker outside the case, or no mechanism)",
                     "")) +
         wrap("inputs moved (idle CPUs changed while the kernel chose): " +
                  std::to_string(r.moved.count) + " records, " + std::to_string(r.moved.agree) +
                  " agree (counted above)",
              "");
}

namespace {

// A second line "N self-wakes left out (...)" where the trace had any.
std::string self_wakes_text(const ReplayResult& r) {
  if (r.self_wakes == 0) return "";
  return "\n  " + std::to_string(r.self_wakes) +
         " self-wakes left out (a task woken in its own context: nothing placed)";
}

// The first `first` disagreements, each with its inputs, the kernel's choice and the model's.
std::string disagreements_text(const ReplayResult& r, std::size_t first) {
  std::ostringstream out;
  const std::size_t shown = std::min(first, r.disagreements.size());
  if (shown > 0)
    out << "\nfirst " << shown << " of " << r.disagreements.size() << " disagreements:\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const ReplayDisagreement& x = r.disagreements[i];
    if (!x.case_name.empty()) out << "  " << x.case_name << ":\n";
    const DecisionRecord& d = x.record;
    const std::string kernel =
        d.unlabelled ? "none -> " + std::to_string(d.cpu)
        : d.rule ? std::string(decision_rule_id(*d.rule)) + " -> " + std::to_string(d.cpu) + " (" +
                       std::string(affine_test_id(d.affine.value_or(AffineTest::kNone))) + ")"
                 : "-> " + std::to_string(d.cpu) + (d.idle_moved ? " (its inputs moved)" : "");
    out << "  #" << x.index + 1 << " pid " << d.pid << ": " << inputs_text(d) << "\n"
        << "    kernel " << kernel << "; model " << decision_rule_id(x.model.rule) << " -> "
        << x.model.cpu << "\n";
  }
  return out.str();
}

}  // namespace

std::string render_replay_text(const ReplayResult& r, std::size_t first) {
  std::ostringstream out;
  const int64_t total = r.total(), agreed = r.agreed();
  const std::string kind = agreement_kind(r);
  if (r.wakings > 0)
    out << "replay under " << r.policy << ": " << agreed << " of " << r.denominator()
        << " wakeups agree in " << kind << " (" << percent(agreed, r.denominator()) << ")\n  "
        << total - agreed << " records disagree; " << r.unrecorded() << " wakeups have no record"
        << self_wakes_text(r) << "\n";
  else
    out << "replay under " << r.policy << ": " << agreed << " of " << total
        << " decisions agree in " << kind << " (" << percent(agreed, total) << "), "
        << total - agreed << " disagree\n";
  out << recorder_lines(r) << "\n";
  out << table_row(r.inferred == total && total > 0 ? "model's rule" : "kernel's rule", "count",
                   "agree", "disagree")
      << "\n";
  for (const auto& [rule, t] : r.by_rule)
    out << table_row(std::string(decision_rule_id(rule)), std::to_string(t.count),
                     std::to_string(t.agree), std::to_string(t.count - t.agree))
        << "\n";
  if (r.unlabelled > 0)
    out << wrap(std::to_string(r.unlabelled) +
                    " records returned from a return the event does not label (rule=none: a "
                    "patch's own code); counted above under the model's rule, none agree",
                "");
  out << "\nwake_wide() true in " << r.wide.count << " records, " << r.wide.agree
      << " of them agreed\n";
  std::vector<std::string> firsts;
  for (const auto& [rule, n] : r.first_rules) firsts.push_back(rule + " " + std::to_string(n));
  if (!firsts.empty())  // the BPF recorder's records hold no rule
    out << wrap("first record of each unpinned task, by rule: " + join(firsts, ", "), "");
  out << wrap("has_idle_cores of the waker's LLC against its recorded idle CPUs, in " +
                  std::to_string(r.hint_read) + " selections: stale true " +
                  std::to_string(r.hint_stale_true) + ", stale false " +
                  std::to_string(r.hint_stale_false),
              "");
  if (r.llc_wider > 0)
    out << wrap(std::to_string(r.llc_wider) +
                    " records read the LLC shared state of a waker's CPU the model gives no LLC "
                    "domain: this kernel's LLC is wider than the set's topology says, and the "
                    "model's wake_wide() and idle scans follow the topology",
                "");
  if (const auto none = r.uncovered(); !none.empty())
    out << "\n"
        << wrap("uncovered (no decision was made by them; not agreement): " + rule_list(none), "");
  out << disagreements_text(r, first);
  return out.str();
}

nlohmann::ordered_json replay_json(const ReplayResult& r) {
  nlohmann::ordered_json rules = nlohmann::ordered_json::object();
  for (const auto& [rule, t] : r.by_rule)
    rules[std::string(decision_rule_id(rule))] = {
        {"count", t.count}, {"agree", t.agree}, {"disagree", t.count - t.agree}};
  nlohmann::ordered_json dis = nlohmann::ordered_json::array();
  for (const ReplayDisagreement& x : r.disagreements)
    dis.push_back(
        {{"case", x.case_name},
         {"index", x.index},
         {"pid", x.record.pid},
         {"kernel",
          {{"rule", x.record.rule ? decision_rule_id(*x.record.rule) : ""}, {"cpu", x.record.cpu}}},
         {"model",
          {{"rule", decision_rule_id(x.model.rule)},
           {"cpu", x.model.cpu},
           {"path", x.model.path}}}});
  nlohmann::ordered_json uncovered = nlohmann::ordered_json::array();
  for (DecisionRule u : r.uncovered()) uncovered.push_back(decision_rule_id(u));
  return {{"policy", r.policy},
          {"wakeups", r.denominator()},
          {"decisions", r.total()},
          {"unrecorded", r.unrecorded()},
          {"self_wakes", r.self_wakes},
          {"agree", r.agreed()},
          {"rules_inferred", r.inferred},
          {"rules_unlabelled", r.unlabelled},
          {"at_waking", r.at_waking},
          {"wake_flags_from_registry", r.flags_from_registry},
          {"inputs_moved", {{"count", r.moved.count}, {"agree", r.moved.agree}}},
          {"baselines",
           {{"prev", r.baseline_prev},
            {"waker_cpu", r.baseline_waker},
            {"last_choice", r.baseline_last}}},
          {"rules", rules},
          {"wake_wide", {{"count", r.wide.count}, {"agree", r.wide.agree}}},
          {"first_rules", r.first_rules},
          {"hint",
           {{"read", r.hint_read},
            {"stale_true", r.hint_stale_true},
            {"stale_false", r.hint_stale_false}}},
          {"llc_wider", r.llc_wider},
          {"uncovered", uncovered},
          {"disagreements", dis}};
}

namespace {

std::string role(int cpu, const DecisionRecord& d) {
  if (cpu == d.prev && cpu == d.waker_cpu) return "prev (the waker's)";
  if (cpu == d.prev) return "prev";
  if (cpu == d.waker_cpu) return "waker";
  return "cpu " + std::to_string(cpu);
}

}  // namespace

ReplayDigest digest_of(const ReplayResult& r) {
  ReplayDigest out{r.denominator(), r.agreed(), "", 0};
  std::map<std::string, int64_t> kinds;
  for (const ReplayDisagreement& x : r.disagreements)
    ++kinds["model " + std::string(decision_rule_id(x.model.rule)) + " -> " +
            role(x.model.cpu, x.record) + ", kernel -> " + role(x.record.cpu, x.record)];
  for (const auto& [text, n] : kinds)
    if (n > out.common_count) out = {out.wakeups, out.reproduced, text, n};
  return out;
}

std::string render_case_replays(const CaseReplays& r, std::size_t first) {
  std::ostringstream out;
  // The case column: 56 wide, a longer name cut at its start (its end tells cases apart).
  const auto row = [&out](std::string name, const std::string& a, const std::string& b,
                          const std::string& c, const std::string& d) {
    if (name.size() > 56) name = "..." + name.substr(name.size() - 53);
    out << std::left << std::setw(56) << name << std::right << std::setw(10) << a << std::setw(10)
        << b << std::setw(10) << c << std::setw(10) << d << "\n";
  };
  out << render_replay_text(r.total, first) << "\n";
  row("case", "wakeups", "records", "agree", "agree%");
  for (const auto& [name, c] : r.cases)
    row(name, std::to_string(c.denominator()), std::to_string(c.total()),
        std::to_string(c.agreed()), percent(c.agreed(), c.denominator()));
  return out.str();
}

nlohmann::ordered_json case_replays_json(const CaseReplays& r) {
  nlohmann::ordered_json out = replay_json(r.total);
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  for (const auto& [name, c] : r.cases)
    cases.push_back({{"case", name},
                     {"wakeups", c.denominator()},
                     {"decisions", c.total()},
                     {"agree", c.agreed()}});
  out["cases"] = cases;
  return out;
}

}  // namespace wb
