"""The decision-event patches (wblab/tracepatch.py, patches/trace/): every rule the event names
has a return site in some series, each policy's hook is labelled in the series that carry it, and
an edit whose anchor is gone fails naming it."""
import re

import pytest

from wblab import tracepatch
from kerneltree import POLICIES, TRACE, GATED

RULES_H = (tracepatch.HEADERS / "wb_decision_trace.h").read_text()
ENUM_H = (tracepatch.HEADERS / "wb_decision.h").read_text()
HOOKS = {"sync-pair": "WB_HOOK_AFTER_WAKE_AFFINE", "sync-2017": "WB_HOOK_BEFORE_DOMAIN_WALK",
         "sync-core-v2": "WB_HOOK_SYNC_CORE"}


def rule_sites(series):
    """The rules a series' patch returns or sets outside the two new headers."""
    text = (TRACE / f"{series}.patch").read_text()
    code = text.split("diff --git a/kernel/sched/wb_decision.h")[0]
    return set(re.findall(r"\b(WB_[A-Z0-9_]+)\b", "\n".join(
        line for line in code.splitlines() if line.startswith("+"))))


def test_every_rule_of_the_event_is_set_somewhere():
    names = re.findall(r"\{ (WB_\w+), \"\w+\" \}", RULES_H.split("TRACE_EVENT(")[0])
    enum = re.findall(r"^\t(WB_\w+),$", ENUM_H, re.M)
    assert names == enum  # the printed names follow the enum, one each
    everywhere = set().union(*(rule_sites(s) for s in list(POLICIES) + [GATED]))
    unset = [n for n in names if n not in everywhere and n != "WB_RULE_NONE"]
    assert unset == []


@pytest.mark.parametrize("series", list(POLICIES) + [GATED])
def test_each_policy_hook_is_labelled_where_the_series_carries_it(series):
    sites = rule_sites(series)
    for policy, rule in HOOKS.items():
        assert (rule in sites) == (series in (policy, GATED)), (series, rule)


def test_an_edit_whose_anchor_is_gone_fails_naming_it():
    fair = "#include \"autogroup.h\"\n"
    with pytest.raises(tracepatch.EditError, match="fair.c record_wakee: expected one match"):
        tracepatch.instrument_fair(fair)
