"""The product code's imports form layers: no import circle anywhere in `src/wargraph` (an
import inside a function counts; one under `if TYPE_CHECKING:` does not, it never runs), and the
kernel reaches out of itself only where docs/design.md says it does.

Read from the source (ast), so a circle that happens to load in one order today is still found."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

# kernel module -> the modules outside the kernel it may import (docs/design.md, "Layers")
KERNEL_REACHES = {
    # graphkit's helper: whether a step's asks wait for a model (then work is done ahead), and
    # the game a job is for (a newer job of the same game supersedes it)
    "wargraph.kernel.ahead": {"wargraph.seats.agents", "wargraph.models.faults"},
    "wargraph.kernel.context": {"wargraph.models.faults"},
    "wargraph.kernel.graphkit": {
        "wargraph.models.faults",
        "wargraph.prompts",
        "wargraph.seats.agents",
        "wargraph.seats.asks",
    },
    "wargraph.kernel.scenario": {"wargraph.runs.userfiles"},
    "wargraph.kernel.table": {
        "wargraph.models.profiles",
        "wargraph.seats.asks",
        "wargraph.seats.bots",
        "wargraph.seats.names",
        "wargraph.seats.scripted",
    },
}
ANY_KERNEL_MODULE_MAY = {"wargraph.prompts"}  # templates: the lowest layer


def modules(root: Path = SRC) -> dict[str, Path]:
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _type_only(tree: ast.AST) -> set[int]:
    """Nodes under `if TYPE_CHECKING:` (never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(sub) for sub in ast.walk(node))
    return skipped


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The product modules `name` imports when it runs (at load or inside a function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_only(tree)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package[: len(package) - (node.level - 1)]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in known:
                    out.add(full)
                elif base in known:
                    out.add(base)
    out.discard(name)
    return out


def graph(root: Path = SRC) -> dict[str, set[str]]:
    known = modules(root)
    return {m: imports(m, p, known) for m, p in known.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_in_the_product_code():
    found = circles(graph())
    assert not found, "import circles (runtime imports, lazy ones included): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_the_circle_finder_finds_a_lazy_circle(tmp_path: Path):
    """The check can fail: two modules importing each other, one of them inside a function."""
    pkg = tmp_path / "wargraph"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from wargraph.b import thing\n")
    (pkg / "b.py").write_text("def thing():\n    from wargraph import a\n    return a\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from wargraph import a\n"
    )
    (pkg / "d.py").write_text("from . import c\n")
    assert circles(graph(tmp_path)) == [["wargraph.a", "wargraph.b"]]


def test_the_kernel_reaches_out_only_where_the_design_says():
    edges = graph()
    wrong = {}
    for name, targets in edges.items():
        if not name.startswith("wargraph.kernel"):
            continue
        outside = {t for t in targets if not t.startswith("wargraph.kernel")}
        extra = outside - KERNEL_REACHES.get(name, set()) - ANY_KERNEL_MODULE_MAY
        if extra:
            wrong[name] = sorted(extra)
    assert not wrong, f"kernel modules importing beyond their layer: {wrong}"
    stale = {m for m in KERNEL_REACHES if m not in edges}
    assert not stale, f"KERNEL_REACHES names modules that no longer exist: {stale}"
