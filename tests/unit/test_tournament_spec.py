"""Tournament files: bad input is one line naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from wargraph.evals.tournament import TournamentError, load_tournament
from wargraph.evals.tournament.play import schedule, setup

SHIPPED = Path(__file__).resolve().parents[2] / "src" / "wargraph" / "scenarios" / "tournaments"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    return path


BASE = """scenario: blotto
entrants:
  a: {model: "bot:fixed"}
  b: {model: "bot:even"}
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (BASE + "rotations: 0\n", "rotations: Input should be greater than or equal to 1"),
        (BASE + "rotations: 2\ngames: 4\n", "give one of rotations, games_per_pairing or games"),
        (BASE.replace("bot:even", "bot:nobody"), "unknown bot 'nobody'"),
        (BASE.replace("bot:even", "gpt4"), "expected embedded, scripted"),
        (BASE + "score: centres_typo\n", "score: measure: name a measure per seat"),
        (BASE + "colour: red\n", "colour: Extra inputs are not permitted"),
        (BASE.replace('  b: {model: "bot:even"}\n', ""), "entrants"),
        (BASE.replace('model: "bot:even"', "human: true"), "at least two rated entrants"),
        ("scenario: blotto\nentrants: [a, b]\n", "entrants: Input should be a valid dictionary"),
        ("scenario: [\n", "YAML syntax error"),
        ("- a\n", "expected a mapping"),
    ],
)
def test_bad_files_name_file_and_field(tmp_path, text, expected):
    path = write(tmp_path, text)
    with pytest.raises(TournamentError) as err:
        load_tournament(path)
    assert str(path) in str(err.value) and expected in str(err.value)


def test_missing_file_and_shipped_names(tmp_path):
    with pytest.raises(TournamentError, match="no such tournament file .shipped: blotto_bots"):
        load_tournament(tmp_path / "none.yaml")
    assert load_tournament("blotto_bots").name == "blotto_bots"


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("seats: [north, west]\n", "seats: ['west'] are not players of blotto"),
        ("family: diplomacy\n", "family: the scenario blotto is a blotto game, not diplomacy"),
        ("score: centres\n", "score: centres ranks Diplomacy games, not blotto"),
        (
            "entrants: {a: {model: 'bot:greedy'}, b: {}}\n",
            "entrants.a.model: bot:greedy plays diplomacy, not blotto",
        ),
    ],
)
def test_scenario_checks(tmp_path, extra, expected):
    t = load_tournament(write(tmp_path, BASE + extra))
    with pytest.raises(TournamentError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        setup(t)


@pytest.mark.parametrize("path", sorted(SHIPPED.glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_tournaments_load_and_schedule_fairly(path):
    t = load_tournament(path)
    s = setup(t)
    games = schedule(s)
    assert games and len(s.rated) >= 2
