"""Workflow commands, outputs and the step summary, written to streams a test can capture.

The runner reads every line of stdout and stderr as a possible command, so every line goes
through one writer (`Workflow._line`) after its text lost its control characters and was
escaped (a command's message) or defused (a plain line): whatever a title or payload holds,
one call is one line and starts no command. Multi-line outputs use a random heredoc delimiter.
"""

from __future__ import annotations

import re
import secrets
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

from ai_context.core.errors import ConfigError
from ai_context.core.markdown import strip_controls

# What the runner takes for a command once it trims a line's leading whitespace, and its
# defused form, which the runner shows as text.
_COMMAND_START_RE = re.compile(r"^(\s*)(::|##\[)")
_DEFUSED = {"::": "%3A:", "##[": "%23#["}


def escape_data(value: str) -> str:
    """A command's message: the runner decodes %25, %0D and %0A back."""
    return strip_controls(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def plain_line(value: str) -> str:
    """A log line the runner shows as text: one line, never a command."""
    line = strip_controls(value).replace("\n", "%0A")
    return _COMMAND_START_RE.sub(lambda m: m[1] + _DEFUSED[m[2]], line, count=1)


class Workflow:
    """The runner's side channels: stdout commands, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY."""

    def __init__(
        self, env: Mapping[str, str], stream: TextIO | None = None, errors: TextIO | None = None
    ) -> None:
        self.stream = stream or sys.stdout
        self.errors = errors or sys.stderr
        self.output_path = Path(env["GITHUB_OUTPUT"]) if env.get("GITHUB_OUTPUT") else None
        self.summary_path = (
            Path(env["GITHUB_STEP_SUMMARY"]) if env.get("GITHUB_STEP_SUMMARY") else None
        )

    def check_files(self) -> None:
        """GITHUB_OUTPUT and GITHUB_STEP_SUMMARY can be written (exit 2 before any write)."""
        named = (("GITHUB_OUTPUT", self.output_path), ("GITHUB_STEP_SUMMARY", self.summary_path))
        for name, path in named:
            if path is not None and (path.is_dir() or not path.parent.is_dir()):
                where = "is a folder" if path.is_dir() else "points into a missing folder"
                raise ConfigError(
                    f"environment variable {name} {where} ({path}); the runner sets it to a "
                    "file in an existing folder: unset it, or create the folder"
                )

    def _append(self, name: str, path: Path, text: str) -> None:
        try:
            with path.open("a", encoding="utf-8", errors="replace") as handle:
                handle.write(text)
        except OSError as exc:
            raise ConfigError(f"cannot write {name} ({path}): {exc.strerror or exc}") from exc

    def _line(self, line: str, stream: TextIO | None = None) -> None:
        """The one writer: LINE is already escaped; a stream that is not UTF-8 gets `?` for
        what it cannot encode, never an error."""
        stream = stream or self.stream
        encoding = getattr(stream, "encoding", None) or "utf-8"
        if encoding.lower().replace("-", "").replace("_", "") != "utf8":
            line = line.encode(encoding, "replace").decode(encoding)
        stream.write(line + "\n")

    def command(self, name: str, message: str = "", **properties: str) -> None:
        props = ",".join(f"{k}={escape_property(v)}" for k, v in properties.items() if v)
        head = f"::{name} {props}" if props else f"::{name}"
        self._line(f"{head}::{escape_data(message)}")

    def add_mask(self, value: str) -> None:
        if value:
            self.command("add-mask", value)

    def annotate(
        self, level: str, message: str, title: str = "", file: str = "", line: str = ""
    ) -> None:
        self.command(level, message, title=title, file=file, line=line)

    def group(self, title: str) -> None:
        self.command("group", title)

    def endgroup(self) -> None:
        self.command("endgroup")

    def log(self, line: str) -> None:
        self._line(plain_line(line))

    def trace(self, text: str) -> None:
        """A traceback on stderr, line by line: its messages may quote payload text."""
        for line in text.splitlines():
            self._line(plain_line(line), self.errors)

    def set_outputs(self, outputs: Mapping[str, str]) -> None:
        if self.output_path is None:
            for name, value in outputs.items():
                self.log(f"output {name}={value}")
            return
        records = []
        for name, value in outputs.items():
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            while delimiter in value:  # pragma: no cover - 128 random bits
                delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            records.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
        self._append("GITHUB_OUTPUT", self.output_path, "".join(records))

    def summary(self, markdown: str) -> None:
        if self.summary_path is None:
            return
        text = markdown if markdown.endswith("\n") else markdown + "\n"
        self._append("GITHUB_STEP_SUMMARY", self.summary_path, text)


WAIT_NOTICE = 5.0  # seconds: a longer wait is said before it starts
EVERY_SECONDS = 10.0  # seconds between two progress lines at the most


class Progress:
    """A long run's progress, told through EMIT every EVERY_PAGES pages or EVERY_SECONDS
    seconds (issues read, writes made, time left when known); `waiting` tells of a wait
    longer than WAIT_NOTICE seconds before it starts."""

    def __init__(
        self,
        emit: Callable[[str], None],
        *,
        every_pages: int = 10,
        writing: bool = True,
    ) -> None:
        self.emit = emit
        self.writing = writing  # a run that writes says how many writes it made
        self.every_pages = every_pages
        self.pages = self.issues = self.writes = 0
        self.total: int | None = None
        self.what = ""
        self._started = time.monotonic()
        self._last_pages = 0
        self._last_time = self._started

    def page(self, issues: int, last: int | None = None, what: str = "") -> None:
        """A page of ISSUES was read; LAST is the listing's last page, when known."""
        if what != self.what:  # another listing: its own count of pages
            self.what, self.pages, self._last_pages, self._started = what, 0, 0, time.monotonic()
        self.pages += 1
        self.issues += issues
        self.total = last if last is not None else self.total
        self._maybe()

    def wrote(self) -> None:
        self.writes += 1
        self._maybe()

    def _maybe(self) -> None:
        now = time.monotonic()
        if self.pages - self._last_pages >= self.every_pages or (
            now - self._last_time >= EVERY_SECONDS
        ):
            self._last_pages, self._last_time = self.pages, now
            self.emit(self.line(now))

    def line(self, now: float) -> str:
        where = f"{self.what}: " if self.what else ""
        pages = f"{self.pages} of {self.total} pages" if self.total else f"{self.pages} pages"
        text = f"ai-context: {where}{self.issues:,} issues read ({pages})"
        if self.writing:
            text += f", {self.writes} writes made"
        if self.total and self.pages < self.total:
            left = (now - self._started) / self.pages * (self.total - self.pages)
            text += f", reading done in about {_seconds(left)}"
        return text

    def waiting(self, seconds: float, why: str) -> None:
        if seconds > WAIT_NOTICE:
            until = datetime.now(UTC) + timedelta(seconds=seconds)
            self.emit(
                f"ai-context: waiting {_seconds(seconds)} for {why}, until {until:%H:%M:%S} UTC"
            )


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value < 120 else f"{value / 60:.0f} min"
