"""`handoff` and `done` after the block has landed: trouble releasing the lease is a note on
stderr, and the command reports the handoff it wrote, not an error."""

from __future__ import annotations

import json

import pytest

from tests.conftest import SEED_BLOCK, run_cli
from tests.fakes import GitHubFake


def _handed_off(fake: GitHubFake, command: list[str]) -> tuple[dict[str, object], str]:
    code, out, err = run_cli([*command, "--format", "json"])
    assert code == 0, out + err
    assert "AI Context" in fake.issue("acme/shop", 1).body
    return json.loads(out), err


@pytest.mark.parametrize(
    "command", [["handoff", "1", "--to", "cc-noa-desktop"], ["done", "1"]], ids=["handoff", "done"]
)
def test_a_lease_ref_that_is_not_a_lease_leaves_the_handoff_reported(
    agent_fake: GitHubFake, command: list[str]
) -> None:
    run_cli(["save", "1"], SEED_BLOCK)
    sha = agent_fake.create_commit("acme/shop", "not a lease at all")
    agent_fake.set_ref("acme/shop", "refs/ai-context/leases/1", sha)
    data, err = _handed_off(agent_fake, command)
    assert "error" not in data
    assert "lease: not released (" in err and "not a lease" in err


def test_github_refusing_the_lease_read_leaves_the_handoff_reported(
    agent_fake: GitHubFake,
) -> None:
    run_cli(["save", "1"], SEED_BLOCK)

    def refuse_lease_reads(_request: object) -> None:
        agent_fake.fail_next("GET", "*", status=403, times=None)

    agent_fake.after("PATCH", "/repos/acme/shop/issues/1", refuse_lease_reads)
    data, err = _handed_off(agent_fake, ["handoff", "1", "--to", "cc-noa-desktop"])
    assert "error" not in data
    assert "lease: not released (" in err
