"""`wargraph prepare` for every game family: which family a description asks for, and a scenario
of that family written from it.

The family is picked by the words of the description (a "tabletop exercise" is a tabletop
game, "1914" a historical WarAgent one ...), or named with `--family`. A crisis scenario is
written whole by the control (wargraph.runs.posthoc.prepare_scenario). Any other family's scenario
starts from one of its shipped scenarios — its rules, board and cards stay as they are — and
the control writes the title and setting, and the seats where the family's seats are free
(tabletop, flow, plug-ins): a Diplomacy game keeps its seven powers, a WarAgent game its
countries, a Blotto game its two sides. What is written is validated as a scenario before the
file is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from wargraph.kernel.scenario import ScenarioError, load_scenario, validate_data

DEFAULT_FAMILY = "crisis"

# Words that say which game a description asks for; a family's own name counts as well.
# Kept to words a person writing a request would use, each weighed 1.
FAMILY_WORDS: dict[str, tuple[str, ...]] = {
    "crisis": ("crisis", "wargame", "war game", "standoff", "escalation", "border", "strait"),
    "tabletop": (
        "tabletop", "table-top", "exercise", "drill", "incident", "cyber", "ransomware",
        "breach", "outage", "on-call", "on call", "incident response", "inject card",
    ),
    "waragent": (
        "history", "historical", "world war", "wwi", "wwii", "ww1", "ww2", "1914", "1939",
        "july crisis", "warring states", "century", "empire", "waragent",
    ),
    "diplomacy": (
        "diplomacy", "seven powers", "supply centre", "supply center", "1901", "convoy",
        "austria-hungary",
    ),
    "blotto": ("blotto", "fronts", "allocate forces", "battalions", "colonel blotto"),
    "flow": ("summit", "treaty", "talks", "water", "trade deal", "phases"),
}  # fmt: skip

# The shipped scenario each built-in family starts from.
TEMPLATES = {
    "tabletop": "haiwire",
    "waragent": "wwi",
    "diplomacy": "diplomacy",
    "blotto": "blotto",
    "flow": "summit",
}
FIXED_SEATS = {"diplomacy", "waragent", "blotto"}  # their seats are the game's board


@dataclass
class Choice:
    family: str
    why: str


def _count(words: tuple[str, ...], text: str) -> list[str]:
    return [w for w in words if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text)]


def choose_family(request: str, known: list[str] | None = None) -> Choice:
    """The family whose words the request uses most (ties: the order of FAMILY_WORDS, then
    plug-ins); no such word: the crisis game."""
    import wargraph.kernel.families as families

    names = known if known is not None else families.names()
    text = request.lower()
    best: tuple[int, str, list[str]] = (0, DEFAULT_FAMILY, [])
    for name in names:
        hits = _count((*FAMILY_WORDS.get(name, ()), name.replace("_", " ")), text)
        if len(set(hits)) > best[0]:
            best = (len(set(hits)), name, sorted(set(hits)))
    if not best[2]:
        return Choice(DEFAULT_FAMILY, "no word of the description names another game")
    return Choice(best[1], "the description says " + ", ".join(repr(w) for w in best[2]))


def template_of(family: str) -> tuple[str, dict[str, Any]]:
    """The shipped scenario a family's prepared scenario starts from: its name and raw data."""
    from wargraph.kernel.scenario import shipped_scenarios

    shipped = shipped_scenarios()
    ordered = [TEMPLATES[family]] if family in TEMPLATES else []
    ordered += sorted(shipped)
    for name in ordered:
        path = shipped.get(name)
        if path is None:
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("family", DEFAULT_FAMILY) == family:
            return name, data
    raise ScenarioError(
        f"prepare: the {family} family ships no scenario to start from; write one by hand "
        "(see `wargraph scenarios` for examples)"
    )


def prepare(
    request: str, *, family: str | None = None, model: str = "embedded", seed: int = 0
) -> tuple[dict[str, Any], str, Choice]:
    """(scenario data, "model" or "fallback", the family chosen and why); the data is valid."""
    import wargraph.kernel.families as families
    from wargraph.runs.posthoc import prepare_scenario

    if family is not None:
        if family not in families.names():
            raise ScenarioError(
                f"--family {family}: no such game family (families: {', '.join(families.names())})"
            )
        choice = Choice(family, "named with --family")
    else:
        choice = choose_family(request)
    if choice.family == DEFAULT_FAMILY:
        data, source = prepare_scenario(request, model=model, seed=seed)
        return data, source, choice
    name, data = template_of(choice.family)
    about = families.get(choice.family).description
    framed = f"{request.strip()}\n(The game to prepare: {about or choice.family}.)"
    written, source = prepare_scenario(framed, model=model, seed=seed)
    data = dict(data)
    data["title"] = written["title"]
    data["setting"] = request.strip() if source == "fallback" else written["setting"]
    if choice.family not in FIXED_SEATS and source != "fallback":
        with_seats = {**data, "players": written["players"]}
        try:
            validate_data(with_seats, "<prepared scenario>")
            data = with_seats
        except ScenarioError:
            pass  # the family wants seats of its own shape: the template's stay (documented)
    validate_data(data, f"<prepared {choice.family} scenario from {name}>")
    data["__template__"] = name
    return data, source, choice


def write_checked(data: dict[str, Any], path: Path, *, force: bool = False) -> Path:
    """Write the prepared scenario, a line saying where it came from first, and load it back as
    `wargraph play` will; a file that does not load is not left behind."""
    if path.exists() and not force:
        raise ScenarioError(f"{path} exists; give --force to replace it")
    data = dict(data)
    template = data.pop("__template__", None)
    head = (
        f"# Prepared by `wargraph prepare` from the shipped scenario {template!r}: its rules "
        "stay, the title and setting (and free seats) are new.\n"
        if template
        else "# Prepared by `wargraph prepare`.\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.yaml")
    tmp.write_text(
        head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    try:
        load_scenario(str(tmp))
    except ScenarioError:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(path)
    return path
