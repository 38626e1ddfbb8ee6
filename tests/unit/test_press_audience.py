"""A press's audience policy: "private" offers only one seat at a time (nothing to everyone),
"public" only everyone; the schema offers only that, and a message the policy forbids is refused
with the reason. Open press ("both") is unchanged (golden fingerprints)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

import wargraph.nodes.schemas  # noqa: F401  (registers the answer schemas)
from wargraph.kernel.parts import Press
from wargraph.seats.schemas import schema_for


def test_an_unknown_audience_is_refused():
    with pytest.raises(ValueError, match="audience"):
        Press(audience="secret")


@pytest.mark.parametrize("audience", ["private", "public"])
def test_the_schema_offers_what_the_policy_allows(audience):
    press = Press(audience=audience)
    recipients = press.recipients(None, "a", ["a", "b", "c"])  # type: ignore[arg-type]
    args = {"recipients": recipients, "limit": 2}
    if audience == "private":
        args["everyone"] = False
    model = schema_for({"schema": "messages", "schema_args": args})  # type: ignore[typeddict-item]
    allowed, forbidden = ("b", "everyone") if audience == "private" else ("everyone", "b")
    model.model_validate({"messages": [{"to": allowed, "text": "hi"}]})
    with pytest.raises(ValidationError):
        model.model_validate({"messages": [{"to": forbidden, "text": "hi"}]})
    ok, refused = press.accept(_Table(), "a", [{"to": forbidden, "text": "x"}])  # type: ignore[arg-type]
    assert ok == [] and "this press is" in refused[0][2]


class _Table:
    scenario = None


def test_open_press_offers_both():
    press = Press()
    ok, refused = press.accept(
        _Table(), "a", [{"to": "b", "text": "x"}, {"to": "everyone", "text": "y"}]
    )  # type: ignore[arg-type]
    assert [to for to, _ in ok] == ["b", "everyone"] and not refused
