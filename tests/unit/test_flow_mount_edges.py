"""`wargraph graph` draws a seat-restricted `order` mount's edges to the seats it asks only
(issue 41: it drew them to every seat), and the game still plays over those edges."""

from __future__ import annotations

from typer.testing import CliRunner

from wargraph.cli import app
from wargraph.kernel.scenario import load_scenario

PHASES = (
    "flow.phases=[{draft: {phase: order, seats: [lendor]}}, "
    "{respond: {phase: order, seats: [karvia, miran]}}, adjudicate]"
)


def edges_from(mermaid: str, node: str) -> set[str]:
    out = set()
    for line in mermaid.splitlines():
        parts = line.strip().rstrip(";").split()
        if len(parts) == 3 and parts[0] == node and parts[1] in ("-->", "-.->"):
            out.add(parts[2])
    return out


def test_a_restricted_mount_draws_edges_to_its_seats_only():
    r = CliRunner().invoke(app, ["graph", "summit", "--set", PHASES])
    assert r.exit_code == 0, r.output
    draft = {e for e in edges_from(r.stdout, "draft") if e.startswith("agent_")}
    respond = {e for e in edges_from(r.stdout, "respond") if e.startswith("agent_")}
    assert draft == {"agent_lendor"}
    assert respond == {"agent_karvia", "agent_miran"}
    assert edges_from(r.stdout, "agent_lendor") == {"draft"}  # and back to that mount only


def test_an_unrestricted_mount_still_reaches_every_player():
    r = CliRunner().invoke(app, ["graph", "summit"])
    assert r.exit_code == 0, r.output
    sc = load_scenario("summit")
    players = {f"agent_{p}" for p in sc.players}
    assert players <= edges_from(r.stdout, "negotiate")


def test_a_team_is_still_drawn_from_a_restricted_mount():
    """`order` asks a team's members and leader whatever the mount's seats: drawn so."""
    import wargraph.graphs.flow.graph as flow

    sc = load_scenario(
        "summit",
        [
            "flow.phases=[{draft: {phase: order, seats: [lendor]}}, adjudicate]",
            "teams={south: {members: [miran], leader: karvia}}",
        ],
    )
    g = flow.build(sc).compile().get_graph()
    targets = {e.target for e in g.edges if e.source == "draft" and e.target.startswith("agent_")}
    assert targets == {"agent_lendor", "agent_miran", "agent_karvia"}
