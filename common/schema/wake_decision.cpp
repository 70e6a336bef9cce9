#include "common/schema/wake_decision.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "common/schema/wakeup_trace.h"
#include "common/util/cpulist.h"
#include "common/util/ids.h"
#include "common/util/input.h"
#include "common/util/text.h"

namespace wb {
namespace {

// The rules' ids, named after the kernel's code (docs/policy-model.md#rules), in the enum's order.
constexpr Ids<DecisionRule> kRuleIds[] = {
    {DecisionRule::kTtwuRunnable, "ttwu_runnable"},
    {DecisionRule::kTtwuQueueWakelist, "ttwu_queue_wakelist"},
    {DecisionRule::kOneAllowedCpu, "nr_cpus_allowed_1"},
    {DecisionRule::kCurrentCpu, "wf_current_cpu"},
    {DecisionRule::kFeec, "find_energy_efficient_cpu"},
    {DecisionRule::kBeforeDomainWalk, "hook_before_domain_walk"},
    {DecisionRule::kAfterWakeAffine, "hook_after_wake_affine"},
    {DecisionRule::kSlowPath, "sched_balance_find_dst_cpu"},
    {DecisionRule::kSisTarget, "sis_target"},
    {DecisionRule::kSisPrev, "sis_prev"},
    {DecisionRule::kSisKthread, "sis_kthread"},
    {DecisionRule::kSisRecent, "sis_recent_used_cpu"},
    {DecisionRule::kSisCapacity, "sis_select_idle_capacity"},
    {DecisionRule::kSisNoLlc, "sis_no_sd_llc"},
    {DecisionRule::kSisSmt, "sis_select_idle_smt"},
    {DecisionRule::kSisSyncCore, "hook_select_idle_sync_core"},
    {DecisionRule::kSisIdleCpu, "sis_select_idle_cpu"},
    {DecisionRule::kSisPrevAff, "sis_prev_aff"},
    {DecisionRule::kSisRecentFallback, "sis_recent_fallback"},
    {DecisionRule::kSisTargetFallback, "sis_target_fallback"},
    {DecisionRule::kSelectFallbackRq, "select_fallback_rq"},
};
constexpr Ids<AffineTest> kAffineIds[] = {{AffineTest::kNone, "none"},
                                          {AffineTest::kIdle, "WA_IDLE"},
                                          {AffineTest::kWeight, "WA_WEIGHT"}};

constexpr std::string_view kEvent = ": sched_wake_decision: ";

// A line that reaches the terminal (in an error; a case name in replay's output) holds no control
// character: a task name in a trace may be any bytes. Throws "line N: has a control character".
void check_line(std::string_view line, std::size_t line_no) {
  if (control_at(line) != std::string_view::npos)
    throw std::invalid_argument("line " + std::to_string(line_no) +
                                ": has a control character: " + quoted_line(trim(line)));
}

using Fields = std::map<std::string, std::string, std::less<>>;

// "key=value" tokens separated by spaces; a repeated or value-less token is refused.
Fields split_fields(std::string_view fields) {
  Fields out;
  for (std::size_t pos = 0; pos < fields.size();) {
    const std::size_t end = std::min(fields.find(' ', pos), fields.size());
    const std::string_view tok = fields.substr(pos, end - pos);
    pos = end + 1;
    if (tok.empty()) continue;
    const std::size_t eq = tok.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw std::invalid_argument("token \"" + std::string(tok) + "\" is not key=value");
    if (!out.emplace(std::string(tok.substr(0, eq)), std::string(tok.substr(eq + 1))).second)
      throw std::invalid_argument("field \"" + std::string(tok.substr(0, eq)) + "\" repeated");
  }
  return out;
}

class Reader {
 public:
  explicit Reader(Fields f) : f_(std::move(f)) {}
  const std::string& text(const char* key) {
    const auto it = f_.find(key);
    if (it == f_.end()) throw std::invalid_argument("field \"" + std::string(key) + "\" missing");
    used_.insert(key);
    return it->second;
  }
  // Decimal, or hexadecimal after "0x" (wake_flags).
  int64_t integer(const char* key, int64_t lo, int64_t hi) {
    const std::string& v = text(key);
    const bool hex = v.rfind("0x", 0) == 0;
    const char *begin = v.data() + (hex ? 2 : 0), *end = v.data() + v.size();
    int64_t n = 0;
    const auto [stop, ec] = std::from_chars(begin, end, n, hex ? 16 : 10);
    if (begin == end || ec != std::errc() || stop != end || n < lo || n > hi)
      throw std::invalid_argument("field \"" + std::string(key) + "\" is \"" + v +
                                  "\", not an integer in [" + std::to_string(lo) + ", " +
                                  std::to_string(hi) + "]");
    return n;
  }
  bool flag(const char* key) { return integer(key, 0, 1) == 1; }
  // One of the ids of `ids`; `known` names them in the error.
  template <class E, std::size_t N>
  E id(const char* key, const Ids<E> (&ids)[N], const char* known) {
    const std::string& v = text(key);
    if (const std::optional<E> e = value_in(ids, v)) return *e;
    throw std::invalid_argument("field \"" + std::string(key) + "\" is \"" + v + "\", not " +
                                known);
  }
  bool has(const char* key) const { return f_.count(key) > 0; }
  std::optional<std::string> optional_text(const char* key) {
    if (!has(key)) return std::nullopt;
    return text(key);
  }
  // A field that older formats lack.
  std::optional<bool> optional_flag(const char* key) {
    if (!f_.count(key)) return std::nullopt;
    return flag(key);
  }
  int cpu(const char* key, int lo = 0) { return static_cast<int>(integer(key, lo, kMaxCpus - 1)); }
  std::vector<int> cpus(const char* key) {
    const std::string& v = text(key);
    if (v.empty()) return {};
    try {
      return parse_cpu_list(v);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("field \"" + std::string(key) + "\": " + e.what());
    }
  }
  // Every field was read: an unknown one is a format this reader does not know.
  void done() const {
    for (const auto& [key, value] : f_)
      if (!used_.count(key)) throw std::invalid_argument("unknown field \"" + key + "\"");
  }

 private:
  Fields f_;
  std::set<std::string, std::less<>> used_;
};

// What only the lab kernels' event records: how the kernel got to its CPU.
void read_kernel_reasons(Reader& r, DecisionRecord& d) {
  d.in_task = r.flag("in_task");
  d.wake_wide = r.flag("wake_wide");
  d.want_affine = r.flag("want_affine");
  d.affine = r.id("affine", kAffineIds, "none, WA_IDLE or WA_WEIGHT");
  d.affine_cpu = r.cpu("affine_cpu", -1);
  if (r.text("rule") == "none")  // a return the event does not label: a patch's own
    d.unlabelled = true;
  else
    d.rule = r.id("rule", kRuleIds, "a rule of docs/policy-model.md#rules, or none");
  d.mark = r.optional_flag("mark").value_or(false);
}

// wake_affine_weight()'s loads: a kBpf record's where it has them; a lab event's after `loads=1`
// (what that function read, 0 for what it returned before reading), none after `loads=0`, whose
// six fields must then be 0. Lines from before the event carried them have neither.
std::optional<DecisionRecord::Loads> read_loads(Reader& r, bool bpf) {
  const bool known = bpf ? r.has("waker_cpu_load") : r.has("loads") && r.flag("loads");
  if (!known && (bpf || !r.has("loads"))) return std::nullopt;
  const int64_t load = known ? int64_t{1} << 40 : 0, capacity = known ? 1 << 20 : 0;
  const DecisionRecord::Loads l{
      r.integer("waker_cpu_load", 0, load),         r.integer("prev_cpu_load", 0, load),
      r.integer("waker_h_load", 0, load),           r.integer("wakee_h_load", 0, load),
      r.integer("waker_capacity", known, capacity), r.integer("prev_capacity", known, capacity)};
  return known ? std::optional(l) : std::nullopt;
}

// Each record source with the id its lines spell (the event's lines have no `source`).
constexpr Ids<DecisionSource> kSourceIds[] = {{DecisionSource::kEvent, "event"},
                                              {DecisionSource::kBpf, "bpf"},
                                              {DecisionSource::kTpBtf, "tp_btf"}};

// tp_btf's wake_flags_from: "registry:<mechanism>", "outside" or "unknown".
std::string read_flags_from(Reader& r) {
  const std::string& v = r.text("wake_flags_from");
  const std::string_view id = std::string_view(v).substr(v.rfind("registry:", 0) == 0 ? 9 : 0);
  const bool mechanism =
      id.size() < v.size() && !id.empty() &&
      id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string_view::npos;
  if (!mechanism && v != "outside" && v != "unknown")
    throw std::invalid_argument("field \"wake_flags_from\" is \"" + v +
                                "\", not registry:<mechanism>, outside or unknown");
  return v;
}

}  // namespace

const std::vector<DecisionRule>& all_decision_rules() {
  static const std::vector<DecisionRule> rules = [] {
    std::vector<DecisionRule> v;
    for (const auto& [rule, id] : kRuleIds) v.push_back(rule);
    return v;
  }();
  return rules;
}
std::string_view decision_rule_id(DecisionRule r) { return id_in(kRuleIds, r); }
std::optional<DecisionRule> parse_decision_rule(std::string_view id) {
  return value_in(kRuleIds, id);
}
std::string_view affine_test_id(AffineTest a) { return id_in(kAffineIds, a); }
std::string_view decision_source_id(DecisionSource s) { return id_in(kSourceIds, s); }

DecisionRecord parse_decision_fields(std::string_view fields) {
  Reader r(split_fields(fields));
  DecisionRecord d;
  if (const auto src = r.optional_text("source")) {  // the event's lines have none
    const auto source = value_in(kSourceIds, *src);
    if (!source || *source == DecisionSource::kEvent)
      throw std::invalid_argument("field \"source\" is \"" + *src + "\", not bpf or tp_btf");
    d.source = *source;
  }
  const bool bpf = d.source != DecisionSource::kEvent;
  d.pid = static_cast<int>(r.integer("pid", 1, 1 << 30));
  d.waker_cpu = r.cpu("waker_cpu");
  d.prev = r.cpu("prev");
  d.wake_flags = static_cast<unsigned>(r.integer("wake_flags", 0, 0xffff));
  if (d.source == DecisionSource::kTpBtf) d.wake_flags_from = read_flags_from(r);
  d.waker_flips = static_cast<int>(r.integer("waker_flips", 0, 1 << 30));
  d.wakee_flips = static_cast<int>(r.integer("wakee_flips", 0, 1 << 30));
  d.last_wakee = r.flag("last_wakee");
  d.wakee_last_wakee = r.optional_flag("wakee_last_wakee");
  d.on_rq = r.flag("on_rq");
  d.on_cpu = r.flag("on_cpu");
  d.kthread = r.flag("kthread");
  d.allowed = r.cpus("allowed");
  d.nr_idle_scan = static_cast<int>(r.integer("nr_idle_scan", -1, kMaxCpus));
  d.prev_nr_idle_scan = static_cast<int>(r.integer("prev_nr_idle_scan", -1, kMaxCpus));
  d.recent_used_cpu = r.cpu("recent_used_cpu", -1);
  d.has_idle_cores = r.flag("has_idle_cores");
  d.prev_has_idle_cores = r.flag("prev_has_idle_cores");
  d.waker_nr_running = static_cast<int>(r.integer("waker_nr_running", 0, 1000000));
  if (!bpf || r.has("waker_delayed"))
    d.waker_delayed = static_cast<int>(r.integer("waker_delayed", 0, d.waker_nr_running));
  d.prev_nr_running = static_cast<int>(r.integer("prev_nr_running", 0, 1000000));
  d.loads = read_loads(r, bpf);
  d.idle = r.cpus("idle");
  if (bpf)
    d.idle_moved = r.flag("idle_moved");
  else
    read_kernel_reasons(r, d);
  d.cpu = r.cpu("cpu");
  r.done();
  return d;
}

std::string format_bpf_decision_fields(const DecisionRecord& d, bool delayed_known) {
  const auto n = [](auto v) { return std::to_string(v); };
  char flags[16];
  std::snprintf(flags, sizeof flags, "%x", d.wake_flags);
  const bool tp_btf = d.source == DecisionSource::kTpBtf;
  std::string s = "source=" + std::string(decision_source_id(d.source)) + " pid=" + n(d.pid) +
                  " waker_cpu=" + n(d.waker_cpu) + " prev=" + n(d.prev) + " wake_flags=0x" + flags +
                  (tp_btf ? " wake_flags_from=" + d.wake_flags_from : "") +
                  " waker_flips=" + n(d.waker_flips) + " wakee_flips=" + n(d.wakee_flips) +
                  " last_wakee=" + n(int(d.last_wakee));
  if (d.wakee_last_wakee) s += " wakee_last_wakee=" + n(int(*d.wakee_last_wakee));
  s += " on_rq=" + n(int(d.on_rq)) + " on_cpu=" + n(int(d.on_cpu)) +
       " kthread=" + n(int(d.kthread)) + " allowed=" + format_cpu_list(d.allowed) +
       " nr_idle_scan=" + n(d.nr_idle_scan) + " prev_nr_idle_scan=" + n(d.prev_nr_idle_scan) +
       " recent_used_cpu=" + n(d.recent_used_cpu) + " has_idle_cores=" + n(int(d.has_idle_cores)) +
       " prev_has_idle_cores=" + n(int(d.prev_has_idle_cores)) +
       " waker_nr_running=" + n(d.waker_nr_running);
  if (delayed_known) s += " waker_delayed=" + n(d.waker_delayed);
  s += " prev_nr_running=" + n(d.prev_nr_running);
  if (const auto& l = d.loads)
    s += " waker_cpu_load=" + n(l->waker_cpu) + " prev_cpu_load=" + n(l->prev_cpu) +
         " waker_h_load=" + n(l->waker) + " wakee_h_load=" + n(l->wakee) +
         " waker_capacity=" + n(l->waker_capacity) + " prev_capacity=" + n(l->prev_capacity);
  return s + " idle=" + format_cpu_list(d.idle) + " idle_moved=" + n(int(d.idle_moved)) +
         " cpu=" + n(d.cpu);
}

std::vector<DecisionRecord> parse_decisions(std::string_view text) {
  return parse_decision_trace(text).records;
}

DecisionTrace parse_decision_trace(std::string_view text) {
  DecisionTrace out;
  for (std::size_t pos = 0, line_no = 1; pos < text.size(); ++line_no) {
    const std::size_t nl = std::min(text.find('\n', pos), text.size());
    const std::string_view raw = text.substr(pos, nl - pos), line = trim(raw);
    pos = nl + 1;
    check_line(raw, line_no);
    if (line.empty() || line.front() == '#') continue;
    if (line.find(": sched_waking: ") != std::string_view::npos)
      ++(is_self_waking(line) ? out.self_wakes : out.wakings);
    const std::size_t at = line.find(kEvent);
    if (at == std::string_view::npos) continue;
    try {
      out.records.push_back(parse_decision_fields(line.substr(at + kEvent.size())));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("line " + std::to_string(line_no) + ": " + e.what() + ": " +
                                  quoted_line(line));
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> decision_cases(std::string_view text) {
  constexpr std::string_view kCase = "# case ";
  std::vector<std::pair<std::string, std::string>> out;
  std::string* into = nullptr;  // the current case's text
  for (std::size_t pos = 0, line_no = 1; pos < text.size(); ++line_no) {
    const std::size_t nl = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    check_line(line, line_no);
    if (line.rfind(kCase, 0) == 0) {
      const std::string name(line.substr(kCase.size()));
      try {
        check_name("case", name);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("line " + std::to_string(line_no) + ": " + e.what());
      }
      auto it =
          std::find_if(out.begin(), out.end(), [&](const auto& c) { return c.first == name; });
      if (it == out.end()) it = out.insert(out.end(), {name, std::string()});
      into = &it->second;
    } else if (into) {
      into->append(line).push_back('\n');
    }
  }
  return out;
}

}  // namespace wb
