"""A family's hooks are checked against their signatures (`wargraph.kernel.hooks`) when the
family is first used: a hook wargraph cannot call as it calls hooks is an error naming the
family, the field, the reference and the call it must accept, before any game runs."""

from __future__ import annotations

import pytest

import wargraph.kernel.families as families
from wargraph import Family
from wargraph.kernel.hooks import HOOKS, mismatch


def measures_of_record_only(record):
    return {}


def measures_with_extras(record, path, *, weights=None):
    return {}


def label_needing_two(values, extra):
    return None


BASE = dict(
    scenario_class="wargraph.kernel.scenario:Scenario", graph="wargraph.graphs.crisis.graph"
)
SHORT = Family("short", **BASE, measures=f"{__name__}:measures_of_record_only")
EXTRAS = Family("extras", **BASE, measures=f"{__name__}:measures_with_extras")
LABEL = Family("label", **BASE, checkpoint_label=f"{__name__}:label_needing_two")


def test_a_hook_missing_a_parameter_names_family_field_and_call(entry_points):
    entry_points(short=f"{__name__}:SHORT")
    with pytest.raises(families.FamilyError) as err:
        families.load("short")
    why = str(err.value)
    assert "family 'short'" in why and "measures" in why and "measures_of_record_only" in why
    assert "takes (record)" in why and "measures(record, path)" in why
    assert "short" in families.problems()


def test_a_hook_with_a_required_extra_parameter_is_refused(entry_points):
    entry_points(label=f"{__name__}:LABEL")
    with pytest.raises(families.FamilyError, match=r"checkpoint_label\(values\)"):
        families.load("label")


def test_optional_extras_are_fine(entry_points):
    entry_points(extras=f"{__name__}:EXTRAS")
    assert families.load("extras") is EXTRAS


def test_every_builtin_hook_conforms():
    for name in families.builtin_names():
        fam = families.load(name)
        for field in HOOKS:
            if field in ("graph", "bot") or not getattr(fam, field, None):
                continue
            assert mismatch(field, families.attribute(name, field)) is None, (name, field)
