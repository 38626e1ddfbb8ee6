"""trace.jsonl is read by "\n" only: an answer holding U+2028 (or U+2029, U+0085, \x1c ...),
which JSON keeps raw, still counts as one call (issue: the record counted 2 of 9)."""

from __future__ import annotations

from wargraph.runs.records import build_record
from wargraph.runs.trace import read_trace, record_call

SEPARATORS = ["\u2028", "\u2029", "\x85", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c", "\r"]


def test_line_separators_inside_answers_do_not_split_calls(tmp_path):
    path = tmp_path / "trace.jsonl"
    for i, sep in enumerate(SEPARATORS):
        record_call(
            str(path),
            {"role": "a", "event": "call", "output": f"first{sep}second {i}", "prompt_tokens": 1},
        )
    entries = read_trace(path)
    assert [e["output"] for e in entries] == [
        f"first{s}second {i}" for i, s in enumerate(SEPARATORS)
    ]
    record = build_record({"done": True}, thread_id="t", trace_path=path)
    assert record["usage"]["per_role"]["a"]["calls"] == len(SEPARATORS) == 9
