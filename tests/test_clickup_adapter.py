"""The ClickUp adapter at the HTTP level (responses): models, auth, retries, waits, errors."""

from __future__ import annotations

import json

import pytest
import responses
from responses import matchers

from ai_context.adapters.clickup import (
    ClickUp,
    ClickUpConfigError,
    ClickUpError,
    ClickUpNotFound,
    ClickUpQuotaExceeded,
    ClickUpUnavailable,
)
from ai_context.core.secret import Secret
from tests.fakes import ClickUpFake

API = "https://clickup.example.com/api/v2"
TOKEN = "pk_1234_" + "A" * 32
NOW = 1_780_000_000.0


class Clock:
    """A fake clock that sleeping moves forward; records every sleep."""

    def __init__(self) -> None:
        self.now = NOW
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def adapter(clock: Clock | None = None, **kwargs: object) -> ClickUp:
    clock = clock or Clock()
    options: dict[str, object] = {"api_url": API, "sleep": clock.sleep, "clock": clock.time}
    options.update(kwargs)
    return ClickUp(Secret(TOKEN), **options)  # type: ignore[arg-type]


def task_json(task_id: str = "86c0abc", value: object = None, **extra: object) -> dict[str, object]:
    field: dict[str, object] = {"id": "f-ai", "name": "ai_context", "type": "text"}
    if value is not None:
        field["value"] = value
    data: dict[str, object] = {
        "id": task_id,
        "custom_id": "DEV-7",
        "name": "Booking history",
        "url": f"https://app.clickup.com/t/{task_id}",
        "list": {"id": "901", "name": "Sprint"},
        "team_id": "9000",
        "custom_fields": [field, {"id": "f-pts", "name": "Points", "type": "number"}],
    }
    data.update(extra)
    return data


def err(code: str, message: str) -> dict[str, str]:
    return {"err": message, "ECODE": code}


@responses.activate
def test_reads_a_task_with_the_raw_token_and_no_bearer() -> None:
    responses.get(
        f"{API}/task/86c0abc",
        json=task_json(value="old text"),
        match=[matchers.header_matcher({"Authorization": TOKEN})],
    )
    cu = adapter()
    task = cu.get_task("86c0abc")
    assert (task.id, task.custom_id, task.list_id, task.team_id) == (
        "86c0abc",
        "DEV-7",
        "901",
        "9000",
    )
    assert [(f.name, f.value) for f in task.fields] == [
        ("ai_context", "old text"),
        ("Points", None),
    ]
    assert (cu.counter.reads, cu.counter.writes) == (1, 0)


@responses.activate
def test_custom_ids_send_custom_task_ids_and_the_workspace() -> None:
    responses.get(
        f"{API}/task/DEV-7",
        json=task_json(),
        match=[matchers.query_param_matcher({"custom_task_ids": "true", "team_id": "9000"})],
    )
    assert adapter().get_task("DEV-7", custom=True, team_id="9000").id == "86c0abc"


def test_a_custom_id_without_a_workspace_is_a_config_error_before_any_call() -> None:
    with pytest.raises(ClickUpConfigError, match="clickup-team-id"):
        adapter().get_task("DEV-7", custom=True)


@responses.activate
def test_list_fields() -> None:
    responses.get(
        f"{API}/list/901/field",
        json={"fields": [{"id": "f-ai", "name": "ai_context", "type": "text", "type_config": {}}]},
    )
    fields = adapter().list_fields("901")
    assert [(f.id, f.name, f.type, f.value) for f in fields] == [
        ("f-ai", "ai_context", "text", None)
    ]


@responses.activate
def test_team_tasks_page_with_lists_closed_and_subtasks() -> None:
    responses.get(
        f"{API}/team/9000/task",
        json={"tasks": [task_json("a"), task_json("b")], "last_page": True},
        match=[
            matchers.query_param_matcher(
                {
                    "page": "2",
                    "include_closed": "true",
                    "subtasks": "true",
                    "list_ids[]": ["901", "902"],
                }
            )
        ],
    )
    tasks, last = adapter().team_tasks("9000", 2, list_ids=["901", "902"])
    assert [t.id for t in tasks] == ["a", "b"] and last


@responses.activate
def test_team_tasks_filtered_by_the_field_and_last_page_inferred_when_absent() -> None:
    rule = '[{"field_id":"f-ai","operator":"IS NOT NULL"}]'
    responses.get(
        f"{API}/team/9000/task",
        json={"tasks": [task_json("a")]},
        match=[matchers.query_param_matcher({"custom_fields": rule}, strict_match=False)],
    )
    tasks, last = adapter().team_tasks("9000", 0, custom_fields=rule)
    assert len(tasks) == 1 and last  # fewer than 100 tasks: the last page


@responses.activate
def test_set_field_posts_the_value_and_counts_a_write() -> None:
    responses.post(
        f"{API}/task/86c0abc/field/f-ai",
        json={},
        match=[
            matchers.json_params_matcher({"value": "new text"}),
            matchers.header_matcher({"Authorization": TOKEN}),
        ],
    )
    cu = adapter()
    cu.set_field("86c0abc", "f-ai", "new text")
    assert (cu.counter.reads, cu.counter.writes, cu.counter.total) == (0, 1, 1)


@responses.activate
def test_429_waits_until_x_ratelimit_reset_then_succeeds() -> None:
    clock = Clock()
    responses.get(
        f"{API}/task/t1",
        status=429,
        json=err("APP_002", "Rate limit reached"),
        headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(NOW) + 7)},
    )
    responses.get(f"{API}/task/t1", json=task_json("t1"))
    cu = adapter(clock)
    assert cu.get_task("t1").id == "t1"
    assert len(clock.sleeps) == 1 and 7 <= clock.sleeps[0] < 8
    assert (cu.counter.reads, cu.counter.retries) == (2, 1)


@responses.activate
def test_429_without_reset_header_backs_off() -> None:
    clock = Clock()
    responses.post(f"{API}/task/t1/field/f", status=429, json=err("APP_002", "Rate limit"))
    responses.post(f"{API}/task/t1/field/f", json={})
    adapter(clock, backoff=0.5).set_field("t1", "f", "x")
    assert clock.sleeps == [0.5]


@responses.activate
def test_429_with_a_reset_beyond_the_longest_wait_gives_up() -> None:
    responses.get(
        f"{API}/task/t1",
        status=429,
        json=err("APP_002", "Rate limit reached"),
        headers={"X-RateLimit-Reset": str(int(NOW) + 3600)},
    )
    clock = Clock()
    with pytest.raises(ClickUpUnavailable, match="APP_002") as info:
        adapter(clock, max_rate_limit_wait=60).get_task("t1")
    assert info.value.status == 429 and clock.sleeps == []


@responses.activate
def test_nearly_spent_window_waits_for_the_reset_before_the_next_call() -> None:
    clock = Clock()
    headers = {"X-RateLimit-Remaining": "1", "X-RateLimit-Reset": str(int(NOW) + 20)}
    responses.get(f"{API}/task/t1", json=task_json("t1"), headers=headers)
    responses.get(f"{API}/task/t2", json=task_json("t2"))
    cu = adapter(clock)
    cu.get_task("t1")
    assert clock.sleeps == []
    cu.get_task("t2")
    assert len(clock.sleeps) == 1 and 20 <= clock.sleeps[0] < 21
    cu.get_task("t2")  # the last answer carried no rate-limit headers: no more waiting
    assert len(clock.sleeps) == 1


@responses.activate
def test_a_window_with_room_left_costs_no_wait() -> None:
    clock = Clock()
    headers = {"X-RateLimit-Remaining": "57", "X-RateLimit-Reset": str(int(NOW) + 20)}
    responses.get(f"{API}/task/t1", json=task_json("t1"), headers=headers)
    cu = adapter(clock)
    cu.get_task("t1")
    cu.get_task("t1")
    assert clock.sleeps == []


@responses.activate
def test_5xx_on_a_get_is_retried_with_backoff() -> None:
    clock = Clock()
    responses.get(f"{API}/task/t1", status=502, body="Bad Gateway")
    responses.get(f"{API}/task/t1", status=503, json=err("FAKE_500", "Internal"))
    responses.get(f"{API}/task/t1", json=task_json("t1"))
    cu = adapter(clock, backoff=1.0)
    assert cu.get_task("t1").id == "t1"
    assert clock.sleeps == [1.0, 2.0]
    assert (cu.counter.reads, cu.counter.retries) == (3, 2)


@responses.activate
def test_5xx_on_the_field_post_is_retried_since_setting_a_value_is_idempotent() -> None:
    responses.post(f"{API}/task/t1/field/f", status=500, json=err("FAKE_500", "Internal"))
    responses.post(f"{API}/task/t1/field/f", json={})
    cu = adapter()
    cu.set_field("t1", "f", "x")
    assert cu.counter.writes == 2
    assert [json.loads(c.request.body or b"{}") for c in responses.calls] == [{"value": "x"}] * 2


@responses.activate
def test_5xx_that_outlasts_the_retries_is_unavailable_with_the_body_shown() -> None:
    responses.get(f"{API}/task/t1", status=500, json=err("FAKE_500", "Internal server error"))
    cu = adapter(retries=2)
    with pytest.raises(ClickUpUnavailable, match="500 FAKE_500 Internal server error"):
        cu.get_task("t1")
    assert cu.counter.reads == 3


def test_a_read_timeout_is_retried_through_the_retry_policy() -> None:
    """On real sockets (urllib3 under requests): the first answer comes too late, the retry
    reads the task."""
    with ClickUpFake() as fake:
        task = fake.add_task("Booking")
        fake.fail_next("GET", f"/api/v2/task/{task.id}", status=200, delay=1.0)
        cu = ClickUp(Secret(fake.token), api_url=fake.url, timeout=0.3, backoff=0)
        assert cu.get_task(task.id).id == task.id
    assert (cu.counter.reads, cu.counter.retries) == (2, 1)


def test_a_connection_refused_is_retried_then_reported() -> None:
    clock = Clock()
    cu = ClickUp(Secret(TOKEN), api_url="http://127.0.0.1:9/api/v2", sleep=clock.sleep, retries=2)
    with pytest.raises(ClickUpUnavailable, match="cannot reach ClickUp to read task t1 after 3"):
        cu.get_task("t1")  # nothing listens on the discard port
    assert (cu.counter.reads, cu.counter.retries) == (3, 2) and clock.sleeps == [1.0, 2.0]


@responses.activate
def test_a_deleted_task_is_not_found() -> None:
    responses.get(f"{API}/task/t1", status=404, json=err("ITEM_013", "Task not found, deleted"))
    with pytest.raises(ClickUpNotFound, match="404 ITEM_013 Task not found, deleted") as info:
        adapter().get_task("t1")
    assert (info.value.status, info.value.code) == (404, "ITEM_013")


@responses.activate
def test_an_id_that_never_existed_is_not_found_too() -> None:
    """ClickUp answers 401 OAUTH_027 for a task id the token cannot see (or never existed)."""
    responses.post(
        f"{API}/task/nope/field/f", status=401, json=err("OAUTH_027", "Team not authorized")
    )
    with pytest.raises(ClickUpNotFound, match="OAUTH_027"):
        adapter().set_field("nope", "f", "x")


@responses.activate
def test_a_workspace_the_token_cannot_see_is_a_config_error() -> None:
    responses.get(f"{API}/team/1/task", status=401, json=err("OAUTH_027", "Team not authorized"))
    with pytest.raises(ClickUpConfigError, match="clickup-team-id"):
        adapter().team_tasks("1", 0)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (401, err("OAUTH_025", "Token invalid")),
        (400, err("OAUTH_017", "Authorization header required")),
    ],
)
@responses.activate
def test_a_bad_token_is_a_config_error_naming_the_input(status: int, body: dict[str, str]) -> None:
    responses.get(f"{API}/task/t1", status=status, json=body)
    with pytest.raises(ClickUpConfigError, match="clickup-token") as info:
        adapter().get_task("t1")
    assert body["ECODE"] in str(info.value)
    assert TOKEN not in str(info.value)


@responses.activate
def test_a_wrong_base_url_is_a_config_error() -> None:
    responses.get(f"{API}/task/t1", status=404, json=err("APP_001", "Route not found"))
    with pytest.raises(ClickUpConfigError, match="clickup-api-url"):
        adapter().get_task("t1")


@responses.activate
def test_field_033_is_the_plan_cap_with_its_meaning() -> None:
    body = err("FIELD_033", "Custom field usages exceeded for your plan")
    responses.post(f"{API}/task/t1/field/f", status=400, json=body)
    cu = adapter()
    with pytest.raises(ClickUpQuotaExceeded, match="Free plan allows 60") as info:
        cu.set_field("t1", "f", "x")
    assert "FIELD_033" in str(info.value)
    assert cu.counter.writes == 1  # a 4xx is never retried


@responses.activate
def test_other_4xx_keep_their_code() -> None:
    body = err("FIELD_115", "Custom field does not exist in the task location hierarchy")
    responses.post(f"{API}/task/t1/field/f", status=400, json=body)
    with pytest.raises(ClickUpError) as info:
        adapter().set_field("t1", "f", "x")
    assert type(info.value) is ClickUpError
    assert info.value.code == "FIELD_115" and "400 FIELD_115" in str(info.value)


@responses.activate
def test_a_success_that_is_not_json_is_unavailable() -> None:
    responses.get(f"{API}/task/t1", body="<html>maintenance</html>")
    with pytest.raises(ClickUpUnavailable, match="not JSON"):
        adapter().get_task("t1")


def test_the_token_is_never_shown() -> None:
    cu = adapter()
    assert TOKEN not in repr(cu) and "***" in repr(cu)
    assert TOKEN not in str(vars(cu))


def test_an_empty_token_is_a_config_error() -> None:
    with pytest.raises(ClickUpConfigError, match="clickup-token"):
        ClickUp(Secret(" "))
