"""Outcome extraction: a judge model answers questions about a finished game's record, and the
game family's own measures are computed from the same record.

The judge is the control's post-hoc question (`wargraph.runs.posthoc.ask_record`, the `choice`
schema with its "undetermined" option): every question is multiple choice — yes/no when no
options are given — so outcomes can be counted. A judgement keeps its evidence as quoted
lines of the record: the judge's own evidence text is matched against the record's lines, and
only lines that are really there are kept as quotes (a judge cannot invent a quotation).
The scripted judge (model "scripted") is the scripted decider: deterministic, for tests.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import wargraph.kernel.families as families
from wargraph.kernel.state import EVERYONE
from wargraph.nodes.schemas import UNDETERMINED
from wargraph.runs.posthoc import ask_record

YES_NO = ["yes", "no"]
_NEGATIVE = {
    "unknown",
    "unclear",
    "undetermined",
    "undeterminable",
    "not determined",
    "n/a",
    "na",
    "none",
    "cannot tell",
    "cannot be determined",
    "not stated",
    "not enough information",
}
_SYNONYMS = {"y": "yes", "true": "yes", "yes": "yes", "n": "no", "false": "no", "no": "no"}


def options_of(options: list[str] | None) -> list[str]:
    """The answer options of a question; none given means yes/no."""
    return list(options) if options else list(YES_NO)


def _norm(text: Any) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s-]", " ", str(text).lower())).strip()


def map_choice(raw: Any, options: list[str]) -> str:
    """A judge's answer mapped onto one option, or "undetermined".

    Models not held to a grammar answer "Yes.", "NO", "yes, there was fighting" or "unclear";
    the mapping is: exact option (case and punctuation ignored) > yes/no synonym > the one
    option the answer starts with > "undetermined" (also for anything unrecognised).
    """
    if raw is None:
        return UNDETERMINED
    text = _norm(raw)
    if not text or text in _NEGATIVE:
        return UNDETERMINED
    by_norm = {_norm(o): o for o in options}
    if text in by_norm:
        return by_norm[text]
    if text == _norm(UNDETERMINED):
        return UNDETERMINED
    lowered = {o.lower() for o in options}
    if text in _SYNONYMS and _SYNONYMS[text] in lowered:
        return next(o for o in options if o.lower() == _SYNONYMS[text])
    first = text.split(" ")[0]
    if first in _SYNONYMS and _SYNONYMS[first] in lowered:
        return next(o for o in options if o.lower() == _SYNONYMS[first])
    starts = [o for n, o in by_norm.items() if n and (text.startswith(n + " ") or text == n)]
    if len(starts) == 1:
        return starts[0]
    return UNDETERMINED


# --- evidence -----------------------------------------------------------------------------------


def record_lines(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every non-empty line of the record's events, with where it comes from."""
    out = []
    for e in record.get("events", []):
        audience = e.get("audience") or [EVERYONE]
        for line in str(e.get("text", "")).splitlines():
            if line.strip():
                out.append(
                    {
                        "event": e.get("id", ""),
                        "round": e.get("round", 0),
                        "kind": e.get("kind", ""),
                        "author": e.get("author", ""),
                        "public": EVERYONE in audience,
                        "line": line.strip(),
                    }
                )
    return out


def _fragments(evidence: str) -> list[str]:
    """Pieces of the judge's evidence to look up: lines and sentences, quote marks removed."""
    pieces = []
    for line in str(evidence).splitlines():
        line = line.strip().lstrip(">").strip().strip("\"'“”‘’")
        pieces += [p.strip().strip("\"'“”‘’") for p in re.split(r"(?<=[.!?])\s+|\"|“|”", line)]
    return [p for p in pieces if len(_norm(p)) >= 12]


def find_quotes(evidence: str, record: Mapping[str, Any], limit: int = 5) -> list[dict[str, Any]]:
    """The record lines the judge's evidence quotes: `exact` when a fragment appears in a line
    verbatim (case, spacing and punctuation aside), `close` when at least 80% of a fragment's
    words are in one line. Nothing else counts as evidence."""
    lines = record_lines(record)
    normed = [_norm(item["line"]) for item in lines]
    found: dict[int, str] = {}
    for frag in _fragments(evidence):
        f = _norm(frag)
        exact = [i for i, n in enumerate(normed) if f in n]
        if exact:
            found.setdefault(exact[0], "exact")
            continue
        words = set(f.split())
        best, score = -1, 0.0
        for i, n in enumerate(normed):
            share = len(words & set(n.split())) / len(words)
            if share > score:
                best, score = i, share
        if best >= 0 and score >= 0.8:
            found.setdefault(best, "close")
    return [{**lines[i], "match": how} for i, how in sorted(found.items())][:limit]


# --- questions ------------------------------------------------------------------------------------

AskFn = Callable[..., dict[str, Any]]


def judge_question(
    record: Mapping[str, Any],
    *,
    qid: str,
    text: str,
    options: list[str] | None = None,
    model: str = "embedded",
    require_evidence: bool = False,
    ask: AskFn = ask_record,
) -> dict[str, Any]:
    """One judgement: the answer (an option or "undetermined"), the judge's evidence, the
    record lines it quotes, and where the answer came from (model, fallback, scripted).

    With `require_evidence`, an answer that quotes no line of the record becomes
    "undetermined" (the judge's raw answer is kept in `raw`)."""
    opts = options_of(options)
    reply = ask(dict(record), text, options=opts, model=model)
    raw = reply.get("choice")
    answer = map_choice(raw, opts)
    evidence = str(reply.get("evidence", "") or "")
    quotes = find_quotes(evidence, record)
    note = ""
    if require_evidence and answer != UNDETERMINED and not quotes:
        answer, note = UNDETERMINED, "no line of the record supports the answer"
    return {
        "id": qid,
        "question": text,
        "options": opts,
        "answer": answer,
        "raw": raw,
        "evidence": evidence,
        "quotes": quotes,
        "verified": any(q["match"] == "exact" for q in quotes),
        "source": reply.get("source", ""),
        "note": note,
    }


# --- the families' own measures ------------------------------------------------------------------

Measures = dict[str, float | int | bool]


def flatten_numbers(values: Mapping[str, Any], prefix: str = "") -> Measures:
    """Every number and boolean of a nested measure dict, under dotted names
    (`scores.FRANCE`, `orders_by_power.FRANCE.invalid_rate`); text, lists and NaN are left out."""
    out: Measures = {}
    for key, v in values.items():
        name = f"{prefix}{key}"
        if isinstance(v, bool | int | float):
            if v == v:  # NaN is not a measure
                out[name] = v
        elif isinstance(v, Mapping):
            out.update(flatten_numbers(v, f"{name}."))
    return out


def select_measures(measures: Measures, patterns: list[str] | None) -> Measures:
    """The measures an experiment keeps: those matching its glob patterns, or by default the
    top two levels (`alliance_ami`, `scores.FRANCE`; not `orders.by_type.move.count`)."""
    if patterns is None:
        return {k: v for k, v in measures.items() if k.count(".") <= 1}
    return {k: v for k, v in measures.items() if any(fnmatch.fnmatchcase(k, p) for p in patterns)}


def family_measures(
    record: Mapping[str, Any], record_path: str | Path, patterns: list[str] | None = None
) -> tuple[Measures, str]:
    """The family's measures of one game, and a note when they could not be computed.

    A family declares them on its entry (`Family.measures = "module:function"`, called with the
    record and its path): Diplomacy's scores, centres and order rates, WarAgent's accuracy,
    Blotto's scores and revisions, a plug-in's own. A family without them has none; a failure
    (a misspelled reference included) becomes the note and never stops the experiment."""
    spec = record.get("scenario") or {}
    family = str(spec.get("family", "crisis"))
    # every family's: the share of the characters given to the seats' views shown whole
    share = (record.get("view_coverage") or {}).get("share")
    common = {"view_coverage": float(share)} if isinstance(share, int | float) else {}
    try:
        measure = families.attribute(family, "measures")
        if measure is None:
            return select_measures(common, patterns), ""
        raw = measure(dict(record), Path(record_path))
    except families.FamilyError as exc:
        return {}, str(exc)
    except Exception as exc:  # a measure that fails is reported, never fatal to the experiment
        return {}, f"{family} measures failed: {type(exc).__name__}: {str(exc)[:200]}"
    if not isinstance(raw, Mapping):
        return {}, f"{family} measures returned {type(raw).__name__}, not a dict"
    return select_measures({**common, **flatten_numbers(raw)}, patterns), ""
