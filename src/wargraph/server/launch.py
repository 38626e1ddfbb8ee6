"""`python -m wargraph.server.launch dev ...`: `langgraph dev` on a uvicorn that bounds what a
client may hold open: request headers are capped and a request must arrive whole in time.

`langgraph dev` picks uvicorn's default HTTP parser (httptools), which accepts headers of any size
and keeps idle or half-sent connections open forever. It offers no setting for either, so this
entry point runs the same `langgraph dev` command with uvicorn's h11 parser under a protocol that
answers 431 to oversized headers and closes a connection whose request is not complete within
`WARGRAPH_READ_TIMEOUT_S` seconds (15 by default) of the server starting to wait for it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

READ_TIMEOUT_ENV = "WARGRAPH_READ_TIMEOUT_S"
DEFAULT_READ_TIMEOUT_S = 15.0
MAX_HEAD = 16 * 1024  # bytes of a request line and headers; a seat link's token is ~150
KEEP_ALIVE_S = 5  # idle seconds between requests of one connection
LINGER_S = 2.0  # after a refusal, how long the rest of the request is read and dropped


def read_timeout() -> float:
    try:
        value = float(os.environ.get(READ_TIMEOUT_ENV, DEFAULT_READ_TIMEOUT_S))
    except ValueError:
        return DEFAULT_READ_TIMEOUT_S
    return value if value > 0 else DEFAULT_READ_TIMEOUT_S


def _plain(status: int, reason: str, text: str) -> bytes:
    body = text.encode() + b"\n"
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header cap and a deadline for each request to arrive."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._timeout = read_timeout()
        self._refused = False

    # uvicorn's own signature, which narrows asyncio's BaseTransport the same way
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()  # a new connection owes its first request

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # the rest of a refused request: dropped
        if self.conn.their_state is h11.IDLE:
            head = self.conn.trailing_data[0] + data
            if len(head) > MAX_HEAD and b"\r\n\r\n" not in head[: MAX_HEAD + 4]:
                self._reply_and_close(
                    431,
                    "Request Header Fields Too Large",
                    f"request headers over {MAX_HEAD // 1024} KiB; send fewer or shorter headers",
                )
                return
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()  # a pipelined request may already be partly in

    def _watch(self) -> None:
        """Keep the deadline while part of a request is in; drop it once the request is whole.
        Between requests uvicorn's keep-alive timeout closes an idle connection."""
        if self.transport is None or self.transport.is_closing():
            self._disarm()
        elif self.conn.their_state is h11.SEND_BODY or (
            self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]
        ):
            self._arm()
        elif self.conn.their_state is not h11.IDLE:
            self._disarm()

    def _arm(self) -> None:
        # Set once per request, not reset by each byte, so a trickle cannot hold the connection.
        if self._deadline is None:
            self._deadline = self.loop.call_later(self._timeout, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self.transport is None or self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            # Half-sent headers: no app has the request yet, so the answer is ours to give.
            self._reply_and_close(
                408,
                "Request Timeout",
                f"the request did not arrive within {self._timeout:g} s; send it whole",
            )
            return
        # Idle, or a body that stopped coming: the app (if any) sees a disconnect.
        self.transport.close()

    def _reply_and_close(self, status: int, reason: str, text: str) -> None:
        """Answer, then drop what the client still sends for a moment before closing: closing at
        once would reset the connection and the client might never read the answer."""
        self._disarm()
        self._refused = True
        self.logger.warning("refused a request: %s", text)
        self.transport.write(_plain(status, reason, text))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_S, self.transport.close)


def _harden_uvicorn() -> None:
    """Make every `uvicorn.run` of this process use the guarded protocol."""
    import uvicorn

    original = uvicorn.run

    def run(app: Any, **kwargs: Any) -> None:
        kwargs.update(
            http=GuardedH11Protocol,
            h11_max_incomplete_event_size=MAX_HEAD,
            timeout_keep_alive=KEEP_ALIVE_S,
        )
        original(app, **kwargs)

    uvicorn.run = run


def main(argv: list[str] | None = None) -> int:
    from langgraph_cli.cli import cli

    _harden_uvicorn()
    try:
        cli.main(args=list(sys.argv[1:] if argv is None else argv), prog_name="langgraph")
    except SystemExit as done:
        return int(done.code or 0) if not isinstance(done.code, str) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
