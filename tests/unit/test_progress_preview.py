"""The progress's preview of an event (the terminal during `wargraph play`): whole when short;
a long one is cut at a line end and says how much more the transcript holds, never mid-word
without a word (Diplomacy's adjudication was cut at 400 characters, 'A ROM S A VEN (succ')."""

from __future__ import annotations

from wargraph.cli import PREVIEW_CHARS, preview


def test_a_short_text_is_printed_whole():
    text = "S1901M adjudicated.\n  AUSTRIA: A BUD - SER (success)"
    assert preview(text) == text


def test_a_long_text_is_cut_at_a_line_end_and_says_how_much_is_left():
    lines = [f"POWER{i}: A BUD S A VEN - TRI (success); F TRI H (success)" for i in range(40)]
    whole = "\n".join(lines)
    shown = preview(whole)
    kept, said = shown.split(" ... (")
    assert len(kept) <= PREVIEW_CHARS and whole.startswith(kept)
    assert kept.endswith("(success)")  # a whole line: nothing cut inside it
    assert said == f"{len(whole) - len(kept)} more characters in the transcript)"


def test_one_long_line_is_cut_at_a_word_end():
    whole = "word " * 400
    kept = preview(whole, 103).split(" ... (")[0]
    assert kept == ("word " * 20).rstrip()


def test_a_round_a_family_names_is_printed_with_its_name(monkeypatch):
    import io

    from rich.console import Console

    import wargraph.cli as cli

    out = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=out, width=200, color_system=None))
    event = {"round": 2, "kind": "narration", "author": "secretary", "audience": ["*"]}
    cli._progress_printer()("adjudicate", {"events": [
        {**event, "text": "F1901M adjudicated.", "data": {"phase": "F1901M"}},
        {**event, "text": "The game ends."},
    ]})  # fmt: skip
    assert out.getvalue().splitlines()[0] == "round 2 · F1901M secretary · narration"
    assert "round 2 secretary · narration" in out.getvalue()
