"""Scenario fuzzing: shipped scenario files of every family, mutated (fields dropped, retyped,
renamed, nested wrongly, huge numbers, unicode) or garbled as text (YAML garbage, cut files,
bad bytes), give either a playable scenario or one ScenarioError whose message names the file —
never another exception — and `wargraph validate` answers with exit code 2 and no traceback."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.reliability._support import FAMILIES
from wargraph.cli import app
from wargraph.kernel.scenario import ScenarioError, shipped_scenarios
from wargraph.runs.runner import check_scenario

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
runner = CliRunner()


def shipped_of_landed_families() -> dict[str, str]:
    """name -> YAML text of every shipped scenario whose family has landed."""
    landed = {f.name for f in FAMILIES if f.landed}
    out = {}
    for name, path in sorted(shipped_scenarios().items()):
        text = path.read_text(encoding="utf-8")
        family = (yaml.safe_load(text) or {}).get("family", "crisis")
        if family in landed:
            out[name] = text
    return out


TEXTS = shipped_of_landed_families()
DATA = {name: yaml.safe_load(text) for name, text in TEXTS.items()}


def outcome(path: Path) -> str | None:
    """None for a good scenario, else the one error message; anything else escapes and fails."""
    try:
        check_scenario(str(path))
    except ScenarioError as err:
        message = str(err)
        assert message.strip(), "an empty error message"
        assert str(path) in message, f"the message does not name the file: {message[:300]}"
        assert "Traceback" not in message
        assert len(message) < 4000, f"not one clear error but {len(message)} characters"
        return message
    return None


def cli_agrees(path: Path, message: str | None) -> None:
    result = runner.invoke(app, ["validate", str(path)], env={"COLUMNS": "2000"})
    output = result.output
    assert "Traceback" not in output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    if message is None:
        assert result.exit_code == 0, output
    else:
        assert result.exit_code == 2, output
        assert path.name in output.replace("\n", ""), output


# --- mutations of the data ------------------------------------------------------------------------

WEIRD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.just(10**100),
    st.just(-(10**18)),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40),
    st.sampled_from(["", "🙂" * 50, "\u202eRTL", "zero\u200bwidth", "Ω≈ç√∫", "x" * 10_000]),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


@st.composite
def path_into(draw, data: Any) -> list[Any]:
    """A random walk from the top of the scenario into one of its values."""
    path: list[Any] = []
    node = data
    while isinstance(node, dict | list) and node and draw(st.integers(0, 3)) > 0:
        key = draw(st.sampled_from(list(node) if isinstance(node, dict) else range(len(node))))
        path.append(key)
        node = node[key]
    return path


def parent_of(data: Any, path: list[Any]) -> tuple[Any, Any]:
    node = data
    for key in path[:-1]:
        node = node[key]
    return node, path[-1]


@st.composite
def mutated_data(draw) -> dict[str, Any]:
    data = copy.deepcopy(DATA[draw(st.sampled_from(sorted(DATA)))])
    for _ in range(draw(st.integers(1, 3))):
        path = draw(path_into(data))
        if not path:
            continue
        parent, key = parent_of(data, path)
        value = parent[key]
        op = draw(st.sampled_from(["drop", "retype", "rename", "wrap", "unwrap", "move", "empty"]))
        if op == "drop":
            del parent[key]
        elif op == "retype":
            parent[key] = draw(WEIRD)
        elif op == "rename" and isinstance(parent, dict):
            new = draw(st.sampled_from([f"{key}s", str(key).upper(), f"{key} ", "", "ünïcode"]))
            parent[new] = parent.pop(key)
        elif op == "wrap":
            parent[key] = draw(st.sampled_from([[value], {"value": value}, {str(key): value}]))
        elif op == "unwrap" and isinstance(value, dict | list) and value:
            parent[key] = next(iter(value.values())) if isinstance(value, dict) else value[0]
        elif op == "move":
            target = draw(path_into(data))
            if target and target[: len(path)] != path:
                dest, dkey = parent_of(data, target)
                if isinstance(dest, dict):
                    dest[dkey] = copy.deepcopy(value)
        elif op == "empty":
            parent[key] = draw(st.sampled_from([{}, [], "", 0]))
    return data


def dump(data: Any) -> str:
    try:
        return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    except yaml.YAMLError:
        return str(data)


@FUZZ
@given(data=mutated_data())
def test_mutated_fields_give_a_playable_scenario_or_one_clear_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "mutated.yaml"
    path.write_text(dump(data), encoding="utf-8")
    cli_agrees(path, outcome(path))


# --- garbled text ----------------------------------------------------------------------------------


@st.composite
def garbled_text(draw) -> bytes:
    text = TEXTS[draw(st.sampled_from(sorted(TEXTS)))]
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        op = draw(st.sampled_from(["delete", "duplicate", "garbage", "indent", "tab", "cut"]))
        if not lines:
            break
        if op == "delete":
            lines.pop(i)
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "garbage":
            junk = draw(st.sampled_from(["{", "]", ": :", "- - -", "&a *b", "!!binary", '"', "%"]))
            at = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:at] + junk + lines[i][at:]
        elif op == "indent":
            lines[i] = " " * draw(st.integers(1, 5)) + lines[i]
        elif op == "tab":
            lines[i] = "\t" + lines[i]
        elif op == "cut":
            lines = lines[:i]
    raw = "".join(lines).encode("utf-8")
    if draw(st.integers(0, 9)) == 0:
        raw = raw + b"\xff\xfe bad bytes"
    return raw


@FUZZ
@given(raw=garbled_text())
def test_garbled_files_give_a_playable_scenario_or_one_clear_error(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("fuzz") / "garbled.yaml"
    path.write_bytes(raw)
    cli_agrees(path, outcome(path))


# --- the classics, every time ------------------------------------------------------------------

HEAD = "title: t\nsetting: s\n"
CLASSICS = {
    "empty": "",
    "a list at the top": "- title\n- setting\n",
    "a scalar at the top": "just words\n",
    "deep nesting": "title: " + "[" * 20_000 + "]" * 20_000 + "\nsetting: s\n",
    "a huge integer": HEAD + "rounds: 1" + "0" * 5000 + "\n",
    "a huge float": HEAD + "rounds: 1e999\n",
    "a negative round count": HEAD + "rounds: -3\n",
    "infinite temperature": HEAD + "players: {p: {temperature: .inf}}\n",
    "NaN temperature": HEAD + "players: {p: {temperature: .nan}}\n",
    "an unknown family": "family: chess\n" + HEAD,
    "a family that is a list": "family: [crisis]\n" + HEAD,
    "a python tag": "title: !!python/object/apply:os.system [ls]\nsetting: s\n",
    "a NUL byte": "title: a\x00b\nsetting: s\n",
    "a tab indent": "title: t\nplayers:\n\tp: {}\nsetting: s\n",
    "an unclosed quote": 'title: "t\nsetting: s\n',
    "a flow with an unknown phase": HEAD + "flow: {phases: [dance]}\n",
    "a flow with no phases": HEAD + "family: flow\nflow: {phases: []}\n",
    "players as a list": HEAD + "players: [a, b]\n",
    "a team of strangers": HEAD + "players: {a: {}}\nteams: {t: {members: [zz], leader: a}}\n",
    "an alias bomb": (
        HEAD
        + "x1: &a [q, q, q, q, q, q, q, q, q]\nx2: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        + "x3: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nx4: &d [*c, *c, *c, *c, *c, *c, *c]\n"
    ),
    "unicode names": HEAD + "players: {'🙂': {persona: '\u202eevil'}, 'zero\u200bwidth': {}}\n",
}


@pytest.mark.parametrize("case", sorted(CLASSICS))
def test_classic_bad_files(case, tmp_path):
    path = tmp_path / "classic.yaml"
    path.write_text(CLASSICS[case], encoding="utf-8")
    message = outcome(path)
    if case != "unicode names":
        assert message is not None, f"{case}: accepted"
    cli_agrees(path, message)


def test_bad_bytes_and_a_missing_file(tmp_path):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"\xff\xfe\x00\x81garbage")
    cli_agrees(path, outcome(path))
    missing = tmp_path / "nowhere.yaml"
    cli_agrees(missing, outcome(missing))


def test_the_fuzzers_mutate_every_family():
    """The mutations start from a scenario of every family that has landed."""
    families = {str(d.get("family", "crisis")) for d in DATA.values()}
    assert {f.name for f in FAMILIES if f.landed} <= families
    assert not math.isnan(len(DATA))
