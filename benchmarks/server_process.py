"""A server a benchmark runs as its own child process on a free loopback port: started,
waited for until it answers, and always stopped (by its handle, never by name)."""

from __future__ import annotations

import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, free_port


class ServerProcess:
    """`with Sub(...) as server:` — subclasses give `command()`; `url` ends in /v1."""

    name = "server"
    start_timeout_s = 30.0

    def __init__(self, log: Path | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = log
        self.proc: subprocess.Popen | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def __enter__(self) -> Any:
        out = open(self.log, "w") if self.log else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(
                self.command(), stdout=out, stderr=subprocess.STDOUT, cwd=REPO
            )
        finally:
            if self.log:
                out.close()  # the child keeps its own copy of the descriptor
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=2).read()
                return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    tail = self.log.read_text()[-1500:] if self.log else ""
                    raise RuntimeError(f"{self.name} did not start: {tail}") from None
                time.sleep(0.1)

    def __exit__(self, *exc: Any) -> None:
        if self.proc is None:
            return
        self.proc.terminate()  # our own child, by its handle
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None
