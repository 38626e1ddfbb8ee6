"""`wargraph prepare` on the real embedded model reports honestly either way (issue 41): what it
wrote fits the description (its key words, no echoed instruction, the tabletop's own seats
and cards), or it says on standard error that it could not and what it kept."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from wargraph.cli import app
from wargraph.kernel.scenario import load_scenario
from wargraph.runs.prepare_check import answer_problems

pytestmark = [pytest.mark.model, pytest.mark.timeout(900)]

REQUEST = "A tabletop exercise on a ransomware attack at a hospital"


def test_prepare_writes_what_was_asked_or_says_it_could_not(tmp_path):
    out = tmp_path / "drill.yaml"
    r = CliRunner().invoke(app, ["prepare", REQUEST, "-o", str(out), "--model", "embedded"])
    assert r.exit_code == 0, r.output
    print(r.output, out.read_text(), sep="\n")  # what the model wrote, for the log (-s)
    sc = load_scenario(str(out))
    assert sc.family == "tabletop"
    written = yaml.safe_load(out.read_text())
    assert "Northwind" not in out.read_text()  # never the bank's cards, either way
    if "could not prepare what was asked" in r.stderr:
        assert sc.setting.strip() == REQUEST  # the documented fallback, and said
        assert "not written from the description: generic responder seats" in r.stderr
    else:
        assert answer_problems(REQUEST, sc.title, sc.setting) == []
        assert "data_scientist" not in written["players"]  # the bank's seats went
        if "not written from the description" in r.stderr:  # only the deck, and said
            assert "a generic inject deck" in r.stderr and "the seats of" not in r.stderr
