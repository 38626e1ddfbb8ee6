"""What the terminal shows: model and scenario text as inert text, and only what the people at
the terminal may see.

Text a model or a scenario file wrote is data: Rich would read `[/INST]` as markup (and fail),
and a terminal would obey escape sequences in it (colours, a changed window title, a cleared
screen). `safe` makes such text printable inside a markup string; `text` makes it a Rich `Text`.

With a person in a seat (`--human`, or a scenario seat of kind `human`), the game's progress
shows only the events every such seat may see; `--show all` is the facilitator's full view.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.text import Text

if TYPE_CHECKING:  # the CLI imports this module for every command: keep it light
    from wargraph.kernel.scenario import Scenario
    from wargraph.kernel.state import Event

SHOW_CHOICES: tuple[str, ...] = ("seats", "all")

# ESC sequences first (CSI with its parameters, OSC/DCS/APC/PM/SOS strings up to their end,
# two-character escapes), then any other C0 control but \n and \t, DEL and the C1 controls.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_].*?(?:\x07|\x1b\\|\x9c|(?=\n)|$)"
    r"|\x1b[ -~]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def plain(value: Any) -> str:
    """`value` as text without terminal control sequences (newlines and tabs kept)."""
    return _CONTROL.sub("", str(value))


def safe(value: Any) -> str:
    """`value` to place inside a Rich markup string: controls removed, brackets escaped."""
    return escape(plain(value))


def text(value: Any, style: str = "") -> Text:
    """`value` as a Rich Text (never read as markup), controls removed."""
    return Text(plain(value), style=style)


def seats_at_terminal(scenario: Scenario, humans: Iterable[str]) -> list[str]:
    """The seats people play here: `--human` ones and the scenario's own `kind: human` seats."""
    seats = dict.fromkeys(h for h in humans if h in scenario.roles)
    for name in scenario.roles:
        try:
            if scenario.role(name).kind == "human":
                seats[name] = None
        except KeyError:
            continue
    return list(seats)


def audience_filter(
    scenario: Scenario, humans: Iterable[str], show: str
) -> Callable[[Event], bool]:
    """Which events the progress may print. No person at the terminal, or `show == "all"`:
    every event. Otherwise only events that every person's seat may see (with several people at
    one terminal, what one of them may not see is not printed; each prompt shows its own seat's
    view when that seat is asked)."""
    from wargraph.kernel.views import can_see

    if show not in SHOW_CHOICES:
        raise ValueError(f"--show {show!r}: expected one of {', '.join(SHOW_CHOICES)}")
    seats = seats_at_terminal(scenario, humans)
    if show == "all" or not seats:
        return lambda event: True
    groups = [scenario.groups_of(seat) for seat in seats]
    return lambda event: all(can_see(event, g) for g in groups)
