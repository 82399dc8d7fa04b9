"""The templates a run renders, read from disk, and where a render of a user's templates runs.

The bundled templates render in this process. The sandbox's checks (rules/template_limits)
cannot stop everything a user's template can do (a loop over a long string, `lipsum`, a `join`
that multiplies its input), so a render with a user's directory runs in a child of a fork server
that the kernel bounds (RLIMIT_CPU, RLIMIT_AS) and that is killed on the wall clock: whichever
comes first is "template error: ..." (exit 2), before anything is written.

The image compiles the bundled templates at build time (`python -m ai_context.adapters.templates`
in the Dockerfile) into the directory AI_CONTEXT_TEMPLATE_BYTECODE names; a run only reads it.
A run never writes bytecode, and never reads it from the working directory or the workspace:
bytecode in a checkout would be code a pull request could ship.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar, cast

from jinja2 import (
    BaseLoader,
    BytecodeCache,
    ChoiceLoader,
    FileSystemBytecodeCache,
    FileSystemLoader,
    PackageLoader,
)
from jinja2.bccache import Bucket

from ai_context.core.errors import AIContextError, ConfigError, TemplateError
from ai_context.rules.template_limits import MAX_SECONDS
from ai_context.rules.templating import compile_all, make_env

try:
    import resource
except ImportError:  # pragma: no cover - Windows: the wall clock still bounds a render
    resource = None  # type: ignore[assignment]

PACKAGE = "ai_context"
TEMPLATE_DIR = "templates"
BYTECODE_VARIABLE = "AI_CONTEXT_TEMPLATE_BYTECODE"  # set by the Dockerfile
T = TypeVar("T")
_OUT_OF_MEMORY = 86  # the child's exit status when not even its answer could be sent
# What the fork server imports once, so each child starts without importing them again.
_PRELOAD = [
    "ai_context.adapters.templates",
    "ai_context.rules.digest.render",
    "ai_context.rules.digest.slack",
    "ai_context.rules.mirror.targets",
]


@dataclass(frozen=True)
class RenderLimits:
    """What a render of a user's templates may use: CPU and wall-clock seconds, and bytes of
    memory above what its process starts with."""

    seconds: float = MAX_SECONDS
    memory: int = 512 * 1024 * 1024


def bundled_templates() -> Traversable:
    """Where the bundled templates are: inside the installed package, else (a source checkout,
    an editable install) the repository's own `templates/` folder."""
    packaged = resources.files(PACKAGE).joinpath(TEMPLATE_DIR)
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3].joinpath(TEMPLATE_DIR)


def _bundled_loader() -> BaseLoader:
    node = bundled_templates()
    if isinstance(node, Path):
        return FileSystemLoader(str(node))
    return PackageLoader(PACKAGE, TEMPLATE_DIR)  # a zip: no filesystem path


def template_loader(user_dir: Path | None) -> BaseLoader:
    """`user_dir`'s templates first, then the bundled ones (ValueError: no such directory)."""
    if user_dir is None:
        return _bundled_loader()
    if not user_dir.is_dir():
        raise ValueError(
            f"templates directory {user_dir} does not exist; create it or unset `templates`"
        )
    return ChoiceLoader([FileSystemLoader(str(user_dir)), _bundled_loader()])


class _ReadOnlyBytecode(FileSystemBytecodeCache):
    """The image's compiled templates, loaded and never written. Jinja keys each by its name
    and path and checks its source's SHA-1, so a template that is not there or whose source
    differs (a user's own) compiles in memory as without a cache."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        return None


def _inside(path: Path, directory: str | None) -> bool:
    return directory is not None and path.is_relative_to(Path(directory).resolve())


def image_bytecode() -> BytecodeCache | None:
    """The image's compiled templates (AI_CONTEXT_TEMPLATE_BYTECODE), read-only; None when it
    is unset, not a directory, or inside the working directory or the workspace."""
    name = os.environ.get(BYTECODE_VARIABLE)
    if not name:
        return None
    path = Path(name).resolve()
    if not path.is_dir() or any(
        _inside(path, where) for where in (os.getcwd(), os.environ.get("GITHUB_WORKSPACE") or None)
    ):
        return None
    return _ReadOnlyBytecode(str(path))


def fill_bytecode(directory: Path) -> None:
    """Compile every bundled template into DIRECTORY: the image's build step."""
    directory.mkdir(parents=True, exist_ok=True)
    compile_all(make_env(_bundled_loader(), FileSystemBytecodeCache(str(directory))))


class Templates:
    """The templates of a run: a user's directory (ValueError when it does not exist) before
    the bundled ones. `run` renders with them, bounded for a user's."""

    def __init__(self, user_dir: Path | None = None, limits: RenderLimits | None = None) -> None:
        self.user_dir = user_dir
        self.limits = limits or RenderLimits()
        self.env = make_env(template_loader(user_dir), image_bytecode())

    def __repr__(self) -> str:
        return f"Templates({self.user_dir!r})"

    def run(self, render: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`render(*args, env=<the environment>, **kwargs)`: here for the bundled templates,
        in a bounded child process for a user's (RENDER and its arguments are pickled)."""
        if self.user_dir is None:
            return render(*args, env=self.env, **kwargs)
        return cast(T, _in_child(_Job(self.user_dir, self.limits, render, args, kwargs)))


# --- the child process --------------------------------------------------------------------


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" not in methods:  # pragma: no cover - Windows
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    return context


def _address_space() -> int:
    """This process's address space in bytes (Linux; 0 where /proc is not there)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _bound(limits: RenderLimits) -> None:
    """The kernel's limits on this (child) process: CPU seconds (SIGXCPU, then SIGKILL a
    second later) and address space (an allocation past it is a MemoryError)."""
    if resource is None:  # pragma: no cover - Windows
        return
    cpu = max(1, math.ceil(limits.seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    base = _address_space()
    if base:
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        soft = base + limits.memory
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@dataclass(frozen=True)
class _Job:
    """One render for a child: what it calls, with what, over which directory, within what."""

    user_dir: Path
    limits: RenderLimits
    render: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def user_templates(workspace: Path, directory: str | None, where: str = "") -> Templates:
    """The `templates` setting's DIRECTORY (under WORKSPACE) over the bundled templates; a
    missing directory is a ConfigError naming WHERE the setting came from, when given."""
    try:
        return Templates(workspace / directory if directory else None)
    except ValueError as exc:
        setting = f"setting templates ({where})" if where else "setting templates"
        raise ConfigError(f"{setting}: {exc}") from exc


def _child(conn: Connection, job: _Job) -> None:
    """Render, and send back ("ok", result), ("error", AIContextError) or ("memory", "").
    Whatever the template raised is the template's fault: no traceback leaves the child."""
    try:
        _bound(job.limits)
        env = make_env(template_loader(job.user_dir), image_bytecode())
        _send(conn, ("ok", job.render(*job.args, env=env, **job.kwargs)))
    except MemoryError:
        _send(conn, ("memory", ""))
    except AIContextError as exc:
        _send(conn, ("error", exc))
    except Exception as exc:  # a user template's own failure (TypeError, RecursionError...)
        _send(conn, ("error", TemplateError(f"template error: {type(exc).__name__}: {exc}")))
    finally:
        conn.close()


def _send(conn: Connection, message: tuple[str, Any]) -> None:
    try:
        conn.send(message)
    except MemoryError:  # the parent reads EOF, and this status
        os._exit(_OUT_OF_MEMORY)


def _in_child(job: _Job) -> Any:
    context = _context()
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, job), daemon=True)
    process.start()
    send.close()
    try:
        message = receive.recv() if receive.poll(job.limits.seconds) else None
    except EOFError:  # the child died: the kernel's limits, or a signal
        message = None
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        receive.close()
    if message is None:
        raise _stopped(job.user_dir, job.limits, process.exitcode)
    kind, value = message
    if kind == "ok":
        return value
    if kind == "memory":
        raise _too_much_memory(job.user_dir, job.limits)
    raise value


def _stopped(user_dir: Path, limits: RenderLimits, exitcode: int | None) -> TemplateError:
    """Why a child ended without an answer: killed on time, out of memory, or else."""
    if exitcode == _OUT_OF_MEMORY:
        return _too_much_memory(user_dir, limits)
    if exitcode is not None and exitcode not in (-signal.SIGXCPU, -signal.SIGKILL):
        how = f"on signal {-exitcode}" if exitcode < 0 else f"with exit status {exitcode}"
        return TemplateError(
            f"template error: the templates in {user_dir} stopped {how}; fix the template, "
            "or remove it to use the bundled one"
        )
    return TemplateError(
        f"template error: the templates in {user_dir} ran longer than {limits.seconds:g} s and "
        "were stopped; look for a loop that does not end (over a long string, a large range), "
        "or remove the template to use the bundled one"
    )


def _too_much_memory(user_dir: Path, limits: RenderLimits) -> TemplateError:
    return TemplateError(
        f"template error: the templates in {user_dir} needed more than "
        f"{limits.memory // (1024 * 1024)} MB of memory and were stopped; look for text that "
        "grows without bound (join, replace, lipsum, a repeated string)"
    )


if __name__ == "__main__":  # the Dockerfile's build step
    fill_bytecode(Path(os.environ[BYTECODE_VARIABLE]))
