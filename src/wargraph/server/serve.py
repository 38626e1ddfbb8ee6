"""`wargraph serve`: the LangGraph server (`langgraph dev`) on loopback, offline, with the pages.

The server runs in a state folder (default `./.wargraph-server`): its effective langgraph.json,
the seat-token secret (so seat links survive a restart) and LangGraph's own `.langgraph_api/`.
Graphs whose module is missing are left out of the effective config, so the server starts with
the games that are there.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import ipaddress
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from rich.markup import escape

import wargraph.server.stored as stored
from wargraph.kernel.scenario import ScenarioError
from wargraph.models.chat import ModelRefError
from wargraph.runs.trace import TRACE_DIR_ENV
from wargraph.server import FAMILIES
from wargraph.server.catalog import REGISTERED_ENV, check_registration
from wargraph.server.endpoints import ALLOWED_ENV, parse_allowed
from wargraph.server.launch import READ_TIMEOUT_ENV
from wargraph.server.seats import SECRET_ENV, facilitator_token, new_secret

DEFAULT_STATE_DIR = ".wargraph-server"
SERVER_LOG = "server.log"  # the LangGraph server's own output under `serve` (in its state folder)
START_TIMEOUT_S = 60.0
DEFAULT_JOBS = 4  # games whose steps run at once (`--jobs`; langgraph dev's --n-jobs-per-worker)
MAX_JOBS = 256

DEFAULT_CONFIG: dict[str, Any] = {
    "dependencies": ["."],
    "python_version": "3.11",
    # each built-in family's graph module, by module name: an installed wheel has no ./src
    "graphs": {family: f"wargraph.graphs.{family}.graph:make_graph" for family in FAMILIES},
    "auth": {"path": "wargraph.server.auth:auth", "disable_studio_auth": True},
    "http": {
        "app": "wargraph.server.app:app",
        "disable_mcp": True,
        "disable_a2a": True,
        "disable_ui": True,
        # No origin but the server's own (which needs no CORS): langgraph-api's default is "*".
        "cors": {"allow_origins": []},
    },
}
"""The repository's langgraph.json, which names the same graph modules by file path (a test
keeps them equal)."""

STUDIO_ORIGIN = "https://smith.langchain.com"
STUDIO_STATE_DIR = ".wargraph-studio"
STUDIO_SETTINGS: dict[str, Any] = {
    # Studio's own authentication on: langgraph dev then lets `x-auth-scheme: langsmith` in as
    # the Studio user; programs still need the server's token.
    "auth": {"path": "wargraph.server.studio_auth:auth", "disable_studio_auth": False},
    "http": {
        "app": "wargraph.server.studio_app:app",  # no pages, no seat routes
        "disable_mcp": True,
        "disable_a2a": True,
        "disable_ui": True,
        "cors": {
            "allow_origins": [STUDIO_ORIGIN],
            "allow_methods": ["*"],
            "allow_headers": ["*"],
            "allow_credentials": True,
            "expose_headers": ["x-pagination-total", "x-pagination-next", "content-location"],
        },
    },
}
"""What Studio mode (`wargraph studio`) puts over the served config."""

OFFLINE_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
    "LANGSMITH_TEST_TRACKING": "false",
}


class ServeError(RuntimeError):
    """The server cannot start; the message says why and what to do."""


# --- the effective config -----------------------------------------------------------------------


def _spec_available(spec: str, base: Path) -> str | None:
    """Why a graph spec cannot load (None if it can), without importing game code."""
    target, sep, _var = spec.rpartition(":")
    if not sep:
        return f"{spec!r} is not of the form module:variable or ./file.py:variable"
    if "/" in target or target.endswith(".py"):
        return None if (base / target).exists() else f"no file {target}"
    if target == "wargraph.server.graphs":
        from wargraph.kernel.families import FamilyError, get

        try:
            target = get(_var).graph
        except FamilyError as err:
            return str(err)
    try:
        found = importlib.util.find_spec(target)
    except (ModuleNotFoundError, ValueError):
        found = None
    return None if found is not None else f"no module {target}"


def _absolute(spec: str, base: Path) -> str:
    """Relative file paths in a user config are relative to that config, not to the state folder."""
    target, sep, var = spec.rpartition(":")
    if sep and ("/" in target or target.endswith(".py")) and not Path(target).is_absolute():
        return f"{(base / target).resolve()}:{var}"
    return spec


def effective_config(
    config: str | Path | None = None, *, studio: bool = False
) -> tuple[dict[str, Any], dict[str, str]]:
    """The config to serve and the graphs left out (id -> reason); `studio`: Studio mode's."""
    if config is None:
        from wargraph.kernel.families import families

        data, base = copy.deepcopy(DEFAULT_CONFIG), Path.cwd()
        for family in families():  # plug-in families are served like the built-ins
            data["graphs"].setdefault(family, f"wargraph.server.graphs:{family}")
    else:
        path = Path(config)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ServeError(f"{path}: no such config file") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ServeError(f"{path}: not valid JSON ({err})") from None
        if not isinstance(data, dict) or not isinstance(data.get("graphs"), dict):
            raise ServeError(f"{path}: expected a JSON object with a 'graphs' mapping")
        base = path.resolve().parent
    skipped: dict[str, str] = {}
    graphs: dict[str, Any] = {}
    for gid, spec in data["graphs"].items():
        source = spec.get("path") if isinstance(spec, dict) else spec
        if not isinstance(source, str):
            skipped[gid] = "expected 'module:variable' or {'path': ...}"
            continue
        why = _spec_available(source, base)
        if why:
            skipped[gid] = why
            continue
        fixed = _absolute(source, base)
        graphs[gid] = {**spec, "path": fixed} if isinstance(spec, dict) else fixed
    if not graphs:
        raise ServeError(
            "no game graph can be loaded: " + "; ".join(f"{k}: {v}" for k, v in skipped.items())
        )
    data["graphs"] = graphs
    if isinstance(data.get("auth"), dict) and isinstance(data["auth"].get("path"), str):
        data["auth"]["path"] = _absolute(data["auth"]["path"], base)
    if isinstance(data.get("http"), dict) and isinstance(data["http"].get("app"), str):
        data["http"]["app"] = _absolute(data["http"]["app"], base)
    # Whatever a user config says, only the server's own origin is served.
    http = data["http"] if isinstance(data.get("http"), dict) else {}
    data["http"] = {**http, "cors": copy.deepcopy(DEFAULT_CONFIG["http"]["cors"])}
    data["dependencies"] = ["."]  # the project is installed; langgraph dev installs nothing
    if studio:
        data.update(copy.deepcopy(STUDIO_SETTINGS))
    return data, skipped


# --- the process ----------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def port_free(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    """Linux: the server gets SIGTERM if the process that started it dies (even by SIGKILL), so
    no orphaned server keeps the port. Elsewhere a no-op."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def langgraph_command() -> list[str]:
    """`langgraph` (the CLI) behind wargraph's hardened HTTP settings (see `launch`)."""
    return [sys.executable, "-m", "wargraph.server.launch"]


def read_secret(state_dir: Path) -> str:
    """The seat-token secret: the environment's, else the state folder's (created 0600)."""
    if os.environ.get(SECRET_ENV, "").strip():
        return os.environ[SECRET_ENV].strip()
    path = state_dir / "secret"
    if path.exists():
        value = path.read_text(encoding="utf-8").strip()
        if value:
            return value
    value = new_secret()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(value + "\n")
    return value


@dataclass
class Server:
    """A running `langgraph dev` and what a facilitator (or a test) needs to reach it."""

    process: subprocess.Popen
    url: str
    state_dir: Path
    log_path: Path | None
    secret: str

    @property
    def facilitator_token(self) -> str:
        return facilitator_token(self.secret)

    @property
    def facilitator_link(self) -> str:
        return f"{self.url}/facilitator#token={self.facilitator_token}"

    def log_tail(self, chars: int = 3000) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]

    def stop(self, grace: float = 10.0) -> None:
        """Stop the server and everything it started (its own process group)."""
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(5)


def start(
    *,
    host: str = "127.0.0.1",
    port: int = 2024,
    config: str | Path | None = None,
    state_dir: str | Path | None = None,
    log_path: str | Path | None = None,
    log_level: str = "WARNING",
    jobs: int = DEFAULT_JOBS,
    scenarios: list[str | Path] | None = None,
    read_timeout: float | None = None,
    studio: bool = False,
    allow_models: list[str] | None = None,
    env: dict[str, str] | None = None,
    db: str | Path | None = None,
) -> tuple[Server, dict[str, str]]:
    """Start `langgraph dev` in the state folder; returns at once (see `wait_ready`).

    `scenarios` are files the facilitator may start by name (besides the shipped ones);
    `read_timeout` is how long a client may take to send a whole request (seconds); `studio`:
    Studio mode (loopback only); `allow_models`: model references served games may use besides
    embedded and scripted (added to WARGRAPH_ALLOWED_MODELS); `env`: more environment; `db`: a
    wargraph store (SQLite file or PostgreSQL URL) to keep the games in, as the CLI does
    (`wargraph.server.stored`; without it, langgraph-api's own store in the state folder)."""
    if studio and not is_loopback(host):
        raise ServeError(
            f"Studio mode serves one developer on loopback only, not {host}: use 127.0.0.1 "
            "(Studio sees every seat's secrets); players on a network use wargraph serve"
        )
    try:
        allowed = parse_allowed(
            [*parse_allowed(os.environ.get(ALLOWED_ENV, "")), *(allow_models or [])]
        )
    except ModelRefError as err:
        raise ServeError(f"allowed models: {err}") from None
    if not port_free(host, port):
        raise ServeError(f"port {port} on {host} is in use; choose another with --port")
    try:
        registered = check_registration(list(scenarios or []))
    except ScenarioError as err:
        raise ServeError(str(err)) from None
    store = check_store(db)
    folder = Path(state_dir or (STUDIO_STATE_DIR if studio else DEFAULT_STATE_DIR)).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    data, skipped = effective_config(config, studio=studio)
    if store is not None:
        data["checkpointer"] = {"path": stored.PATH}
    (folder / "langgraph.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    secret = read_secret(folder)
    env = {
        **os.environ,
        **(env or {}),
        **OFFLINE_ENV,
        ALLOWED_ENV: ",".join(allowed),
        SECRET_ENV: secret,
        "PYTHONUNBUFFERED": "1",  # the log file shows each request as it happens
        REGISTERED_ENV: os.pathsep.join(str(p) for p in registered.values()),
        stored.DB_ENV: store or "",
        # each game keeps its model calls (prompts, tokens, latency) for its view
        TRACE_DIR_ENV: str(folder / "traces"),
    }
    if read_timeout is not None:
        env[READ_TIMEOUT_ENV] = str(read_timeout)
    cmd = [
        *langgraph_command(),
        "dev",
        "--no-browser",
        "--no-reload",
        "--host",
        host,
        "--port",
        str(port),
        "--config",
        str(folder / "langgraph.json"),
        "--n-jobs-per-worker",
        str(jobs),
        "--server-log-level",
        log_level,
    ]
    out = open(log_path, "ab") if log_path else None  # noqa: SIM115  (owned by the child)
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=folder,  # LangGraph keeps its state in ./.langgraph_api
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT if out else None,
            start_new_session=True,  # one process group: stop() ends the server and its children
            preexec_fn=_die_with_parent,
        )
    finally:
        if out:
            out.close()
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    return Server(proc, url, folder, Path(log_path) if log_path else None, secret), skipped


def check_store(db: str | Path | None) -> str | None:
    """The `--db` store as the server process will open it (a SQLite path made absolute: the
    server runs in its state folder), opened once here so a store that cannot be used is
    refused before the server starts."""
    if db is None or not str(db).strip():
        return None
    from wargraph.store.errors import StoreError, is_url
    from wargraph.store.setup import own_sql

    store = str(db) if is_url(db) else str(Path(db).expanduser().resolve())
    try:
        with own_sql(store):
            pass
    except StoreError as err:
        raise ServeError(f"--db: {err}") from None
    return store


def wait_ready(server: Server, timeout: float = START_TIMEOUT_S) -> float:
    """Wait until the server answers /ok (seconds taken); raise ServeError with its log if not."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if server.process.poll() is not None:
            raise ServeError(
                f"the server exited with code {server.process.returncode}\n{server.log_tail()}"
            )
        try:
            with urllib.request.urlopen(server.url + "/ok", timeout=2) as resp:
                if resp.status == 200:
                    return time.monotonic() - t0
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.2)
    raise ServeError(f"the server did not answer within {timeout:.0f} s\n{server.log_tail()}")


@contextlib.contextmanager
def running(**kwargs: Any) -> Iterator[Server]:
    """A server for the duration of a block (tests, scripts); always stopped afterwards."""
    server, _ = start(**kwargs)
    try:
        wait_ready(server)
        yield server
    finally:
        server.stop()


def serve(
    host: str = "127.0.0.1",
    port: int = 2024,
    config: str | Path | None = None,
    *,
    state_dir: str | Path | None = None,
    scenarios: list[str | Path] | None = None,
    allow_models: list[str] | None = None,
    db: str | Path | None = None,
    jobs: int = DEFAULT_JOBS,
) -> int:
    """Run the server in the foreground until Ctrl-C. The links go to stdout, the facilitator's
    alone on the last line; what `serve` says about itself goes to stderr, and the LangGraph
    server's own output (its banner, which advertises a Studio link this server refuses, and
    its log) to `server.log` in the state folder. `jobs`: games whose steps run at once."""
    from rich.console import Console

    console = Console(stderr=True)
    links = Console(highlight=False, soft_wrap=True)  # stdout: what a person or script keeps
    if not 1 <= jobs <= MAX_JOBS:
        console.print(f"[bold red]error:[/] --jobs: from 1 to {MAX_JOBS}, not {jobs}")
        return 2
    if not is_loopback(host):
        console.print(
            f"[yellow]warning:[/] serving on {host}: links carry the players' tokens over plain "
            "HTTP; use this only on a network you trust."
        )

    def announce(server: Server) -> None:
        for name, path in check_registration(list(scenarios or [])).items():
            console.print(f"Scenario {name}: {path}", highlight=False)
        if db is not None:
            from wargraph.store.errors import describe

            console.print(f"Games kept in {describe(db)} (wargraph games --db)", highlight=False)
        console.print(
            f"API: Authorization: Bearer {server.facilitator_token}\n"
            f"State: {server.state_dir}   Log: {server.log_path}   Games at once: {jobs}   "
            "Stop: Ctrl-C",
            highlight=False,
            soft_wrap=True,
        )
        # The links on stdout, plain: the facilitator's alone on the last line, no colour or
        # indent, so a terminal makes it clickable and a script reads it with `tail -1`.
        links.out(
            f"Players' page: {server.url}/play (each person's own link, which opens only their "
            "seat, is on the facilitator page once a game starts)\n"
            "Facilitator page (keep this link to yourself):\n"
            f"{server.facilitator_link}"
        )
        sys.stdout.flush()

    # start() makes the folder (after its checks) before it opens the log there
    folder = Path(state_dir or DEFAULT_STATE_DIR).resolve()
    return foreground(
        console,
        announce,
        own_banner=False,
        log_path=folder / SERVER_LOG,
        host=host,
        port=port,
        config=config,
        state_dir=state_dir,
        scenarios=scenarios,
        allow_models=allow_models,
        db=db,
        jobs=jobs,
    )


def foreground(console: Any, announce: Any, own_banner: bool = True, **start_kwargs: Any) -> int:
    """Start a server, print its links (`announce(server)`) and wait until Ctrl-C or its end.
    `own_banner=False`: `announce` prints the token and state lines itself."""
    try:
        server, skipped = start(**start_kwargs)
    except ServeError as err:
        console.print(f"[bold red]error:[/] {escape(str(err))}", highlight=False, soft_wrap=True)
        return 2
    for gid, why in skipped.items():
        console.print(f"[yellow]graph {gid} left out:[/] {escape(why)}", highlight=False)
    previous = _stop_on_signals()
    try:
        console.print("Starting the LangGraph server (a few seconds)...", highlight=False)
        took = wait_ready(server)
        console.print(f"LangGraph server ready at {server.url} in {took:.1f} s", highlight=False)
        announce(server)
        if own_banner:
            console.print(
                f"API: Authorization: Bearer {server.facilitator_token}\n"
                f"State: {server.state_dir}   Stop: Ctrl-C",
                highlight=False,
                soft_wrap=True,
            )
        code = server.process.wait()
        if code and server.log_path is not None:  # it ended by itself: say why, from its log
            tail = "\n".join(server.log_tail(4000).splitlines()[-15:])
            console.print(
                f"[bold red]error:[/] the server stopped (exit code {code}); the end of "
                f"{server.log_path}:\n{escape(tail)}",
                highlight=False,
                soft_wrap=True,
            )
        return code
    except ServeError as err:
        console.print(f"[bold red]error:[/] {escape(str(err))}", highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _stop_on_signals() -> dict[int, Any]:
    """SIGINT, SIGTERM and SIGHUP end `serve`, so the server is stopped on the way out. SIGINT
    too: a process started with SIGINT ignored (a background job of a script, or a parent that
    ignores it, as Ray's in-process driver leaves a test run) inherits that, and Python then
    leaves Ctrl-C ignored — the server would not stop."""

    def interrupt(signum: int, frame: FrameType | None) -> NoReturn:
        raise KeyboardInterrupt

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            previous[signum] = signal.signal(signum, interrupt)
    return previous
