"""A person at a terminal answers a seat's question field by field, read from the question's
JSON schema: a choice by its number or (the start of) its name, a list item by item, Enter for a
field's default. A JSON object pasted at the first field is still a whole answer (for scripts and
for people who prefer it).

A field's own mistakes (a choice that is not one, text over its length, a word for a number) are
asked again at once; the whole answer is still checked by the seat (`parse_answer`), which sends
it back with the error as before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wargraph.seats.terminal import plain

Ask = Callable[[str], str]  # input(): raises EOFError when standard input ends
Say = Callable[[str], None]

HOW = (
    "Answer field by field: Enter takes the value in [brackets], a number or the start of a "
    "name picks a choice. Or paste one JSON object on one line."
)
# choices shown on the prompt line itself up to this length, else listed one per line above it
INLINE_CHOICES = 90


def field_hint(spec: dict[str, Any]) -> str:
    """What a field takes, in words: "one of [...]", "text", "a list of up to 2 {...}"."""
    if "enum" in spec:
        return "one of " + ", ".join(map(str, spec["enum"]))
    if spec.get("type") == "array":
        most = f"up to {spec['maxItems']} " if "maxItems" in spec else ""
        item = spec.get("items", {})
        inner = item.get("properties")
        what = (
            "{" + "; ".join(f"{k}: {field_hint(v)}" for k, v in inner.items()) + "}"
            if inner
            else field_hint(item)
        )
        return f"a list of {most}{what}"
    return {"string": "text", "integer": "a whole number", "boolean": "true or false"}.get(
        str(spec.get("type")), str(spec.get("type", "a value"))
    )


def example(props: dict[str, Any]) -> dict[str, Any]:
    """A well-formed answer to show beside the hints: each field's default or first choice."""

    def value(spec: dict[str, Any]) -> Any:
        if "default" in spec and spec["default"] not in ([], None, ""):
            return spec["default"]
        if spec.get("enum"):
            return next((o for o in spec["enum"] if o != ""), spec["enum"][0])
        if spec.get("type") == "array":
            return [value(spec.get("items", {}))]
        if "properties" in spec:
            return {k: value(v) for k, v in spec["properties"].items()}
        return {"string": "...", "integer": 0, "number": 0, "boolean": False}.get(
            str(spec.get("type")), "..."
        )

    return {name: value(spec) for name, spec in props.items()}


class PastedJSON(Exception):
    """The person pasted a whole answer as JSON at the first field."""

    def __init__(self, line: str) -> None:
        super().__init__("pasted JSON")
        self.line = line


class _Form:
    def __init__(self, ask: Ask, say: Say) -> None:
        self._ask = ask
        self.say = say
        self.first = True
        self.listed: set[tuple[Any, ...]] = set()

    def ask(self, prompt: str) -> str:
        line = self._ask(plain(prompt))
        if self.first and line.lstrip().startswith("{"):
            raise PastedJSON(line)
        self.first = False
        return line.strip()


def fill_in(schema: dict[str, Any], ask: Ask, say: Say) -> dict[str, Any] | str:
    """The person's answer to `schema`: a dict built field by field, or the JSON line pasted."""
    form = _Form(ask, say)
    try:
        return _object(form, schema, label="")
    except PastedJSON as pasted:
        return pasted.line


def _object(form: _Form, schema: dict[str, Any], label: str) -> dict[str, Any]:
    required = set(schema.get("required", []))
    answer: dict[str, Any] = {}
    for name, spec in schema.get("properties", {}).items():
        field = f"{label}, {name}" if label else name
        value = _value(form, _concrete(spec), field, name in required)
        if value is not _OMIT:
            answer[name] = value
    return answer


_OMIT = object()


def _concrete(spec: dict[str, Any]) -> dict[str, Any]:
    """An optional field (`anyOf` with null) asked as its non-null form."""
    for option in spec.get("anyOf", []):
        if option.get("type") != "null":
            return {**option, **{k: v for k, v in spec.items() if k != "anyOf"}}
    return spec


def _value(form: _Form, spec: dict[str, Any], field: str, required: bool) -> Any:
    if "enum" in spec:
        return _choice(form, spec, field, required)
    kind = spec.get("type")
    if kind == "array":
        return _list(form, spec, field)
    if kind == "object" and "properties" in spec:
        return _object(form, spec, field)
    if kind in ("integer", "number"):
        return _number(form, spec, field, required)
    if kind == "boolean":
        return _yes_no(form, spec, field, required)
    return _text(form, spec, field, required)


def _default(spec: dict[str, Any]) -> tuple[bool, Any]:
    if "default" in spec and spec["default"] not in ([], None):
        return True, spec["default"]
    return False, None


def _bracket(spec: dict[str, Any]) -> str:
    has, default = _default(spec)
    if isinstance(default, bool):
        default = "yes" if default else "no"
    return f" [{default}]" if has and default != "" else ""


class _Again(ValueError):
    """A line that is not an answer to its field; the message says why."""


def _until(
    form: _Form,
    prompt: str,
    spec: dict[str, Any],
    field: str,
    required: bool,
    parse: Callable[[str], Any],
    needed: str = "an answer is needed here.",
) -> Any:
    """Ask until a line is an answer (`parse` raises _Again with the reason otherwise). Enter on
    an empty line gives the default, nothing for an optional field (_OMIT), or asks again."""
    while True:
        line = form.ask(prompt)
        if not line:
            has, default = _default(spec)
            if has:
                return default
            if not required:
                return _OMIT
            form.say(f"{field}: {needed}")
            continue
        try:
            return parse(line)
        except _Again as again:
            form.say(f"{field}: {again}")


def _choice(form: _Form, spec: dict[str, Any], field: str, required: bool) -> Any:
    options = [o for o in spec["enum"] if o != ""] or list(spec["enum"])
    numbered = ", ".join(f"{i} {o}" for i, o in enumerate(options, 1))
    if len(numbered) > INLINE_CHOICES:
        above = ""
        if tuple(options) in form.listed:  # a list's later items: the choices once is enough
            above = ", listed above"
        else:
            form.listed.add(tuple(options))
            for i, option in enumerate(options, 1):
                form.say(f"  {i:>2} {option}")
        prompt = f"{field} (number or name{above}){_bracket(spec)}: "
    else:
        prompt = f"{field} ({numbered}){_bracket(spec)}: "

    def parse(line: str) -> Any:
        picked = pick(line, options)
        if picked is None:
            raise _Again(f"{line!r} is none of the choices; give its number or its name.")
        return picked

    return _until(form, prompt, spec, field, required, parse)


def pick(line: str, options: list[Any]) -> Any | None:
    """The option `line` names: its number (from 1), its name in any case, or the one name it
    starts; None when it names none or several."""
    if line.isdigit() and 1 <= int(line) <= len(options):
        return options[int(line) - 1]
    low = line.casefold()
    exact = [o for o in options if str(o).casefold() == low]
    starts = [o for o in options if str(o).casefold().startswith(low)]
    found = exact or starts
    return found[0] if len(found) == 1 else None


def _text(form: _Form, spec: dict[str, Any], field: str, required: bool) -> Any:
    most = spec.get("maxLength")
    least = spec.get("minLength", 0)
    if required and least == 0 and not _default(spec)[0]:
        spec = {**spec, "default": ""}  # required but may be empty: Enter leaves it empty

    def parse(line: str) -> str:
        if most and len(line) > most:
            raise _Again(f"{len(line)} characters, the most is {most}; write it shorter.")
        if len(line) < least:
            raise _Again(f"at least {least} characters.")
        return line

    limit = f" (up to {most} characters)" if most else ""
    prompt = f"{field}{limit}{_bracket(spec)}: "
    return _until(form, prompt, spec, field, required, parse, "some text is needed here.")


def _number(form: _Form, spec: dict[str, Any], field: str, required: bool) -> Any:
    low, high = spec.get("minimum"), spec.get("maximum")
    span = f" from {low}" if low is not None else ""
    span += f" to {high}" if high is not None else ""
    what = "a whole number" if spec.get("type") == "integer" else "a number"

    def parse(line: str) -> float | int:
        try:
            number: float | int = int(line) if what == "a whole number" else float(line)
        except ValueError:
            raise _Again(f"{line!r} is not {what}.") from None
        if (low is not None and number < low) or (high is not None and number > high):
            raise _Again(f"{number} is out of range{span}.")
        return number

    return _until(form, f"{field} ({what}{span}){_bracket(spec)}: ", spec, field, required, parse)


def _yes_no(form: _Form, spec: dict[str, Any], field: str, required: bool) -> Any:
    def parse(line: str) -> bool:
        if line.casefold() in ("y", "yes", "true"):
            return True
        if line.casefold() in ("n", "no", "false"):
            return False
        raise _Again("answer yes or no.")

    return _until(form, f"{field} (yes or no){_bracket(spec)}: ", spec, field, required, parse)


def _list(form: _Form, spec: dict[str, Any], field: str) -> list[Any]:
    """Items one after another until Enter on an item's first field (or the list is full)."""
    item = _concrete(spec.get("items", {}))
    least, most = spec.get("minItems", 0), spec.get("maxItems")
    form.say(
        f"{field}: {'up to ' + str(most) if most else 'any number of'} "
        f"{'item' if most == 1 else 'items'}"
        + (f", at least {least}" if least else "")
        + "; Enter at an item's first field ends the list."
    )
    items: list[Any] = []
    while most is None or len(items) < most:
        label = f"{field} {len(items) + 1}"
        value = _item(form, item, label, ends=len(items) >= least)
        if value is _OMIT:
            break
        items.append(value)
    return items


def _item(form: _Form, item: dict[str, Any], label: str, ends: bool) -> Any:
    """One list item; _OMIT when the person ends the list at its first field (if `ends`)."""
    if item.get("type") == "object" and "properties" in item:
        props = list(item["properties"].items())
        if not props:
            return {}
        (name, spec), rest = props[0], props[1:]
        first = _value(form, _ending(spec, ends), f"{label}, {name}", required=not ends)
        if first is _OMIT:
            return _OMIT
        value = {name: first}
        required = set(item.get("required", []))
        for name, spec in rest:
            got = _value(form, _concrete(spec), f"{label}, {name}", name in required)
            if got is not _OMIT:
                value[name] = got
        return value
    return _value(form, _ending(item, ends), label, required=not ends)


def _ending(spec: dict[str, Any], ends: bool) -> dict[str, Any]:
    """An item's first field: when the list may end here, Enter ends it (no default taken)."""
    spec = _concrete(spec)
    return {k: v for k, v in spec.items() if k != "default"} if ends else spec
