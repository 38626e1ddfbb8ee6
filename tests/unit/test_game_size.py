"""What a new game costs (issue #31): Blotto's game in at most 200 lines and the bargaining
plug-in in at most 150, counted as physical lines of their .py files (docstrings, comments and
blank lines included; templates and scenarios are data). Blotto's strategy bots are an extra,
counted on their own."""

from __future__ import annotations

from pathlib import Path

import pytest

import wargraph.graphs.blotto as blotto
from tests.plugins import bargain

BLOTTO = Path(blotto.__file__).parent
BARGAIN = Path(bargain.__file__).parent

# (folder, the files counted, the files left out, most lines)
BUDGETS = {
    "blotto": (BLOTTO, "**/*.py", {"bots.py"}, 200),
    "blotto bots": (BLOTTO, "bots.py", set(), 60),
    "bargain plug-in": (BARGAIN, "**/*.py", set(), 150),
}


def physical_lines(folder: Path, pattern: str = "**/*.py", leave_out=frozenset()) -> dict[str, int]:
    """The physical lines of each file matching `pattern` (subfolders too with `**`), by its
    path in the folder, less the paths left out."""
    found = {str(p.relative_to(folder)): p for p in sorted(folder.glob(pattern))}
    return {
        name: len(p.read_text().splitlines()) for name, p in found.items() if name not in leave_out
    }


def over(folder: Path, pattern: str, leave_out: set[str], most: int) -> str | None:
    """Why the folder's code is over its budget (None: within it)."""
    counted = physical_lines(folder, pattern, leave_out)
    total = sum(counted.values())
    return f"{total} lines > {most}: {counted}" if total > most else None


@pytest.mark.parametrize("name", list(BUDGETS))
def test_a_game_stays_within_its_lines(name):
    folder, pattern, leave_out, most = BUDGETS[name]
    assert physical_lines(folder, pattern, leave_out), f"{name}: no file {pattern} in {folder}"
    assert over(folder, pattern, leave_out, most) is None, name


def test_one_line_over_the_budget_fails(tmp_path):
    # docstrings, comments and blank lines count; a template does not
    (tmp_path / "a.py").write_text('"""doc"""\n# a comment\n\n' + "x = 1\n" * 97)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("y = 2\n" * 100)
    (tmp_path / "rules.txt").write_text("data\n" * 50)
    assert sum(physical_lines(tmp_path).values()) == 200
    assert over(tmp_path, "**/*.py", set(), 200) is None
    (tmp_path / "sub" / "b.py").write_text("y = 2\n" * 101)
    assert (
        over(tmp_path, "**/*.py", set(), 200) == "201 lines > 200: {'a.py': 100, 'sub/b.py': 101}"
    )
    assert over(tmp_path, "**/*.py", set(), 150) is not None
    assert over(tmp_path, "**/*.py", {"a.py"}, 150) is None  # a file left out (Blotto's bots)
    assert over(tmp_path, "a.py", set(), 100) is None  # one file alone
