"""The ClickUp fake answers like ClickUp API v2: raw pk_ token, {err, ECODE} errors, pages."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests

from tests.fakes import ClickUpFake

TOKEN = "pk_test_token"  # ClickUpFake's default token
T0 = datetime(2026, 5, 26, 14, 0, tzinfo=UTC)


@pytest.fixture
def cu() -> Iterator[ClickUpFake]:
    with ClickUpFake(now=T0) as fake:
        fake.add_field("901", "ai_context", field_id="f-ai")
        fake.add_field("901", "Sprint", type="short_text", field_id="f-sprint")
        yield fake


def call(fake: ClickUpFake, method: str, path: str, auth: str | None = TOKEN, **kw: Any) -> Any:
    headers = {"Authorization": auth} if auth is not None else {}
    return requests.request(method, fake.url + path, headers=headers, timeout=10, **kw)


def test_url_is_the_api_v2_base(cu: ClickUpFake) -> None:
    assert cu.url.endswith("/api/v2")


def test_auth_wants_the_raw_personal_token(cu: ClickUpFake) -> None:
    cu.add_task("A", task_id="abc")
    assert call(cu, "GET", "/task/abc").status_code == 200

    bearer = call(cu, "GET", "/task/abc", auth=f"Bearer {TOKEN}")
    assert (bearer.status_code, bearer.json()) == (
        401,
        {"err": "Token invalid", "ECODE": "OAUTH_025"},
    )
    missing = call(cu, "GET", "/task/abc", auth=None)
    assert missing.json()["ECODE"] == "OAUTH_017"


def test_task_shape(cu: ClickUpFake) -> None:
    cu.add_task("Fix login", task_id="abc", custom_id="DEV-12", values={"ai_context": "old"})
    task = call(cu, "GET", "/task/abc").json()

    assert (task["id"], task["custom_id"], task["name"]) == ("abc", "DEV-12", "Fix login")
    assert task["url"] == "https://app.clickup.com/t/abc"
    assert task["list"]["id"] == "901"
    assert task["date_created"] == str(int(T0.timestamp() * 1000))
    fields = {f["name"]: f for f in task["custom_fields"]}
    assert fields["ai_context"] | {"date_created": None} == {
        "id": "f-ai",
        "name": "ai_context",
        "type": "text",
        "type_config": {},
        "date_created": None,
        "hide_from_guests": False,
        "required": False,
        "value": "old",
    }
    assert "value" not in fields["Sprint"]  # unset fields come without a value


def test_custom_task_ids_need_the_workspace(cu: ClickUpFake) -> None:
    cu.add_task("A", task_id="abc", custom_id="DEV-12")
    found = call(cu, "GET", "/task/DEV-12?custom_task_ids=true&team_id=9000")
    assert found.json()["id"] == "abc"
    assert call(cu, "GET", "/task/DEV-12?custom_task_ids=true").status_code == 400
    other_team = call(cu, "GET", "/task/DEV-12?custom_task_ids=true&team_id=1")
    assert other_team.json()["ECODE"] == "OAUTH_027"
    assert call(cu, "GET", "/task/DEV-12").json()["ECODE"] == "OAUTH_027"


def test_deleted_and_unknown_tasks(cu: ClickUpFake) -> None:
    cu.add_task("A", task_id="abc")
    cu.delete_task("abc")

    deleted = call(cu, "GET", "/task/abc")
    assert (deleted.status_code, deleted.json()) == (
        404,
        {"err": "Task not found, deleted", "ECODE": "ITEM_013"},
    )
    unknown = call(cu, "GET", "/task/nope")
    assert (unknown.status_code, unknown.json()["ECODE"]) == (401, "OAUTH_027")
    write = call(cu, "POST", "/task/abc/field/f-ai", json={"value": "x"})
    assert write.json()["ECODE"] == "ITEM_013"


def test_list_fields(cu: ClickUpFake) -> None:
    fields = call(cu, "GET", "/list/901/field").json()["fields"]
    assert [(f["id"], f["name"], f["type"]) for f in fields] == [
        ("f-ai", "ai_context", "text"),
        ("f-sprint", "Sprint", "short_text"),
    ]
    assert call(cu, "GET", "/list/404/field").json()["ECODE"] == "OAUTH_027"


def test_team_tasks_come_in_pages_of_100(cu: ClickUpFake) -> None:
    for n in range(250):
        cu.clock.set(T0 + timedelta(seconds=n))
        cu.add_task(f"T{n}", list_id="901" if n % 5 else "902")
    cu.add_task("closed", closed=True)

    pages = [call(cu, "GET", f"/team/9000/task?page={p}").json() for p in range(4)]

    assert [len(p["tasks"]) for p in pages] == [100, 100, 50, 0]
    assert [p["last_page"] for p in pages] == [False, False, True, True]
    assert pages[0]["tasks"][0]["name"] == "T0"
    only_902 = call(cu, "GET", "/team/9000/task?list_ids[]=902").json()
    assert len(only_902["tasks"]) == 50 and only_902["last_page"] is True
    with_closed = call(cu, "GET", "/team/9000/task?page=2&include_closed=true").json()
    assert len(with_closed["tasks"]) == 51
    assert call(cu, "GET", "/team/1/task").json()["ECODE"] == "OAUTH_027"


def test_team_tasks_filter_by_custom_field(cu: ClickUpFake) -> None:
    cu.add_task("set", values={"ai_context": "Actor: cc-ariel"})
    cu.add_task("other", values={"ai_context": "Actor: bob"})
    cu.add_task("unset")

    def names(*rules: dict[str, Any]) -> list[str]:
        query = {"custom_fields": json.dumps(list(rules))}
        tasks = call(cu, "GET", "/team/9000/task", params=query).json()["tasks"]
        return [t["name"] for t in tasks]

    assert names({"field_id": "f-ai", "operator": "IS NOT NULL"}) == ["set", "other"]
    assert names({"field_id": "f-ai", "operator": "IS NULL"}) == ["unset"]
    assert names({"field_id": "f-ai", "operator": "=", "value": "ARIEL"}) == ["set"]
    assert names({"field_id": "f-ai", "operator": "==", "value": "Actor: bob"}) == ["other"]
    bad = call(cu, "GET", "/team/9000/task", params={"custom_fields": "not json"})
    assert bad.status_code == 400


def test_set_and_remove_a_field_value(cu: ClickUpFake) -> None:
    cu.add_task("A", task_id="abc")
    cu.clock.advance(minutes=1)

    answer = call(cu, "POST", "/task/abc/field/f-ai", json={"value": "mirrored"})

    assert (answer.status_code, answer.json()) == (200, {})
    assert cu.value("abc") == "mirrored"
    assert cu.field_uses == 1
    assert cu.task("abc").date_updated == T0 + timedelta(minutes=1)
    custom = call(cu, "POST", "/task/DEV-1/field/f-ai?custom_task_ids=true&team_id=9000")
    assert custom.json()["ECODE"] == "OAUTH_027"

    assert call(cu, "DELETE", "/task/abc/field/f-ai").json() == {}
    assert cu.value("abc") is None
    assert cu.field_uses == 1  # clearing a value is not a use

    elsewhere = call(cu, "POST", "/task/abc/field/f-other", json={"value": "x"})
    assert (elsewhere.status_code, elsewhere.json()["ECODE"]) == (400, "FIELD_115")
    assert call(cu, "POST", "/task/abc/field/f-ai", json={}).status_code == 400


def test_free_plan_cap_on_field_writes() -> None:
    with ClickUpFake(field_write_cap=2) as cu:
        cu.add_field()
        cu.add_task("A", task_id="abc")
        statuses = [
            call(cu, "POST", f"/task/abc/field/{cu.lists['901']['fields'][0]}", json={"value": n})
            for n in range(3)
        ]
        assert [s.status_code for s in statuses] == [200, 200, 400]
        assert statuses[2].json() == {
            "err": "Custom field usages exceeded for your plan",
            "ECODE": "FIELD_033",
        }
        assert cu.value("abc") == 1


def test_rate_limit_per_minute() -> None:
    with ClickUpFake(rate_limit_per_minute=3, rate_window=1.0) as cu:
        cu.add_task("A", task_id="abc")
        answers = [call(cu, "GET", "/task/abc") for _ in range(4)]

        assert [a.status_code for a in answers] == [200, 200, 200, 429]
        assert [a.headers["X-RateLimit-Remaining"] for a in answers] == ["2", "1", "0", "0"]
        assert answers[3].json() == {"err": "Rate limit reached", "ECODE": "APP_002"}
        reset = int(answers[3].headers["X-RateLimit-Reset"])
        assert answers[0].headers["X-RateLimit-Limit"] == "3"
        time.sleep(max(0.0, reset - time.time()) + 0.05)
        assert call(cu, "GET", "/task/abc").status_code == 200


def test_injected_429_names_its_reset(cu: ClickUpFake) -> None:
    cu.add_task("A", task_id="abc")
    cu.rate_limit_next("GET", "/task/{task_id}", reset_in=1)

    limited = call(cu, "GET", "/task/abc")

    assert limited.status_code == 429
    assert int(limited.headers["X-RateLimit-Reset"]) >= time.time() + 1
    assert limited.headers["X-RateLimit-Remaining"] == "0"
    assert call(cu, "GET", "/task/abc").status_code == 200
    assert cu.count("GET", "/task/{task_id}") == 2
