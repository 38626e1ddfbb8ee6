"""A report as one page: the Markdown report beside it rendered to a self-contained HTML file.

Experiments, tournaments, evals and replays write `report.md`-style Markdown (tables, figures,
`<details>` blocks); `write_page(md_path)` renders it with markdown-it-py (CommonMark plus
tables; MIT; already installed with Rich) into `<name>.html` beside it, with every figure the
Markdown names inlined as a data URI, so the page can be mailed or attached on its own. Links to
other files (each game's view) stay relative: they open when the page sits in its folder.

The Markdown holds text wargraph did not write (judges' quotes of a model's plan, scenario
settings, grid values, folder names), so the page runs none of it as markup: the only HTML it
passes through is the `<details>`/`<summary>` lines the report writers put there themselves
(no attributes); any other tag is shown as text, an image that is not one of the report's own
figures is a link, and the page's Content-Security-Policy allows its own style, data: images and
nothing else (no script at all, nothing fetched).
"""

from __future__ import annotations

import base64
import hashlib
import html
import mimetypes
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# Figures larger than this stay links: a page of many boards must still open quickly.
MAX_INLINE_BYTES = 8 << 20

STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d232b;
  max-width: 72rem; margin: 2rem auto; padding: 0 1.2rem; }
h1 { font-size: 1.7rem; border-bottom: 2px solid #d8dde3; padding-bottom: .3rem; }
h2 { font-size: 1.3rem; margin-top: 2.2rem; border-bottom: 1px solid #e4e8ec; }
table { border-collapse: collapse; margin: .8rem 0; font-size: 14px; display: block;
  overflow-x: auto; }
th, td { border: 1px solid #d8dde3; padding: .3rem .6rem; text-align: left;
  vertical-align: top; }
th { background: #f1f4f7; }
tr:nth-child(even) td { background: #fafbfc; }
img { max-width: 100%; height: auto; }
code { background: #f1f4f7; padding: 0 .25rem; border-radius: 3px; font-size: 90%; }
pre { background: #f6f8fa; padding: .8rem; overflow-x: auto; }
pre code { background: none; padding: 0; }
details { margin: .6rem 0; }
summary { cursor: pointer; color: #2a5db0; }
footer { margin-top: 3rem; color: #6a737d; font-size: 13px; }
"""


def _inline(src: str, folder: Path) -> str:
    """A relative image path as a data URI; anything else (a URL, a missing or huge file) as is."""
    if not src or "://" in src or src.startswith(("data:", "/", "#")):
        return src
    path = folder / src
    try:
        if not path.is_file() or path.stat().st_size > MAX_INLINE_BYTES:
            return src
        data = path.read_bytes()
    except OSError:
        return src
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"


# The only raw HTML a report writer puts in its Markdown: a folded section, one tag per line.
_OWN_HTML = re.compile(r"(?:<details>)?(?:<summary>[^<>&]*</summary>)?|</details>")


def content_policy() -> str:
    """The page's Content-Security-Policy: its own style (by hash) and data: images; no script,
    no fetch, no form, no base, so even a text that slipped into the markup could do nothing."""
    style = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    return (
        f"default-src 'none'; style-src 'sha256-{style}'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def _html_as_text(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """Raw HTML in the Markdown: wargraph's own folded sections pass, anything else is text."""
    token = tokens[idx]
    if token.type == "html_block":
        lines = token.content.splitlines()
        if lines and all(_OWN_HTML.fullmatch(line.strip()) for line in lines):
            return str(token.content)
        return f"<p>{html.escape(token.content)}</p>\n"
    return html.escape(token.content)


def _image(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """A figure inlined as data: shows; any other image (a URL, a missing or huge file) is a
    link, so opening the page fetches nothing."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    if src.startswith("data:image/"):
        return str(renderer.image(tokens, idx, options, env))
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    return f'<a href="{html.escape(src)}">{html.escape(alt or src)}</a>'


def render(markdown: str, folder: Path, title: str | None = None) -> str:
    """The whole HTML page of a Markdown report whose relative figures live under `folder`."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.add_render_rule("html_block", _html_as_text)
    md.add_render_rule("html_inline", _html_as_text)
    md.add_render_rule("image", _image)
    tokens = md.parse(markdown)
    for token in tokens:
        for child in token.children or []:
            if child.type == "image":
                child.attrSet("src", _inline(str(child.attrGet("src") or ""), folder))
        if title is None and token.type == "inline" and token.map and token.map[0] == 0:
            title = token.content
    body = md.renderer.render(tokens, md.options, {})
    head = html.escape(title or "wargraph report")
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{content_policy()}">'
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{head}</title><style>{STYLE}</style></head>\n<body>\n{body}"
        "<footer>Written by wargraph. The same numbers are in the CSV and JSON files beside "
        "this page.</footer>\n</body></html>\n"
    )


def write_page(md_path: Path, out: Path | None = None, **kw: Any) -> Path:
    """Render the Markdown report at `md_path` into `out` (default: the same name, .html)."""
    md_path = Path(md_path)
    out = out or md_path.with_suffix(".html")
    page = render(md_path.read_text(encoding="utf-8"), md_path.parent, **kw)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)  # a reader never sees half a page
    return out


# --- nested results as Markdown tables (replays, evals) ---------------------------------------


def _cell(value: Any) -> str:
    import json

    if isinstance(value, float):
        text = f"{value:.3g}"
    elif isinstance(value, str | int | bool) or value is None:
        text = "–" if value is None or value == "" else str(value)
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
        text = text if len(text) <= 160 else text[:157] + "..."
    return text.replace("|", "\\|").replace("\n", " ")


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _flat(value: Any) -> bool:
    """A scalar, or a mapping of scalars (written in one cell as `k: v, k: v`)."""
    return _scalar(value) or (isinstance(value, dict) and all(map(_scalar, value.values())))


def _compact(value: Any) -> Any:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_cell(v)}" for k, v in value.items()) or "–"
    return value


def table(head: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table, each cell one line."""
    out = ["| " + " | ".join(str(h).replace("|", "\\|") for h in head) + " |"]
    out.append("|" + "---|" * len(head))
    return out + ["| " + " | ".join(_cell(_compact(c)) for c in row) + " |" for row in rows]


def as_markdown(data: Any, title: str, level: int = 3) -> list[str]:
    """Readable Markdown for a nested result: a mapping of scalars is a two-column table, a
    mapping (or list) of flat mappings one table with a row each (a cell may hold a small
    mapping as `k: v, k: v`), anything deeper a section per key (to three levels; below that a
    cell holds the compact JSON)."""
    hashes = "#" * min(level, 6)
    lines = [f"{hashes} {title}", ""]
    if _scalar(data):
        return lines + [_cell(data), ""]
    items = list(data.items()) if isinstance(data, dict) else list(enumerate(data, 1))
    if not items:
        return lines + ["(none)", ""]
    if all(_scalar(v) for _, v in items):
        return lines + table(["", "value"], [[k, v] for k, v in items]) + [""]
    if all(isinstance(v, dict) and all(_flat(x) for x in v.values()) for _, v in items):
        cols: list[str] = []
        for _, v in items:
            cols += [c for c in v if c not in cols]
        rows = [[k, *(v.get(c, "") for c in cols)] for k, v in items]
        return lines + table(["", *cols], rows) + [""]
    if level >= 5:
        return lines + table(["", "value"], [[k, v] for k, v in items]) + [""]
    for k, v in items:
        lines += as_markdown(v, str(k), level + 1)
    return lines


def flat_row(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """One CSV row of a nested result: nested keys joined with ':', lists as compact JSON."""
    import json

    row: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            row.update(flat_row(v, key + ":"))
        elif _scalar(v):
            row[key] = v
        else:
            row[key] = json.dumps(v, ensure_ascii=False, default=str)
    return row


# A spreadsheet runs a cell that starts with one of these as a formula (`=HYPERLINK(...)`,
# `-2+3+cmd|' /C calc'!A0`): text wargraph did not write could run on the reader's machine.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: text that a spreadsheet would read as a formula gets a leading
    `'` (shown, never run); numbers, and text that is one number ("-3.5"), are kept as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        try:
            float(value)
        except ValueError:
            return "'" + value
    return value


class CsvWriter:
    """`csv.writer` whose every cell goes through `csv_cell`: how wargraph writes every CSV."""

    def __init__(self, fh: Any) -> None:
        import csv

        self._w = csv.writer(fh)

    def writerow(self, row: Iterable[Any]) -> None:
        self._w.writerow([csv_cell(c) for c in row])


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Rows of possibly different keys as one CSV (the union of columns, in first-seen order)."""
    cols: list[str] = []
    for r in rows:
        cols += [c for c in r if c not in cols]
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = CsvWriter(fh)
        w.writerow(cols)
        for r in rows:
            w.writerow([r.get(c, "") for c in cols])
    return path
