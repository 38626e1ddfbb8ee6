"""No CSV wargraph writes holds a formula it did not write (issue 40, item 8): a record line
quoted as evidence, a grid value or any text that a spreadsheet would run (`=`, `+`, `-`, `@`,
a tab or a line break first) is written with a leading `'`; numbers, and text that is one
number, stay as they are."""

from __future__ import annotations

import csv

from tests.unit.test_experiment_report import meta, outcomes
from wargraph.evals.report import write_report
from wargraph.evals.report_page import csv_cell, write_csv

CALC = "-2+3+cmd|' /C calc'!A0"
LINK = '=HYPERLINK("http://127.0.0.1:9/?leak","click")'


def test_outcomes_csv_quotes_no_formula(tmp_path):
    games = outcomes()
    games[0]["judgements"][0]["quotes"] = [{"line": CALC, "match": "exact"}]
    games[1]["judgements"][0]["quotes"] = [{"line": LINK, "match": "exact"}]
    games[2]["levels"] = {"pairing": "@SUM(1+1)*cmd|' /C calc'!A0"}
    write_report(tmp_path, meta(), games)
    rows = list(csv.reader((tmp_path / "outcomes.csv").open(encoding="utf-8")))
    cells = [c for row in rows for c in row]
    assert "'" + CALC in cells and "'" + LINK in cells
    assert "'@SUM(1+1)*cmd|' /C calc'!A0" in cells
    assert not [c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and not _number(c))]


def test_every_nested_result_csv_quotes_no_formula(tmp_path):
    path = write_csv(tmp_path / "r.csv", [{"=cmd": CALC, "n": -3, "x": "-3.5", "ok": "plain"}])
    rows = list(csv.reader(path.open(encoding="utf-8")))
    assert rows == [["'=cmd", "n", "x", "ok"], ["'" + CALC, "-3", "-3.5", "plain"]]


def test_a_cell_is_left_alone_unless_it_would_run():
    assert csv_cell("\tcmd") == "'\tcmd" and csv_cell("+1e3") == "+1e3" and csv_cell(2.5) == 2.5


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
