"""`open_saver` and `open_async_saver` give a typed saver (`wargraph.store.saver.Saver`): mypy
checks what callers do with it, as it checks the rest of wargraph."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[2]

CALLER = """
from wargraph.store.saver import open_async_saver, open_saver


def games(db: str) -> list[str]:
    with open_saver(db, create=False) as saver:
        saver.verify_thread("t")
        saver.run_of(3)
        saver.wargraph.sqll
        return saver.thread_idz()


async def first(db: str) -> None:
    async with open_async_saver(db) as saver:
        await saver.aget_tuple("t")
"""


@pytest.mark.slow  # half a minute or more on 2 shared cores
def test_mypy_checks_what_callers_do_with_a_store_saver(tmp_path, monkeypatch):
    caller = tmp_path / "caller.py"
    caller.write_text(CALLER)
    monkeypatch.chdir(ROOT)  # the project's mypy settings, whatever directory the run started in
    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))  # wargraph found as source, never as Any
    out, err, status = api.run(
        [
            "--follow-imports=silent",
            "--ignore-missing-imports",
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "--no-error-summary",
            str(caller),
        ]
    )
    found = {line.split(": error: ", 1)[1] for line in out.splitlines() if ": error: " in line}
    assert status == 1, out + err
    assert found == {
        'Argument 1 to "run_of" of "Saver" has incompatible type "int"; expected "str"  [arg-type]',
        '"StoreInfo" has no attribute "sqll"; maybe "sql"?  [attr-defined]',
        '"Saver" has no attribute "thread_idz"; maybe "thread_ids"?  [attr-defined]',
        'Argument 1 to "aget_tuple" of "Saver" has incompatible type "str"; expected '
        '"RunnableConfig"  [arg-type]',
    }, out
