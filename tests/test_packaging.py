"""The container action's packaging: the image's install, the Dockerfile, action.yml, its docs.

The install test follows the Dockerfile itself: it copies what the COPY lines copy (minus what
.dockerignore keeps out), runs the RUN line's pip command in a fresh venv and starts the
ENTRYPOINT with the image's ENV. So a file the build needs but the Dockerfile forgets to copy,
or templates that do not make it into the wheel, fail here and not in a user's workflow.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
ACTION = ROOT / "action.yml"
DOCS = ROOT / "README.md"
WORKFLOW = ROOT / ".github" / "workflows" / "ai-context.yml"

# Every input of the action and its effective default (issue 3, item 1).
INPUTS = {
    "github-token": "${{ github.token }}",
    "config": ".github/ai-context.yml",
    "jobs": "auto",
    "dry-run": "false",
    "full": "false",
    "fail-on": "never",
    "stale-after": "24h",
    "clickup-token": "",
    "clickup-api-url": "https://api.clickup.com/api/v2",
    "clickup-team-id": "",
    "slack-webhook-url": "",
    "digest-issue": "",
    "templates": "",
    "bot-login": "github-actions[bot]",
    "max-writes": "50",
    "mention-owners": "new",
}
# Inputs the config file may also set: action.yml leaves them empty, because GitHub always
# passes a declared default and it would shadow the file; the code applies the default.
OVERRIDABLE = (
    "jobs",
    "dry-run",
    "full",
    "fail-on",
    "stale-after",
    "max-writes",
    "mention-owners",
    "clickup-api-url",
    "bot-login",
)
OUTPUTS = ("findings", "errors", "stale", "mirrored", "digest-url", "api-calls", "writes-left")
# Before the first release, users copy the action into their repository (README.md, step 1).
DOCS_USES = "./.github/actions/ai-context"
BYTECODE = "AI_CONTEXT_TEMPLATE_BYTECODE"


# --- reading the Dockerfile and .dockerignore ---------------------------------------------


def instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) per instruction, continuation lines joined, comments dropped."""
    result: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#") or (not line and not pending):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, args = (pending + line).partition(" ")
        result.append((keyword.upper(), args.strip()))
        pending = ""
    return result


def dockerfile() -> list[tuple[str, str]]:
    return instructions(DOCKERFILE.read_text(encoding="utf-8"))


def only(keyword: str) -> list[str]:
    return [args for kw, args in dockerfile() if kw == keyword]


def env_of(args: str) -> dict[str, str]:
    """The variables one ENV instruction sets (`K=V K2=V2` or the legacy `K V`)."""
    words = shlex.split(args)
    if "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}
    return dict(word.split("=", 1) for word in words)


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for args in only("ENV"):
        env.update(env_of(args))
    return env


def _glob_to_regex(pattern: str) -> str:
    """A .dockerignore pattern (Go filepath.Match plus `**`) as a regular expression."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "[":
            end = pattern.index("]", i)
            out, i = out + pattern[i : end + 1], end + 1  # Go and Python both negate with ^
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return out


def dockerignore() -> Callable[[str], bool]:
    """Docker's rule: the last pattern matching the path or one of its parents decides."""
    rules: list[tuple[bool, re.Pattern[str]]] = []
    path = ROOT / ".dockerignore"
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        pattern = os.path.normpath(line.removeprefix("!").strip()).lstrip("/")
        rules.append((keep, re.compile(_glob_to_regex(pattern))))

    def ignored(relpath: str) -> bool:
        parts = relpath.split("/")
        verdict = False
        for keep, regex in rules:
            if any(regex.fullmatch("/".join(parts[:n])) for n in range(1, len(parts) + 1)):
                verdict = not keep
        return verdict

    return ignored


def copy_build_context(dest_root: Path) -> None:
    """Lay out what the image's WORKDIR holds after the COPY lines (paths relative to it)."""
    ignored = dockerignore()
    copies = only("COPY")
    assert copies, "the Dockerfile copies nothing"
    for args in copies:
        words = json.loads(args) if args.startswith("[") else shlex.split(args)
        assert not any(w.startswith("--from") for w in words), "multi-stage COPY: adapt the test"
        *sources, dest = [w for w in words if not w.startswith("--")]
        assert not Path(dest).is_absolute(), f"COPY to {dest}: expected a path in WORKDIR"
        target = dest_root / dest
        for source in sources:
            matches = sorted(ROOT.glob(source))
            assert matches, f"COPY {source}: no such file in the repository"
            for match in matches:
                rel = match.relative_to(ROOT).as_posix()
                assert not ignored(rel), f"COPY {rel}, but .dockerignore keeps it out"
                if match.is_dir():
                    for file in sorted(match.rglob("*")):
                        inner = file.relative_to(ROOT).as_posix()
                        if file.is_file() and not ignored(inner):
                            out = target / file.relative_to(match)
                            out.parent.mkdir(parents=True, exist_ok=True)
                            shutil.copy2(file, out)
                else:
                    into_dir = dest.endswith("/") or len(sources) > 1 or target.is_dir()
                    out = target / match.name if into_dir else target
                    out.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(match, out)


def build_args() -> dict[str, str]:
    """The ARG defaults: what a plain `docker build .` (no --build-arg) uses."""
    args: dict[str, str] = {}
    for spec in only("ARG"):
        name, _, default = spec.partition("=")
        args[name] = shlex.split(default)[0] if default.strip() else ""
    return args


def expand(word: str, args: dict[str, str]) -> str:
    """`${NAME}` / `$NAME` as the shell in RUN sees them: build args are its environment."""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args[m[1] or m[2]], word)


def pip_install_run() -> tuple[dict[str, str], list[str]]:
    """The one RUN that installs: its leading `NAME=value` assignments, and the pip command."""
    pip_runs = [args for args in only("RUN") if re.search(r"\bpip install\b", args)]
    assert len(pip_runs) == 1, f"expected one RUN pip install, found {pip_runs}"
    words = [expand(w, build_args()) for w in shlex.split(pip_runs[0])]
    assignments: dict[str, str] = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        assignments[name] = value
    assert words[:2] == ["pip", "install"], f"RUN {pip_runs[0]}: expected `pip install ...`"
    return assignments, words


def bytecode_run() -> list[str]:
    """The RUN that compiles the bundled templates into the image, as words."""
    runs = [args for args in only("RUN") if "ai_context.adapters.templates" in args]
    assert len(runs) == 1, f"expected one RUN compiling the templates, found {runs}"
    return [expand(w, build_args()) for w in shlex.split(runs[0])]


# --- (a) the install the image makes, in a fresh venv --------------------------------------


@dataclass(frozen=True)
class Installed:
    python: Path
    env: dict[str, str]
    workspace: Path  # an empty directory standing in for /github/workspace


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("image")
    workdir, venv_dir, workspace = base / "workdir", base / "venv", base / "workspace"
    workdir.mkdir()
    workspace.mkdir()
    copy_build_context(workdir)

    # The venv's python plays the image's `python`; nothing of this checkout may leak in.
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    env.pop("VIRTUAL_ENV", None)
    done = run([sys.executable, "-m", "venv", str(venv_dir)], env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    python = venv_dir / "bin" / "python"
    env["PATH"] = f"{venv_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"

    assignments, words = pip_install_run()
    assert not {"-e", "--editable"} & set(words), "the image must not install in editable mode"
    assert "." in words, "the image must install the project from its own metadata (`.`)"
    env.update(assignments)
    done = run([str(python), "-m", *words], cwd=workdir, env=env, timeout=900)
    assert done.returncode == 0, f"{' '.join(words)} failed:\n{done.stdout}\n{done.stderr}"

    env.update(image_env())
    # The image's bytecode directory is under /usr/local: here, one of the test's own.
    env[BYTECODE] = str(base / "bytecode")
    words = bytecode_run()
    done = run(words, cwd=workdir, env=env, timeout=300)
    assert done.returncode == 0, f"{' '.join(words)} failed:\n{done.stdout}\n{done.stderr}"
    yield Installed(python=python, env=env, workspace=workspace)


def entrypoint() -> list[str]:
    (args,) = only("ENTRYPOINT")
    command = json.loads(args)
    assert isinstance(command, list)
    return [str(c) for c in command]


def test_entrypoint_help_runs_from_the_installed_package(installed: Installed) -> None:
    command = entrypoint()
    script = installed.python.parent / command[0]
    assert script.is_file(), f"the image's PATH has no {command[0]} after the install"
    done = run(
        [str(script), *command[1:], "--help"],
        cwd=installed.workspace,
        env=installed.env,
        timeout=120,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert done.stdout.strip(), "--help printed nothing"


def test_image_without_build_args_reports_the_fallback_version(installed: Installed) -> None:
    """No .git in the build context and no --build-arg: the ARG default, pyproject's fallback."""
    script = installed.python.parent / "ai-context"
    done = run([str(script), "--version"], cwd=installed.workspace, env=installed.env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ai-context {build_args()['VERSION']}"


PROBE = """
import importlib.resources, json, ai_context
templates = importlib.resources.files("ai_context") / "templates"
print(json.dumps({
    "package": ai_context.__file__,
    "templates": str(templates),
    "is_dir": templates.is_dir(),
}))
"""


def probe(installed: Installed, script: str) -> dict[str, Any]:
    """What SCRIPT prints as JSON, run by the installed package's Python in the workspace."""
    done = run(
        [str(installed.python), "-c", script],
        cwd=installed.workspace,
        env=installed.env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_templates_are_inside_the_installed_package(installed: Installed) -> None:
    found = probe(installed, PROBE)
    package = Path(found["package"]).parent
    venv_dir = installed.python.parent.parent
    assert package.is_relative_to(venv_dir), f"imported {package}, not the installed package"
    templates = Path(found["templates"])
    assert found["is_dir"], f"no templates directory in the installed package ({templates})"
    assert templates.parent == package

    source = ROOT / "templates"
    wanted = {p.relative_to(source) for p in source.rglob("*") if p.is_file()}
    wanted = {p for p in wanted if "__pycache__" not in p.parts}
    shipped = {p.relative_to(templates) for p in templates.rglob("*") if p.is_file()}
    assert wanted, "templates/ holds no template"
    assert wanted <= shipped, f"templates missing from the wheel: {sorted(wanted - shipped)}"


LOADS = """
import json, jinja2
from ai_context.adapters.templates import Templates
from ai_context.rules.templating import compile_all
compiled = []
real = jinja2.Environment.compile
jinja2.Environment.compile = lambda *a, **k: compiled.append(a[2]) or real(*a, **k)
templates = Templates()
compile_all(templates.env)
names = [n for n in templates.env.loader.list_templates() if n.endswith(".j2")]
print(json.dumps({"loaded": names, "compiled": compiled}))
"""


def test_the_image_compiles_the_bundled_templates_at_build_and_a_run_only_loads_them(
    installed: Installed,
) -> None:
    """The Dockerfile's RUN fills the directory ENV names; the installed package then loads
    every bundled template from it without compiling, and writes nothing there."""
    assert image_env()[BYTECODE].startswith("/usr/local/share/")
    directory = Path(installed.env[BYTECODE])
    filled = sorted(p.name for p in directory.iterdir())
    assert len(filled) == len(list((ROOT / "templates").glob("*.j2")))
    found = probe(installed, LOADS)
    assert len(found["loaded"]) == len(filled)
    assert found["compiled"] == []
    assert sorted(p.name for p in directory.iterdir()) == filled
    assert list(installed.workspace.iterdir()) == []


def test_a_workspace_package_does_not_shadow_the_installed_one(installed: Installed) -> None:
    """The runner mounts the user's checkout as the working directory of `python -m`."""
    decoy = installed.workspace / "decoy"
    (decoy / "ai_context").mkdir(parents=True, exist_ok=True)
    (decoy / "ai_context" / "__init__.py").write_text("raise SystemExit(97)\n", encoding="utf-8")
    probe = "import ai_context; print(ai_context.__file__)"
    done = run([str(installed.python), "-c", probe], cwd=decoy, env=installed.env, timeout=120)
    assert done.returncode == 0, f"the workspace's ai_context was imported\n{done.stderr}"
    shutil.rmtree(decoy)


# --- (b) the Dockerfile ----------------------------------------------------------------------


def test_base_image_is_the_official_python_3_12_slim() -> None:
    (base,) = only("FROM")
    image = base.split()[0]
    assert re.fullmatch(r"python:3\.12-slim(?:-[a-z]+)?(?:@sha256:[0-9a-f]{64})?", image), image


def test_entrypoint_runs_the_action_subcommand_in_exec_form() -> None:
    assert entrypoint() == ["ai-context", "action"]


def test_image_installs_no_test_or_bench_extras() -> None:
    _, words = pip_install_run()
    targets = [w for w in words[2:] if not w.startswith("-")]
    assert targets == ["."], f"the image installs {targets}, expected only `.` (no extras)"


def test_version_labels_come_from_build_args() -> None:
    """version, revision and source are OCI labels fed by ARGs, which release.yml passes."""
    labels: dict[str, str] = {}
    for args in only("LABEL"):
        labels.update(env_of(args))
    for key, arg in (("version", "VERSION"), ("revision", "REVISION"), ("source", "SOURCE")):
        assert labels.get(f"org.opencontainers.image.{key}") == f"${{{arg}}}", key
    assert set(build_args()) >= {"VERSION", "REVISION", "SOURCE"}
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    fallback = pyproject["tool"]["hatch"]["version"]["fallback-version"]
    assert build_args()["VERSION"] == fallback
    assignments, _ = pip_install_run()
    assert assignments == {"SETUPTOOLS_SCM_PRETEND_VERSION": fallback}


def test_one_version_source_and_one_unknown_version() -> None:
    """`version()` is the installed metadata's (hatch-vcs wrote it from the tag), and a tree
    that was never installed says the same unknown version as a build without git."""
    from importlib.metadata import version

    import ai_context

    assert ai_context.version() == version("ai-context")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"]
    assert pyproject["project"]["dynamic"] == ["version"]
    fallback = pyproject["tool"]["hatch"]["version"]["fallback-version"]
    assert fallback == ai_context.UNKNOWN_VERSION


def test_no_user_line_docker_actions_run_as_root() -> None:
    assert only("USER") == []


def test_image_environment() -> None:
    env = image_env()
    assert env.get("PYTHONUNBUFFERED") == "1"
    assert env.get("PYTHONDONTWRITEBYTECODE") == "1"


# --- (c) action.yml, its docs and the workflow ------------------------------------------------


def load(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_action_is_a_docker_action_built_from_the_dockerfile() -> None:
    action = load(ACTION)
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert action["name"]
    assert action["description"]
    assert set(action["branding"]) == {"icon", "color"}


@pytest.mark.parametrize(("name", "default"), INPUTS.items())
def test_input_is_declared_with_its_default(name: str, default: str) -> None:
    spec = load(ACTION)["inputs"].get(name)
    assert spec is not None, f"input {name!r} is not declared"
    assert spec.get("default") == ("" if name in OVERRIDABLE else default)


@pytest.mark.parametrize(("name", "default"), INPUTS.items())
def test_effective_default_is_the_codes(name: str, default: str) -> None:
    from ai_context.adapters.config import load_config

    settings = load_config({"INPUT_CONFIG": "/nonexistent.yml"})
    value = getattr(settings, name.replace("-", "_"))
    if name in ("github-token", "config"):
        return  # supplied by GitHub / a path, not a code default
    shown = {True: "true", False: "false", None: ""}.get(value, value)  # type: ignore[call-overload]
    if name == "jobs":
        shown = ",".join(value)
    if name == "stale-after":
        shown = f"{int(value.total_seconds() // 3600)}h"
    if name == "max-writes":
        shown = str(value)
    assert shown == default


def test_every_input_has_a_description_and_a_string_default() -> None:
    for name, spec in load(ACTION)["inputs"].items():
        assert str(spec.get("description", "")).strip(), f"{name}: no description"
        assert isinstance(spec.get("default"), str), f"{name}: default missing or not a string"
        assert re.fullmatch(r"[a-z][a-z0-9-]*", name), f"{name}: not a kebab-case name"


def test_github_token_is_required() -> None:
    assert load(ACTION)["inputs"]["github-token"]["required"] is True


def test_every_output_is_declared_with_a_description() -> None:
    outputs = load(ACTION)["outputs"]
    assert set(outputs) == set(OUTPUTS)
    for name, spec in outputs.items():
        assert str(spec.get("description", "")).strip(), f"output {name}: no description"


def docs_table_rows() -> dict[str, list[str]]:
    """`| `name` | cell | cell |` rows of README.md, keyed by the name."""
    rows: dict[str, list[str]] = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        found = re.match(r"\|\s*`([a-z][a-z0-9-]*)`\s*\|(.*)\|\s*$", line)
        if found:
            rows.setdefault(found[1], [cell.strip() for cell in found[2].split("|")])
    return rows


def test_every_input_and_output_is_documented() -> None:
    action, rows = load(ACTION), docs_table_rows()
    for name in [*action["inputs"], *action["outputs"]]:
        assert name in rows, f"{name} is not in README.md's tables"


def test_documented_defaults_match_action_yml() -> None:
    rows = docs_table_rows()
    for name in load(ACTION)["inputs"]:
        documented = rows[name][0]
        default = INPUTS[name]
        expected = f"`{default}`" if default else "empty"
        assert documented == expected, f"{name}: docs say {documented}, action.yml {expected}"


def action_step(workflow: dict[Any, Any], uses: str) -> dict[str, Any]:
    steps = [s for job in workflow["jobs"].values() for s in job["steps"] if s.get("uses") == uses]
    assert len(steps) == 1, f"expected one step `uses: {uses}`"
    step: dict[str, Any] = steps[0]
    return step


def docs_workflow() -> dict[Any, Any]:
    blocks = re.findall(r"```yaml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    workflows = [b for b in blocks if b.startswith("name: ai-context")]
    assert workflows, "README.md shows no workflow"
    data = yaml.safe_load(workflows[0])
    assert isinstance(data, dict)
    return data


def test_workflows_pass_only_declared_inputs() -> None:
    inputs = set(load(ACTION)["inputs"])
    for step in (
        action_step(load(WORKFLOW), "./"),
        action_step(docs_workflow(), DOCS_USES),
    ):
        assert set(step.get("with", {})) <= inputs


def test_documented_workflow_is_this_repositorys_workflow() -> None:
    """What users copy is what this repository runs, but for the action's `uses:`."""
    ours, theirs = load(WORKFLOW), docs_workflow()
    action_step(theirs, DOCS_USES)["uses"] = "./"
    assert theirs == ours


def test_user_workflow_asks_for_least_privilege() -> None:
    workflow = load(WORKFLOW)
    assert workflow["permissions"] == {}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"issues": "write", "contents": "read"}
    assert workflow["concurrency"]["cancel-in-progress"] is False
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert set(triggers) == {"issues", "push", "schedule", "workflow_dispatch"}
    assert set(triggers["issues"]["types"]) == {
        "opened",
        "edited",
        "reopened",
        "labeled",
        "unlabeled",
    }
    for entry in triggers["schedule"]:
        minute = entry["cron"].split()[0]
        assert minute.isdigit() and int(minute) % 5 != 0, f"cron at a busy minute: {minute}"
