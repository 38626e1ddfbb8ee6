"""The README's short tour and links stay true: every command it shows is a wargraph command
naming a shipped game, every link opens a page of the docs site, and every page is in the
site's navigation. (The site itself is built with `mkdocs build --strict` in `make test`.)"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from wargraph.cli import app
from wargraph.evals.experiment.spec import shipped_experiments
from wargraph.evals.tournament.spec import shipped_tournaments
from wargraph.kernel.scenario import shipped_scenarios

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _tour() -> list[list[str]]:
    block = README.split("## A short tour", 1)[1].split("```")[1]
    return [shlex.split(line.split("  #", 1)[0]) for line in block.strip().splitlines()]


def test_every_tour_command_is_a_command_of_a_shipped_game():
    import typer.main

    commands = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    known = {
        "play": shipped_scenarios(),
        "experiment": shipped_experiments(),
        "tournament": shipped_tournaments(),
    }
    tour = _tour()
    assert len(tour) >= 8
    for words in tour:
        assert words[0] == "wargraph" and words[1] in commands, words
        if words[1] in known:
            assert words[2] in known[words[1]], words


def _nav_pages(nav) -> list[str]:
    out = []
    for item in nav:
        for value in item.values() if isinstance(item, dict) else [item]:
            out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_readme_links_open_pages_of_the_site_and_every_page_is_in_its_navigation():
    links = re.findall(r"\]\((docs/[^)#]+)\)", README)
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).is_file(), link
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["docs_dir"] == "docs" and config["strict"] is True
    pages = set(_nav_pages(config["nav"]))
    for page in (ROOT / "docs").glob("*.md"):
        assert page.name in pages, f"{page.name} is not in mkdocs.yml's nav"
    assert "reference.md" in pages and len(README.splitlines()) < 120
