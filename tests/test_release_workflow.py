"""The release workflow's shape: what zizmor and the schema cannot know about our intent.

zizmor (offline, in `make lint`) and check-jsonschema cover template injection, credentials
left in the checkout and the schema; these tests hold the rest: full-SHA pins with their
versions, permissions per job, the one environment that publishes, the image's build
arguments matching the Dockerfile's, and the release job running the version check.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
RELEASE = ROOT / ".github" / "workflows" / "release.yml"
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>\S+)(?P<comment>.*)$")


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def jobs() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = load(RELEASE)["jobs"]
    return found


def steps(job: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = jobs()[job]["steps"]
    return found


def step_using(job: str, action: str) -> dict[str, Any]:
    (step,) = [s for s in steps(job) if str(s.get("uses", "")).startswith(f"{action}@")]
    return step


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_remote_action_is_pinned_by_full_sha_with_its_version(path: Path) -> None:
    pins: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = USES.match(line)
        if not match or match["ref"].startswith("./"):
            continue
        action, _, sha = match["ref"].partition("@")
        assert re.fullmatch(r"[0-9a-f]{40}", sha), f"{match['ref']}: not a full commit SHA"
        version = re.fullmatch(r"\s*# (v\d+\.\d+\.\d+)\s*", match["comment"])
        assert version, f"{match['ref']}: no `# vX.Y.Z` comment"
        pins.setdefault(action, set()).add(f"{sha} {version[1]}")
    for action, seen in pins.items():
        assert len(seen) == 1, f"{action} pinned two ways in {path.name}: {sorted(seen)}"


def test_triggers_on_version_tags_only() -> None:
    workflow = load(RELEASE)
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert triggers == {"push": {"tags": ["v*.*.*"]}}
    assert workflow["concurrency"]["cancel-in-progress"] is False


def test_least_permissions_per_job() -> None:
    assert load(RELEASE)["permissions"] == {}
    expected = {
        "version": {"contents": "read"},
        "test": {"contents": "read"},
        "image": {
            "contents": "read",
            "packages": "write",
            "id-token": "write",
            "attestations": "write",
        },
        "dist": {"contents": "read"},
        "pypi": {"id-token": "write"},
        "release": {"contents": "write"},
    }
    assert {name: job.get("permissions") for name, job in jobs().items()} == expected


def test_only_the_pypi_job_publishes_and_it_has_its_environment_and_no_token() -> None:
    environments = {n: j["environment"] for n, j in jobs().items() if "environment" in j}
    assert list(environments) == ["pypi"]
    assert environments["pypi"]["name"] == "pypi"
    publish = step_using("pypi", "pypa/gh-action-pypi-publish")
    assert "password" not in publish.get("with", {}), "trusted publishing takes no token"
    assert "secrets." not in RELEASE.read_text(encoding="utf-8")


def test_every_checkout_drops_its_credentials() -> None:
    for name in jobs():
        for step in steps(name):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name


def test_no_expression_inside_a_run_script() -> None:
    """Values reach scripts through env:, never pasted into the script text."""
    for name in jobs():
        for step in steps(name):
            assert "${{" not in str(step.get("run", "")), f"{name}: {step.get('name')}"


def test_image_is_multi_arch_pushed_and_attested_by_its_digest() -> None:
    build = step_using("image", "docker/build-push-action")["with"]
    assert build["platforms"] == "linux/amd64,linux/arm64"
    assert build["push"] is True
    assert build["tags"] == "${{ env.IMAGE }}:${{ env.VERSION }}"
    for action in ("actions/attest-build-provenance", "actions/attest-sbom"):
        attest = step_using("image", action)["with"]
        assert attest["subject-digest"] == "${{ steps.build.outputs.digest }}"
        assert attest["push-to-registry"] is True
    sbom = step_using("image", "anchore/sbom-action")["with"]
    assert sbom["output-file"] == step_using("image", "actions/attest-sbom")["with"]["sbom-path"]


def test_build_args_are_the_dockerfiles_args() -> None:
    build = step_using("image", "docker/build-push-action")["with"]
    passed = {line.split("=", 1)[0] for line in build["build-args"].splitlines() if line}
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    declared = set(re.findall(r"^ARG (\w+)", dockerfile, re.M))
    assert passed == declared == {"VERSION", "REVISION", "SOURCE"}


def test_release_job_checks_action_yml_before_moving_tags() -> None:
    scripts = [str(s.get("run", "")) for s in steps("release")]
    joined = "\n".join(scripts)
    check = joined.index("scripts/release_action.py --check")
    rewrite = joined.index("scripts/release_action.py --repository")
    push = joined.index("git push --force origin")
    assert rewrite < check < push
    assert '"refs/tags/$MAJOR"' in joined
    assert "changelog_section.py" in joined
    assert set(jobs()["release"]["needs"]) == {"version", "image", "pypi"}


def test_the_tag_is_checked_before_anything_is_built() -> None:
    for name, job in jobs().items():
        if name != "version":
            assert "version" in job["needs"], f"{name} does not wait for the version checks"
    scripts = "\n".join(str(s.get("run", "")) for s in steps("version"))
    assert "changelog_section.py" in scripts
    assert r"^v([0-9]+)\.([0-9]+)\.([0-9]+)$" in scripts
