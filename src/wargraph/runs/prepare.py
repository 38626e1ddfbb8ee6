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
from wargraph.runs.prepare_check import MIN_CARD_WORDS, answer_problems

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


@dataclass
class Prepared:
    """A prepared scenario (valid), where it came from ("model" or "fallback"), the family and
    why, why the model's answers were not used (empty when one was), and what the shipped
    scenario it started from gave besides its rules (to read and edit before playing)."""

    data: dict[str, Any]
    source: str
    choice: Choice
    problems: list[str]
    kept: list[str]


# A tabletop prepared from a description asks about any incident, not the template's bank.
# The shipped drill for any incident: its questions close every prepared tabletop; its seats and
# deck are dealt when the model's answer has none usable (the description is then the card).
GENERIC_DRILL = "incident_drill"


def generic_drill() -> dict[str, Any]:
    """The shipped generic drill's data (`scenarios/tabletop/incident_drill.yaml`)."""
    from wargraph.kernel.scenario import shipped_scenarios

    data = yaml.safe_load(shipped_scenarios()[GENERIC_DRILL].read_text(encoding="utf-8"))
    return dict(data)


FRAMING = {
    "tabletop": "The first inject is the incident that opens the exercise; the others are "
    "developments that land on the responders while they handle it.",
}


def _written(
    request: str, framed: str, model: str, seed: int, attempts: int
) -> tuple[dict[str, Any], str, list[str]]:
    """The control's scenario for `framed`, checked against `request`'s own words; an answer
    that does not fit is asked again with the next seed, then the fallback (the description as
    the setting) is used: (data, source, why each answer was refused)."""
    from wargraph.runs.posthoc import fallback_answer, prepare_scenario, scenario_of_answer

    problems: list[str] = []
    for attempt in range(attempts):
        data, source = prepare_scenario(framed, model=model, seed=seed + attempt)
        if source == "fallback":
            problems.append("the model gave no usable answer (see the trace)")
            continue
        why = answer_problems(
            request,
            data["title"],
            data["setting"],
            data["players"],
        )
        if not why:
            return data, source, problems
        problems.append("; ".join(why))
    return scenario_of_answer(fallback_answer(request), request), "fallback", problems


def _names(players: Any) -> str:
    return ", ".join(players) if isinstance(players, dict) else "?"


def prepare(
    request: str,
    *,
    family: str | None = None,
    model: str = "embedded",
    seed: int = 0,
    attempts: int = 2,
) -> Prepared:
    """The scenario a description asks for (valid), or, when the model's answers do not fit the
    description, the documented fallback with what was kept said."""
    import wargraph.kernel.families as families

    if not request.strip():
        raise ScenarioError("prepare: the prompt is empty; describe the game in a sentence")
    if family is not None:
        if family not in families.names():
            raise ScenarioError(
                f"--family {family}: no such game family (families: {', '.join(families.names())})"
            )
        choice = Choice(family, "named with --family")
    else:
        choice = choose_family(request)
    if choice.family == DEFAULT_FAMILY:
        data, source, problems = _written(request, request, model, seed, attempts)
        sides = [f"two plain sides ({_names(data['players'])})"] if source == "fallback" else []
        return Prepared(data, source, choice, problems, sides)
    name, data = template_of(choice.family)
    about = families.get(choice.family).description
    framed = f"{request.strip()}\n(The game to prepare: {about or choice.family}.)"
    if choice.family in FRAMING:
        framed += "\n" + FRAMING[choice.family]
    written, source, problems = _written(request, framed, model, seed, attempts)
    data = dict(data)
    data["title"] = written["title"]
    data["setting"] = request.strip() if source == "fallback" else written["setting"]
    kept: list[str] = []
    if choice.family == "tabletop" and source == "fallback":
        responders = generic_drill()["players"]
        data, _ = _with_seats(data, {"players": responders}, "tabletop")
        data, _ = _tabletop_cards(data, {**written, "setting": request.strip(), "injects": []})
        kept.append(
            f"generic responder seats ({_names(responders)}), the description as the "
            f"incident card and a generic inject deck (from {GENERIC_DRILL!r})"
        )
    elif choice.family in FIXED_SEATS:
        pass  # the seats are the game's board (documented)
    elif source == "fallback":
        kept.append(f"the seats of {name!r} ({_names(data.get('players'))})")
    else:
        data, refused = _with_seats(data, written, choice.family)
        if refused:
            kept.append(f"the seats of {name!r} ({_names(data.get('players'))}): {refused}")
    if choice.family == "tabletop" and source != "fallback":
        data, why = _tabletop_cards(data, written)
        if why:
            kept.append(f"a generic inject deck: {why}")
    validate_data(data, f"<prepared {choice.family} scenario from {name}>")
    data["__template__"] = name
    return Prepared(data, source, choice, problems, kept)


def _with_seats(
    data: dict[str, Any], written: dict[str, Any], family: str
) -> tuple[dict[str, Any], str]:
    """The written seats in place of the template's (its teams go: they name its seats); the
    template unchanged and the reason when the family does not take them."""
    with_seats = {**data, "players": written["players"]}
    with_seats.pop("teams", None)
    try:
        validate_data(with_seats, f"<prepared {family} scenario>")
    except ScenarioError as err:
        return data, f"the written seats do not fit the {family} family ({err})"
    return with_seats, ""


def _tabletop_cards(data: dict[str, Any], written: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The deck written from the answer: the first inject is the incident card (the setting
    is, when only one inject is an event told in a sentence), the others the inject deck; with
    none, the setting is the card and a generic deck is dealt (said). Generic questions."""
    texts = [
        str(i["text"]).strip()
        for i in written.get("injects") or []
        if len(str(i["text"]).split()) >= MIN_CARD_WORDS
    ]
    incident = texts.pop(0) if len(texts) > 1 else written["setting"]
    why = ""
    drill = generic_drill()
    if not texts:
        unusable = [str(i["text"])[:40] for i in written.get("injects") or []]
        texts = [str(card["text"]) for card in drill["tabletop"]["injects"]]
        why = "the model wrote no inject told in a sentence" + (
            f" ({'; '.join(map(repr, unusable))})" if unusable else ""
        )
    table = dict(data["tabletop"])
    table.pop("incident", None)  # a pinned card of the template is not in the new deck
    table["incidents"] = [
        {"id": "prepared", "title": written["title"][:120], "severity": 2, "text": incident}
    ]
    table["injects"] = [{"id": f"j{i + 1}", "text": t} for i, t in enumerate(texts)]
    table["injects_by_severity"] = dict.fromkeys((1, 2, 3), len(texts))
    return {**data, "tabletop": table, "questions": drill["questions"]}, why


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
