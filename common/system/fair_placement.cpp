#include "common/system/fair_placement.h"

#include <sched.h>

#include <filesystem>

#include "common/system/kernel_files.h"
#include "common/util/text.h"

namespace wb {
namespace {

#ifndef SCHED_EXT
#define SCHED_EXT 7  // include/uapi/linux/sched.h, 6.12
#endif

// A file's trimmed text, "" when it cannot be read.
std::string text_of(const std::string& path) {
  std::string why;
  const auto text = read_text_file(path, &why);
  return text ? std::string(trim(*text)) : "";
}

// Why the RT or deadline class places tasks of `policy`, "" for a fair (or ext) policy.
std::string other_class(int policy) {
  if (policy == SCHED_FIFO || policy == SCHED_RR)
    return std::string("the run's tasks are ") +
           (policy == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR") +
           ": the RT class places them (select_task_rq_rt), not fair.c";
  if (policy == SCHED_DEADLINE)
    return "the run's tasks are SCHED_DEADLINE: the deadline class places them, not fair.c";
  return "";
}

// Why a sched_ext scheduler places the run's tasks, "" when none does (kernel/sched/ext.c's
// sysfs: state enabling/enabled/disabling/disabled, switch_all, root/ops).
std::string sched_ext(const std::string& root, int policy) {
  const std::string base = under_root(root, "/sys/kernel/sched_ext");
  const std::string state = text_of(base + "/state");
  if (state.empty() || state == "disabled") return "";
  const bool all = text_of(base + "/switch_all") != "0";  // unreadable: taken as every task
  if (!all && policy != SCHED_EXT) return "";             // partial mode: SCHED_EXT tasks only
  const std::string ops = text_of(base + "/root/ops");
  return "a sched_ext scheduler" + (ops.empty() ? std::string() : " (" + ops + ")") + " is " +
         state + (all ? " for every task" : " for SCHED_EXT tasks") +
         " (/sys/kernel/sched_ext): its select_cpu places the run's tasks, not fair.c";
}

}  // namespace

nlohmann::json probe_fair_placement(const std::string& root, std::optional<int> policy) {
  const int p = policy.value_or(::sched_getscheduler(0));
  std::string why = sched_ext(root, p);
  if (why.empty()) why = other_class(p);
  if (why.empty()) return {{"applies", true}};
  return {{"applies", false}, {"why", why}};
}

}  // namespace wb
