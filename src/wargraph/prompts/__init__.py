"""Prompt templates as text files, one folder per version (v1, v2 ...); `${name}` placeholders.

A family may ship its own templates: a package named by its entry's `prompts` field, with the
same layout (`v1/<name>.txt`, `v2/...`). While a phase of that family runs (`family_prompts`),
its package is looked up first, then wargraph's, so a plug-in adds templates or overrides
wargraph's of the same name."""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from importlib.resources.abc import Traversable
from string import Template

OWN = "wargraph.prompts"
_family: ContextVar[str | None] = ContextVar("wargraph_prompt_family", default=None)


class PromptError(KeyError):
    def __str__(self) -> str:  # a KeyError would print its message quoted
        return str(self.args[0]) if self.args else ""


@contextmanager
def family_prompts(family: str | None) -> Iterator[None]:
    """Templates are looked up in `family`'s own prompts package first while this is open."""
    token = _family.set(family)
    try:
        yield
    finally:
        _family.reset(token)


def _packages(family: str | None) -> list[tuple[str | None, str]]:
    """(family, package) pairs to look templates up in, in order: the family's own, wargraph's,
    then the built-in families' (a built-in's part called outside a running phase, as a test or
    a tool may call it, still finds its templates; their names carry the family's prefix). A
    plug-in's package is imported under the plug-in guard (`_root`)."""
    from wargraph.kernel.families import FamilyError, builtin_names, get

    found: list[tuple[str | None, str]] = []
    if family:
        try:
            own = get(family).prompts
        except FamilyError:
            own = None
        if own and own != OWN:
            found.append((family, own))
    found.append((None, OWN))
    for name in builtin_names():
        package = get(name).prompts
        if package and all(package != p for _, p in found):
            found.append((None, package))  # built-ins: trusted, imported as they are
    return found


def _root(family: str | None, package: str) -> Traversable:
    """A prompts package's files; a plug-in's package is imported under the plug-in guard."""
    from wargraph.kernel.families import FamilyError, package_files

    try:
        if family is None:
            return importlib.resources.files(package)
        return package_files(family, package)
    except FamilyError as exc:
        raise PromptError(str(exc)) from None
    except (ImportError, TypeError) as exc:
        raise PromptError(f"the prompts package {package!r} cannot be found ({exc})") from None


# Templates found, by the packages looked in, variant and name: finding one (its packages' files,
# a plug-in's under its guard) cost ~80 us, some 75 times a Diplomacy phase. Read once per
# process: a template edited on disk is seen by the next process.
_found: dict[tuple[tuple[tuple[str | None, str], ...], str, str], str] = {}


def load_prompt(name: str, variant: str = "v1", *, family: str | None = None) -> str:
    """The template `name` of `variant`, falling back to v1 when a variant does not override it;
    the family's own package (`family`, or the family whose phase is running) comes first."""
    packages = _packages(family or _family.get())
    key = (tuple(packages), variant, name)
    if key not in _found:
        _found[key] = _find(name, variant, packages)
    return _found[key]


def _find(name: str, variant: str, packages: list[tuple[str | None, str]]) -> str:
    for owner, package in packages:
        root = _root(owner, package)
        for folder in (variant, "v1"):
            path = root / folder / f"{name}.txt"
            if path.is_file():
                return path.read_text(encoding="utf-8")
    where = " or ".join(
        f"{p}/{variant}" + ("" if variant == "v1" else "|v1") for _, p in packages[:2]
    )
    raise PromptError(f"no prompt template {name!r} in {where}")


def render_prompt(
    name: str, variant: str = "v1", *, family: str | None = None, **values: object
) -> str:
    """Fill a template; unknown placeholders stay as they are rather than failing a game."""
    return (
        Template(load_prompt(name, variant, family=family))
        .safe_substitute({k: "" if v is None else str(v) for k, v in values.items()})
        .strip()
    )
