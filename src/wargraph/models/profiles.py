"""Model profiles: what a seat's model needs from wargraph, in one place (docs/model-profiles.md).

wargraph was tuned to make a 135M model produce well-formed games: prose stops at the first blank
line, answers start from given first words, misspelt side names and restated instructions are
repaired, over-long text is cut to its field's limit. The same help distorts what a capable model
says (a heading and a blank line ended its answer; "Italo-German" became "Italy-German"). So each
seat plays under a profile chosen from its model reference (`default_profile`) and overridable
per role in the scenario (`model_profile:`) and per run (`--profile`, `--role-profile`):

- `small`: the embedded model and GGUF files below SMALL_GGUF_BYTES: today's behaviour exactly;
- `capable`: OpenAI-compatible endpoints and larger GGUF files: nothing repaired, no stop that can
  end a well-formed answer, limits sized for such models and stated in the prompt, an over-long
  answer asked again once with its limit and only then cut, at a sentence or word end, with a
  `cut` line in the trace.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from wargraph.models.chat import ModelRef, ModelRefError, parse_model_ref

ProfileName = Literal["small", "capable"]
PROFILE_NAMES: tuple[ProfileName, ...] = ("small", "capable")
# A GGUF file this large or larger holds a model of about 3B parameters or more (a 3B model is
# ~1.9 GB at 4 bits, a 1.5B one ~1.1 GB at 5 bits); it plays under the capable profile.
SMALL_GGUF_BYTES = 2_500_000_000


class ProfileError(ModelRefError):
    """An unknown profile name, or one given for a seat the scenario does not have."""


@dataclass(frozen=True)
class Profile:
    """What a seat's model gets: how prose is asked, which repairs run, the limits, the waits."""

    name: ProfileName
    plain_stop: tuple[str, ...]
    """Stop sequences of a prose answer (none: the model ends its answer itself)."""
    plain_cap: int | None
    """Most tokens of a prose answer in process (None: the seat's own cap)."""
    plain_repeat_penalty: float | None
    """Repeat penalty of a prose answer in process (None: the model adapter's default)."""
    answer_start: bool
    """A local model's prose answer starts from the ask's given first words."""
    shape_plain: bool
    """Prose has its JSON dressing, fences and `Plan:` label peeled off, and is refused while JSON
    remains (wargraph.seats.plaintext.unwrap_text); off: kept as written (`as_written`)."""
    keep_names: bool
    """A local model's sampler keeps the sides' names whole (wargraph.models.sampling.NameKeeper)."""
    correct_names: bool
    """Near-misses of a side's name are replaced by the name (wargraph.seats.names)."""
    drop_echoes: bool
    """Sentences that restate the instructions are left out (wargraph.seats.echoes)."""
    reask_over_limit: bool
    """Text over its field's limit is asked again once with the limit stated, then cut at a
    sentence or word end with a `cut` trace line (False: cut to the limit as it stands)."""
    state_limits: bool
    """The prompt says each text field's limit in characters."""
    message_chars: int
    """Shortest limit of a message a seat sends (a scenario's smaller limit is raised to it)."""
    diary_chars: int
    """Shortest limit of a diary entry (Diplomacy's diary summary)."""
    min_tokens: int
    """Fewest tokens a call may use (a seat's smaller `max_tokens` is raised to it)."""
    call_timeout: float
    """Seconds one call may take when the run sets none (`--call-timeout`)."""
    retries: int
    """Transport retries per call when the run sets none."""
    context_tokens: int | None = None
    """The seat's view budget in tokens (estimated: `wargraph.kernel.views.estimate_tokens`):
    its view shows every text whole (the current and previous round's messages, its own latest
    plan, diary and goals, the board) and, over the budget, leaves whole items out oldest first
    and says so. None: the small profile's lean views, each section cut to its own budget."""

    def message_limit(self, chars: int) -> int:
        return max(chars, self.message_chars)

    def diary_limit(self, chars: int) -> int:
        return max(chars, self.diary_chars)

    def view_budget(self, seat: Mapping[str, Any] | None = None) -> int | None:
        """Tokens of a seat's view: the seat's own (`context_tokens:` of its role in the
        scenario, `--set players.X.context_tokens=N`), else the profile's; None: a lean view."""
        if self.context_tokens is None:
            return None
        named = (seat or {}).get("context_tokens")
        return int(named) if named else self.context_tokens


# Prose without a grammar for a small model: a stronger repeat penalty than JSON needs (it loops),
# a stop at the first blank line (answers are one paragraph; it otherwise rambles on with new
# "turns") or at a new line that opens like the quoted context ("[round 1, ...", "> ..."), which
# it imitates after its answer, and, in process, a cap near what a paragraph needs.
SMALL = Profile(
    name="small",
    plain_stop=("\n\n", "\n[", "\n>"),
    plain_cap=120,
    plain_repeat_penalty=1.2,
    answer_start=True,
    shape_plain=True,
    keep_names=True,
    correct_names=True,
    drop_echoes=True,
    reask_over_limit=False,
    state_limits=False,
    message_chars=0,
    diary_chars=0,
    min_tokens=0,
    call_timeout=60.0,
    retries=2,
)

# Capable models write headings, blank lines, lists and several-sentence messages: nothing of it
# is cut or rewritten; a slow endpoint (a 1.5B model behind llama.cpp's server: 64-105 s a plan)
# is waited for.
CAPABLE = Profile(
    name="capable",
    plain_stop=(),
    plain_cap=None,
    plain_repeat_penalty=None,
    answer_start=False,
    shape_plain=False,
    keep_names=False,
    correct_names=False,
    drop_echoes=False,
    reask_over_limit=True,
    state_limits=True,
    message_chars=1000,
    diary_chars=600,
    min_tokens=1024,
    call_timeout=300.0,
    retries=2,
    # a phase whole: a Diplomacy order prompt with two rounds of full press from six powers at
    # 1,000 characters each, the previous phase's talks, the diary and the board is ~9k tokens;
    # capable models read 32k to 1M (AI_Diplomacy's order prompt: ~2,500 tokens)
    context_tokens=16_000,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (SMALL, CAPABLE)}


def profile_named(name: str) -> Profile:
    if name not in PROFILES:
        raise ProfileError(f"profile {name!r}: expected one of {', '.join(PROFILE_NAMES)}")
    return PROFILES[name]


def default_profile(ref: ModelRef | str | None) -> ProfileName:
    """The profile a model reference plays under when nothing names one: small for the embedded
    model, scripted seats, bots and GGUF files under SMALL_GGUF_BYTES (or missing: loading them
    fails with its own message); capable for OpenAI-compatible endpoints, other LangChain providers and larger files."""
    ref = parse_model_ref(ref) if not isinstance(ref, ModelRef) else ref
    if ref.provider in ("openai", "langchain"):
        return "capable"
    if ref.provider == "gguf":
        try:
            return "capable" if os.path.getsize(ref.name) >= SMALL_GGUF_BYTES else "small"
        except OSError:
            return "small"
    return "small"


def seat_profile(seat: dict[str, Any] | Any) -> Profile:
    """The profile of a seat (`wargraph.seats.deciders.Seat`): the one it names, else its model's."""
    named = seat.get("profile") if isinstance(seat, dict) else None
    if named:
        return profile_named(str(named))
    try:
        return profile_named(default_profile(seat.get("model") if isinstance(seat, dict) else None))
    except ModelRefError:  # a broken reference fails where the model is built, with its reason
        return SMALL


def parse_role_profiles(items: list[str]) -> dict[str, str]:
    """`--role-profile ROLE=small|capable`, repeatable, as a mapping (a clear error otherwise)."""
    out: dict[str, str] = {}
    for item in items:
        role, sep, name = item.partition("=")
        if not sep or not role.strip() or not name.strip():
            raise ProfileError(
                f"--role-profile {item!r}: expected ROLE=PROFILE, e.g. control=small"
            )
        out[role.strip()] = profile_named(name.strip()).name
    return out


def plain_text_kwargs(ref: ModelRef, max_tokens: int, profile: Any = None) -> dict[str, Any]:
    """How to ask a backend for prose under a profile (wargraph.models.profiles; default small): no
    response format, the profile's stops and, in process, its length cap and repeat penalty.

    OpenAI-compatible servers keep the model's own cap (sent under both names to a server given
    by URL: `capped_payload`). The capable profile sends no stop: a heading and a blank line
    are part of an answer."""
    if profile is None:
        profile = SMALL
    out: dict[str, Any] = {}
    if ref.provider in ("embedded", "gguf"):
        cap = profile.plain_cap
        out["max_tokens"] = min(max_tokens, cap) if cap else max_tokens
        if profile.plain_stop:
            out["stop"] = list(profile.plain_stop)
        if profile.plain_repeat_penalty is not None:
            out["repeat_penalty"] = profile.plain_repeat_penalty
        return out
    if profile.plain_stop:
        out["stop"] = list(profile.plain_stop)
    return out
