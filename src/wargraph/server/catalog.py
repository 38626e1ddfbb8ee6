"""The scenarios a server may open: shipped ones and those its operator registered, by name only.

A name from a request is never read as a path, so no file of the working or state folder (the
seat-token secret, langgraph.json) can be opened by naming it. Other scenarios travel in the
request: as a mapping, or as the YAML text of a scenario file. `wargraph serve --scenario FILE`
registers a file under its stem; the server process gets the list in `WARGRAPH_SCENARIOS`
(absolute paths, os.pathsep between them).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from wargraph.kernel.scenario import (
    Scenario,
    ScenarioError,
    load_scenario,
    read_data,
    shipped_scenarios,
)

REGISTERED_ENV = "WARGRAPH_SCENARIOS"
SUFFIXES = (".yaml", ".yml")


def check_registration(files: list[str | Path]) -> dict[str, Path]:
    """Files an operator registers, by name; ScenarioError saying which one is unusable."""
    shipped = shipped_scenarios()
    out: dict[str, Path] = {}
    for given in files:
        path = Path(given).expanduser().resolve()
        if path.suffix not in SUFFIXES:
            raise ScenarioError(f"--scenario {given}: a scenario file ends in .yaml or .yml")
        if not path.is_file():
            raise ScenarioError(f"--scenario {given}: no such file")
        name = path.stem
        if name in shipped:
            raise ScenarioError(
                f"--scenario {given}: {name!r} is the name of a shipped scenario; rename the file"
            )
        if name in out:
            raise ScenarioError(f"--scenario {given}: two files are named {name!r}; rename one")
        out[name] = path
    return out


def registered() -> dict[str, Path]:
    """The operator's scenarios in this server process (unusable entries are left out)."""
    raw = os.environ.get(REGISTERED_ENV, "")
    out: dict[str, Path] = {}
    for entry in filter(None, raw.split(os.pathsep)):
        path = Path(entry)
        if path.is_absolute() and path.suffix in SUFFIXES:
            out.setdefault(path.stem, path)
    return out


def catalog() -> dict[str, Path]:
    """Every scenario name the server opens; a shipped name always means the shipped file."""
    return {**registered(), **shipped_scenarios()}


def resolve(name: str) -> Path:
    known = catalog()
    if name not in known:
        raise ScenarioError(
            f"{name}: no shipped or registered scenario of that name "
            f"(known: {', '.join(sorted(known))}); register a file with "
            "`wargraph serve --scenario FILE` or send the scenario inline"
        )
    return known[name]


def open_scenario(scenario: str | dict[str, Any], overrides: dict[str, Any] | None) -> Scenario:
    """A scenario named in the catalog or sent inline, with overrides. Sync: reads a file."""
    if isinstance(scenario, str):
        return load_scenario(str(resolve(scenario)), overrides or None)
    return load_scenario(scenario, overrides or None)


def read_text(text: str) -> dict[str, Any]:
    """The fields of a scenario sent as YAML text (sync: goes through a temporary file, so it is
    read exactly as a scenario file is). Anchors and aliases are refused: a few kilobytes of them
    can expand to gigabytes."""
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise ScenarioError(
                    "scenario_text: YAML anchors and aliases (& and *) are not accepted here; "
                    "write the values out"
                )
    except yaml.YAMLError:
        pass  # the reading below reports the syntax error with its line
    with tempfile.TemporaryDirectory(prefix="wargraph-scenario-") as folder:
        path = Path(folder) / "scenario_text.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            data, _ = read_data(str(path))
        except ScenarioError as err:
            raise ScenarioError(str(err).replace(str(path), "scenario_text")) from None
    if not isinstance(data, dict):
        raise ScenarioError("scenario_text: expected a mapping of scenario fields (title, ...)")
    return data
