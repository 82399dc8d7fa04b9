"""HTTP plumbing shared by the loopback fakes: routing, recording, faults, hooks.

A fake subclasses `FakeServer`, marks handler methods with `@route(METHOD, TEMPLATE)` and
returns `Reply` objects (or raises `HttpError`). Templates use `{name}` for one path segment,
`{name:int}` for digits and `{name:path}` for the rest of the path (slashes included);
captured values are URL-decoded before they reach the handler.

Every request, faulted or not, is recorded and counted under its route template, e.g.
`("GET", "/repos/{owner}/{repo}/issues")`. Handlers run one at a time under the fake's lock,
so state changes, including compare-and-swap, are atomic.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, unquote, urlsplit

ANY = "*"


@dataclass(frozen=True)
class Request:
    """One request as the fake received it (headers keyed in lower case)."""

    method: str
    path: str
    template: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    json: Any

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def int_arg(self, name: str, default: int) -> int:
        try:
            return int(self.arg(name) or default)
        except ValueError:
            return default


@dataclass
class Reply:
    """A response: dict/list bodies are sent as JSON, str as text/plain, None as empty."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class HttpError(Exception):
    """Raise from a handler to answer with an error reply."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(status, body)
        self.reply = Reply(status, body, dict(headers or {}))


@dataclass
class _Rule:
    """A queued fault or hook; `times=None` means until cleared."""

    method: str
    path: str
    times: int | None
    reply: Reply | None = None
    delay: float = 0.0
    callback: Callable[[Request], None] | None = None

    def matches(self, req: Request) -> bool:
        return self.method in (ANY, req.method) and self.path in (ANY, req.path, req.template)


class Hold:
    """A request held by `FakeServer.hold`: `wait()` until it has come, then `release()`."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.arrived = threading.Event()
        self._go = threading.Event()
        self.requests: list[Request] = []

    def arrive(self, req: Request) -> None:
        self.requests.append(req)
        self.arrived.set()
        self._go.wait(self.timeout)

    def wait(self) -> Request:
        """The held request, once it has come (AssertionError after the timeout)."""
        assert self.arrived.wait(self.timeout), "no request came to be held"
        return self.requests[-1]

    def release(self) -> None:
        self._go.set()


def route(method: str, template: str) -> Callable[[Callable[..., Reply]], Callable[..., Reply]]:
    """Mark a FakeServer method as the handler of METHOD + TEMPLATE."""

    def mark(fn: Callable[..., Reply]) -> Callable[..., Reply]:
        fn._route = (method, template)  # type: ignore[attr-defined]
        return fn

    return mark


def _compile(template: str) -> re.Pattern[str]:
    kinds = {"": "[^/]+", "int": r"\d+", "path": ".+"}
    parts = re.split(r"\{(\w+)(?::(\w+))?\}", template)
    pattern = "".join(
        re.escape(parts[i])
        + (f"(?P<{parts[i + 1]}>{kinds[parts[i + 2] or '']})" if i + 1 < len(parts) else "")
        for i in range(0, len(parts), 3)
    )
    return re.compile(pattern + "$")


class Clock:
    """Wall clock by default; `set()` freezes it, `advance()` moves a frozen clock, `shift()`
    moves either (a running clock keeps running, ahead by the shift: the hour between two
    scheduled runs, without waiting it)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._frozen = start
        self._offset = timedelta()

    def now(self) -> datetime:
        return self._frozen or datetime.now(UTC).replace(microsecond=0) + self._offset

    def shift(self, **delta: float) -> None:
        if self._frozen is not None:
            self.advance(**delta)
        else:
            self._offset += timedelta(**delta)

    def set(self, when: datetime) -> None:
        self._frozen = when if when.tzinfo else when.replace(tzinfo=UTC)

    def advance(self, seconds: float = 0, **delta: float) -> datetime:
        self.set(self.now() + timedelta(seconds=seconds, **delta))
        return self.now()


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: twenty clients connecting at once (the lease
    # races) would see connection resets that a real GitHub never sends.
    request_queue_size = 128


class FakeServer:
    """Base of the fakes: a ThreadingHTTPServer on 127.0.0.1:0 in a daemon thread."""

    prefix = ""  # path prefix of the API, e.g. "/api/v2"; part of `.url`

    def __init__(self, *, latency: float = 0.0) -> None:
        self.latency = latency
        self.lock = threading.RLock()
        self._requests: list[Request] = []
        self._calls: Counter[tuple[str, str]] = Counter()
        self._faults: list[_Rule] = []
        self._hooks: list[tuple[str, _Rule]] = []
        self._server: ThreadingHTTPServer | None = None
        self.errors: list[str] = []  # tracebacks of handler crashes (bugs in the fake)
        self._routes = [  # (method, template as shown in counts, regex, handler)
            (verb, re.sub(r"\{(\w+):\w+\}", r"{\1}", tpl), _compile(tpl), getattr(self, name))
            for name, (verb, tpl) in _members(type(self))
        ]

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self) -> Self:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes: without this, Nagle's algorithm and
                # delayed ACKs add ~40 ms to every keep-alive request.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def handle_one_request(self) -> None:
                # Route every verb through one method.
                self.raw_requestline = self.rfile.readline(65537)
                if not self.raw_requestline:
                    self.close_connection = True
                    return
                if not self.parse_request():
                    return
                fake._serve(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        serve = self._server.serve_forever
        threading.Thread(target=serve, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def root(self) -> str:
        """`http://127.0.0.1:PORT`, without the API prefix."""
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def url(self) -> str:
        """Base URL of the API, to hand to the code under test."""
        return self.root + self.prefix

    # ---- recording -------------------------------------------------------------------------
    @property
    def requests(self) -> list[Request]:
        with self.lock:
            return list(self._requests)

    @property
    def calls(self) -> Counter[tuple[str, str]]:
        """Requests counted by (method, route template)."""
        with self.lock:
            return Counter(self._calls)

    def count(self, method: str = ANY, path: str = ANY) -> int:
        """Requests matching METHOD and PATH (a concrete path or a route template)."""
        return len(self.requests_to(method, path))

    def requests_to(self, method: str = ANY, path: str = ANY) -> list[Request]:
        rule = _Rule(method.upper() if method != ANY else ANY, path, None)
        return [r for r in self.requests if rule.matches(r)]

    def reset_requests(self) -> None:
        with self.lock:
            self._requests.clear()
            self._calls.clear()

    # ---- faults and hooks ------------------------------------------------------------------
    def fail_next(
        self,
        method: str = ANY,
        path: str = ANY,
        *,
        status: int = 500,
        body: Any = None,
        headers: dict[str, str] | None = None,
        times: int | None = 1,
        delay: float = 0.0,
    ) -> None:
        """Answer the next TIMES matching requests with STATUS (None: until `clear_faults`).

        PATH is a concrete path ("/repos/o/r/issues"), a route template or "*". BODY defaults
        to the service's own error body for STATUS. DELAY seconds pass before the answer.
        """
        body = self.error_body(status) if body is None else body
        reply = Reply(status, body, dict(headers or {}))
        with self.lock:
            self._faults.append(_Rule(method.upper(), path, times, reply, delay))

    def before(
        self, method: str, path: str, callback: Callable[[Request], None], *, times: int = 1
    ) -> None:
        """Run CALLBACK(request) before the next TIMES matching requests are handled."""
        with self.lock:
            self._hooks.append(("before", _Rule(method.upper(), path, times, callback=callback)))

    def after(
        self, method: str, path: str, callback: Callable[[Request], None], *, times: int = 1
    ) -> None:
        """Run CALLBACK(request) after a matching request is handled, before the client sees
        the response: whatever the callback changes is in place for the client's next call."""
        with self.lock:
            self._hooks.append(("after", _Rule(method.upper(), path, times, callback=callback)))

    def hold(self, method: str, path: str, *, times: int = 1, timeout: float = 60) -> Hold:
        """Hold the next TIMES matching requests at the door, before they are handled, until
        the returned Hold is released: whatever the test changes meanwhile lands first (an
        edit between a client's re-read and its write). TIMEOUT seconds at most, so a test
        that never releases fails instead of hanging."""
        held = Hold(timeout)
        self.before(method, path, held.arrive, times=times)
        return held

    def clear_faults(self) -> None:
        """Drop pending faults and hooks."""
        with self.lock:
            self._faults.clear()
            self._hooks.clear()

    # ---- for subclasses --------------------------------------------------------------------
    def error_body(self, status: int) -> Any:
        """The body this service sends with an error STATUS."""
        return HTTPStatus(status).phrase

    def check(self, req: Request) -> Reply | None:
        """Run before the handler (auth, rate limits); a Reply short-circuits it."""
        return None

    def finish(self, req: Request, reply: Reply) -> None:
        """Adjust every reply (e.g. add rate-limit headers) before it is sent."""

    def not_found(self, req: Request) -> Reply:
        return Reply(404, self.error_body(404))

    # ---- internals -------------------------------------------------------------------------
    def _take_fault(self, req: Request) -> _Rule | None:
        with self.lock:
            for rule in self._faults:
                if rule.matches(req):
                    if rule.times is not None:
                        rule.times -= 1
                        if rule.times <= 0:
                            self._faults.remove(rule)
                    return rule
        return None

    def _run_hooks(self, when: str, req: Request) -> None:
        with self.lock:
            due = [rule for kind, rule in self._hooks if kind == when and rule.matches(req)]
            for rule in due:
                if rule.times is not None:
                    rule.times -= 1
            self._hooks = [(k, r) for k, r in self._hooks if r.times is None or r.times > 0]
        for rule in due:
            assert rule.callback is not None
            rule.callback(req)

    def _match(
        self, method: str, path: str
    ) -> tuple[str | None, Callable[..., Reply] | None, dict[str, str]]:
        for verb, template, pattern, handler in self._routes:
            m = pattern.match(path)
            if m and verb == method:
                return template, handler, {k: unquote(v) for k, v in m.groupdict().items()}
        return None, None, {}

    def _serve(self, http: BaseHTTPRequestHandler) -> None:
        split = urlsplit(http.path)
        length = int(http.headers.get("Content-Length") or 0)
        raw = http.rfile.read(length) if length else b""
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = None
        method = http.command.upper()
        path = split.path
        template, handler, params = None, None, dict[str, str]()
        if path.startswith(self.prefix):
            template, handler, params = self._match(method, path[len(self.prefix) :] or "/")
        req = Request(
            method=method,
            path=path,
            template=template or path,
            query=parse_qs(split.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in http.headers.items()},
            body=raw,
            json=payload,
        )
        with self.lock:
            self._requests.append(req)
            self._calls[(method, req.template)] += 1
        fault = self._take_fault(req)
        self._run_hooks("before", req)
        if self.latency:
            time.sleep(self.latency)
        if fault is not None:
            time.sleep(fault.delay)
            assert fault.reply is not None
            reply = Reply(fault.reply.status, fault.reply.body, {})
        else:
            reply = self._dispatch(req, handler, params)
        with self.lock:
            self.finish(req, reply)
        if fault is not None:
            reply.headers.update(fault.reply.headers)  # type: ignore[union-attr]
        self._run_hooks("after", req)
        self._send(http, reply)

    def _dispatch(
        self, req: Request, handler: Callable[..., Reply] | None, params: dict[str, str]
    ) -> Reply:
        with self.lock:
            try:
                early = self.check(req)
                if early is not None:
                    return early
                if handler is None:
                    return self.not_found(req)
                return handler(req, **params)
            except HttpError as err:
                return err.reply
            except Exception:  # a bug in the fake: answer 500 and keep it for the test to see
                self.errors.append(traceback.format_exc())
                traceback.print_exc()
                return Reply(500, self.error_body(500))

    @staticmethod
    def _send(http: BaseHTTPRequestHandler, reply: Reply) -> None:
        headers = {k.lower(): v for k, v in reply.headers.items()}
        if reply.body is None or reply.status == 204:
            data = b""
        elif isinstance(reply.body, bytes):
            data = reply.body
        elif isinstance(reply.body, str):
            data = reply.body.encode()
            headers.setdefault("content-type", "text/plain; charset=utf-8")
        else:
            data = json.dumps(reply.body).encode()
            headers.setdefault("content-type", "application/json; charset=utf-8")
        try:
            # A fake's own clock dates its answers, as GitHub's does (`Date`).
            http.send_response_only(reply.status)
            http.send_header("server", http.version_string())
            http.send_header("date", str(headers.pop("date", "") or http.date_time_string()))
            for name, value in headers.items():
                http.send_header(name, str(value))
            http.send_header("content-length", str(len(data)))
            http.end_headers()
            http.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (e.g. a timeout)
            http.close_connection = True


def _members(cls: type) -> Iterator[tuple[str, tuple[str, str]]]:
    """(name, (method, template)) of the route handlers of CLS, in definition order."""
    seen: set[str] = set()
    for klass in cls.__mro__:
        for name, fn in vars(klass).items():
            if name not in seen and hasattr(fn, "_route"):
                seen.add(name)
                yield name, fn._route
