"""A game family's own command-line options (`Family.play_options`, `Family.eval_options`).

`wargraph play diplomacy --max-year 1902`: the generic `play` does not know `--max-year`; the
Diplomacy family declares it (as the scenario override `diplomacy.max_year`). A command built on
`PlayCommand` or `EvalCommand` sets aside every long option it does not know, with its value,
before Click parses the rest; once the command knows the game's family, `parse` reads them
against that family's declared options, so an option the family does not declare is one clear
error naming it and the family's own.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

if TYPE_CHECKING:  # the Context Typer's commands are parsed with (Typer ships its own Click)
    from typer._click import Context as ClickContext

import wargraph.kernel.families as families
from wargraph.kernel.families import FamilyError, Option

Given = list[tuple[str, str | None]]
"""The options set aside, as typed: (flag, value or None when no value followed)."""
_META = "wargraph.family_args"


def split(args: list[str], own: dict[str, bool]) -> tuple[list[str], Given]:
    """The command's own arguments, and the long options it does not know with their values
    (`--flag VALUE` or `--flag=VALUE`; a VALUE cannot start with `--`). `own`: each option of
    the command and whether it takes a value (kept with it, even one that looks like an option)."""
    kept: list[str] = []
    given: Given = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":  # everything after is positional
            kept += args[i:]
            break
        flag, eq, value = arg.partition("=")
        if arg.startswith("--") and flag not in own:
            nxt = args[i + 1] if i + 1 < len(args) else None
            if eq:
                given.append((flag, value))
            elif nxt is not None and not nxt.startswith("--"):
                given.append((flag, nxt))
                i += 1
            else:  # no value follows: said when the family's options are read
                given.append((flag, None))
            i += 1
            continue
        takes = own.get(arg, False)
        kept += args[i : i + 2] if takes else [arg]
        i += 2 if takes else 1
    return kept, given


def pending(ctx: typer.Context) -> bool:
    """Whether the command was given options it left to the game's family."""
    return bool(ctx.meta.get(_META, ([], []))[0])


def values(ctx: typer.Context, family: str, field: str, command: str) -> dict[str, str]:
    """`{option key: value}` of the family options given to the command, read against the
    family's declared ones (`field`: "play_options" or "eval_options")."""
    extra, own = ctx.meta.get(_META, ([], []))
    options = check(ctx, family, field, command)
    return parse(options, extra, family, field, command, own) if extra else {}


def check(ctx: typer.Context, family: str, field: str, command: str) -> tuple[Option, ...]:
    """The family's options of that kind, none named like one of the command's own (which would
    always win, leaving the family's unreachable)."""
    own = ctx.meta.get(_META, ([], []))[1]
    options: tuple[Option, ...] = getattr(families.load(family), field)
    for opt in options:
        if opt.flag in own:
            raise FamilyError(
                f"family {family!r}: its {field} {opt.flag} is an option of {command} itself; "
                "the family must name it otherwise"
            )
    return options


def parse(
    options: tuple[Option, ...],
    given: Given,
    family: str,
    field: str,
    command: str,
    own: list[str] = [],
) -> dict[str, str]:
    """`{option key: value}` for the options given, read against the family's own (`own`: the
    command's own flags, for "did you mean")."""
    by_flag = {o.flag: o for o in options}
    out: dict[str, str] = {}
    for flag, value in given:
        opt = by_flag.get(flag)
        if opt is None:
            raise FamilyError(f"{command}: {_unknown(flag, family, options, field, own)}")
        if value is None:
            raise FamilyError(f"{command}: {flag} needs a value ({opt.metavar})")
        out[opt.key] = value
    return out


def _unknown(
    flag: str, family: str, options: tuple[Option, ...], field: str, own: list[str]
) -> str:
    mine = ", ".join(o.flag for o in options)
    text = f"no option {flag} for a {family} game"
    text += f" (its own: {mine})" if mine else f" ({family} games take no options of their own)"
    elsewhere = [n for n, opts in _builtin_options(field).items() if flag in {o.flag for o in opts}]
    if elsewhere:
        return text + f"; {flag} is an option of {' and '.join(elsewhere)} games"
    near = difflib.get_close_matches(flag, [o.flag for o in options] + own, n=1)
    return text + (f"; did you mean {near[0]}?" if near else "")


def _builtin_options(field: str) -> dict[str, tuple[Option, ...]]:
    """Each built-in family's options of that kind (their entries are light: nothing of their
    game is imported; plug-ins are not imported for a help text)."""
    out = {}
    for name in families.builtin_names():
        opts = getattr(families.get(name), field)
        if opts:
            out[name] = opts
    return out


class _FamilyCommand(TyperCommand):
    """A Typer command that also takes the options of the game's family."""

    FIELD = "play_options"
    INTRO = ""

    def parse_args(self, ctx: ClickContext, args: list[str]) -> list[str]:
        own: dict[str, bool] = {}
        for p in self.get_params(ctx):
            if p.param_type_name == "option":  # Typer's options and Click's own --help
                for opt in (*p.opts, *p.secondary_opts):
                    # typed as a Parameter; told an Option by its name, not its class
                    own[opt] = not p.is_flag and not p.count  # type: ignore[attr-defined]
        kept, extra = split(args, own)
        ctx.meta[_META] = (extra, [o for o in own if o.startswith("--")])
        return super().parse_args(ctx, kept)

    @property
    def epilog(self) -> str | None:  # read when help is shown, not when the CLI is built
        lines = [
            f"{name}: " + "; ".join(f"{o.flag} {o.metavar}  {o.help}".rstrip() for o in opts)
            for name, opts in _builtin_options(self.FIELD).items()
        ]
        return f"{self.INTRO}\n\n" + "\n\n".join(lines) if lines else None

    @epilog.setter
    def epilog(self, value: Any) -> None:  # Click sets it; the families' options replace it
        pass


class PlayCommand(_FamilyCommand):
    FIELD = "play_options"
    INTRO = "Options of a game family (after the scenario), each a --set override:"


class EvalCommand(_FamilyCommand):
    FIELD = "eval_options"
    INTRO = "Options of a family's eval:"
