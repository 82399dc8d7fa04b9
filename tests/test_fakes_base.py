"""The plumbing every fake shares: routing, recording, faults, hooks, concurrency."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.fakes import FakeServer, HttpError, Reply, Request
from tests.fakes.base import route


class Counter(FakeServer):
    """A tiny fake: one counter per name."""

    prefix = "/v1"

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, int] = {}

    @route("GET", "/counters/{name}")
    def get(self, req: Request, name: str) -> Reply:
        if name not in self.values:
            raise HttpError(404, {"error": "no such counter"})
        return Reply(200, {"name": name, "value": self.values[name]})

    @route("POST", "/counters/{name}/{step:int}")
    def add(self, req: Request, name: str, step: str) -> Reply:
        self.values[name] = self.values.get(name, 0) + int(step)
        return Reply(201, {"value": self.values[name]})

    @route("GET", "/boom")
    def boom(self, req: Request) -> Reply:
        raise RuntimeError("a bug in the fake")


@pytest.fixture
def fake() -> Iterator[Counter]:
    with Counter() as server:
        yield server


def get(fake: Counter, path: str, timeout: float = 10, **kw: Any) -> requests.Response:
    return requests.get(fake.url + path, timeout=timeout, **kw)


def post(fake: Counter, path: str, **kw: Any) -> requests.Response:
    return requests.post(fake.url + path, timeout=10, **kw)


def test_routes_decode_and_record(fake: Counter) -> None:
    assert post(fake, "/counters/a%20b/3", json={"why": "test"}).status_code == 201
    assert get(fake, "/counters/a%20b?x=1&x=2", headers={"X-Trace": "t1"}).json() == {
        "name": "a b",
        "value": 3,
    }
    assert get(fake, "/counters/none").status_code == 404
    assert post(fake, "/counters/a/notanumber").status_code == 404  # {step:int} wants digits

    first, second = fake.requests[:2]
    assert (first.method, first.path, first.json) == (
        "POST",
        "/v1/counters/a%20b/3",
        {"why": "test"},
    )
    assert first.template == "/counters/{name}/{step}"
    assert second.query == {"x": ["1", "2"]} and second.arg("x") == "2"
    assert second.headers["x-trace"] == "t1"
    assert fake.calls[("GET", "/counters/{name}")] == 2
    assert fake.count("GET") == 2
    assert fake.count(path="/v1/counters/a%20b/3") == 1

    fake.reset_requests()
    assert fake.requests == [] and fake.count() == 0


def test_faults_by_path_or_template_with_counts(fake: Counter) -> None:
    fake.values["a"] = 1
    fake.fail_next("GET", "/v1/counters/a", status=502, times=2)
    fake.fail_next("GET", "/counters/{name}", status=503, body={"error": "x"}, headers={"A": "b"})

    statuses = [get(fake, "/counters/a") for _ in range(4)]

    assert [s.status_code for s in statuses] == [502, 502, 503, 200]
    assert statuses[0].text == "Bad Gateway"  # the base class's default error body
    assert statuses[2].json() == {"error": "x"} and statuses[2].headers["A"] == "b"
    assert fake.count("GET", "/counters/{name}") == 4  # faulted requests count too
    assert fake.values == {"a": 1}


def test_fault_until_cleared_and_delay(fake: Counter) -> None:
    fake.fail_next(status=500, times=None)
    assert {post(fake, "/counters/a/1").status_code for _ in range(3)} == {500}
    assert fake.values == {}  # a faulted request never reaches the handler
    fake.clear_faults()

    fake.fail_next("POST", status=504, delay=0.2)
    started = time.monotonic()
    assert post(fake, "/counters/a/1").status_code == 504
    assert time.monotonic() - started >= 0.2

    fake.fail_next("GET", status=200, body={"late": True}, delay=0.5)
    with pytest.raises(requests.Timeout):  # how a test makes the client time out
        get(fake, "/counters/a", timeout=0.1)


def test_hooks_run_between_requests(fake: Counter) -> None:
    fake.values["a"] = 1
    seen: list[str] = []
    fake.before("GET", "/counters/{name}", lambda req: seen.append(f"before {req.path}"))
    fake.after("GET", "/counters/{name}", lambda req: fake.values.update(a=99), times=1)

    first = get(fake, "/counters/a").json()["value"]
    second = get(fake, "/counters/a").json()["value"]

    assert (first, second) == (1, 99)  # the after-hook ran before the client saw reply one
    assert seen == ["before /v1/counters/a"]  # times=1 by default


def test_a_crash_in_a_handler_is_a_500_kept_for_the_test(fake: Counter) -> None:
    assert get(fake, "/boom").status_code == 500
    assert "a bug in the fake" in fake.errors[0]


def test_concurrent_requests_are_all_counted(fake: Counter) -> None:
    def hit() -> None:
        with requests.Session() as session:
            for _ in range(10):
                session.post(fake.url + "/counters/n/1", timeout=10)

    threads = [threading.Thread(target=hit) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert fake.values["n"] == 100
    assert fake.count("POST", "/counters/{name}/{step}") == 100


def test_url_needs_a_started_server() -> None:
    server = Counter()
    with pytest.raises(RuntimeError):
        _ = server.url
    with server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
