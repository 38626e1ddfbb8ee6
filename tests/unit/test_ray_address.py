"""`--ray HOST:PORT` where no cluster answers is one line at once (issue 40, item 10), not a
`ray.init` that kept retrying for minutes while holding the output folder's lock. A real
loopback port with nothing listening; an address that is not one."""

from __future__ import annotations

import socket
import time

import pytest

from wargraph.evals.experiment.cluster import cluster_unreachable, connect_ray
from wargraph.evals.experiment.spec import ExperimentError

pytest.importorskip("ray")
pytestmark = pytest.mark.timeout(60)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_address_with_no_cluster_is_one_line_at_once():
    address = f"127.0.0.1:{_closed_port()}"
    started = time.monotonic()
    with pytest.raises(ExperimentError, match=f"--ray {address}: no Ray cluster answers"):
        connect_ray(address)
    assert time.monotonic() - started < 10


def test_addresses_are_read_as_ray_reads_them():
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert cluster_unreachable(f"127.0.0.1:{port}") is None
        assert cluster_unreachable(f"ray://127.0.0.1:{port}") is None
    assert "HOST:PORT" in (cluster_unreachable("127.0.0.1:notaport") or "")
