"""The embedded model's thread count: WARGRAPH_LLAMA_THREADS, else every core; a bad value is a
clear error naming the variable."""

from __future__ import annotations

import pytest


def test_llama_threads_from_the_environment(monkeypatch):
    import os

    from wargraph.models.chat import ModelRefError, llama_threads

    monkeypatch.delenv("WARGRAPH_LLAMA_THREADS", raising=False)
    assert llama_threads() == (os.cpu_count() or 2)
    monkeypatch.setenv("WARGRAPH_LLAMA_THREADS", "1")
    assert llama_threads() == 1
    for bad in ("0", "two", "-1", "1.5"):
        monkeypatch.setenv("WARGRAPH_LLAMA_THREADS", bad)
        with pytest.raises(ModelRefError, match="WARGRAPH_LLAMA_THREADS"):
            llama_threads()
