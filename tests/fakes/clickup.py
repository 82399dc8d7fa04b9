"""Loopback stand-in for the parts of the ClickUp API v2 that ai-context uses.

Shapes follow tests/samples/clickup/openapi-v2-subset.json: tasks (`id`, `custom_id`,
`name`, `url`, `list`, `custom_fields` with `value` only when set), a list's custom fields,
the workspace task listing in pages of 100 with `last_page`, and setting or removing a custom
field value. Errors are ClickUp's `{"err", "ECODE"}` bodies.

Behaviour taken from public reports of the live API, not from ClickUp's reference (which
documents no error bodies): a deleted task answers 404 `ITEM_013` "Task not found, deleted";
an id that never existed (or that the token cannot see) answers 401 `OAUTH_027` "Team not
authorized"; a bad token 401 `OAUTH_025` "Token invalid"; a full rate limit 429 `APP_002`
"Rate limit reached"; a spent free-plan custom-field quota 400 `FIELD_033` "Custom field usages
exceeded for your plan"; a field the task's list does not have 400 `FIELD_115`.
Assumed (no source found): a missing Authorization header answers 400 `OAUTH_017`; codes
starting with `FAKE_` are this fake's own, for requests it refuses without knowing ClickUp's
exact answer.
"""

from __future__ import annotations

import itertools
import json
import math
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .base import ANY, Clock, FakeServer, HttpError, Reply, Request, route

PAGE_SIZE = 100


def _ms(when: datetime | None) -> str | None:
    return str(int(when.timestamp() * 1000)) if when else None


@dataclass
class Task:
    id: str
    name: str
    list_id: str
    date_created: datetime
    date_updated: datetime
    custom_id: str | None = None
    status: str = "to do"
    closed: bool = False
    deleted: bool = False
    values: dict[str, Any] = field(default_factory=dict)  # field id -> value


class ClickUpFake(FakeServer):
    """Stateful ClickUp API v2 on 127.0.0.1; `url` ends in /api/v2 (the adapter's base URL)."""

    prefix = "/api/v2"

    def __init__(
        self,
        token: str = "pk_test_token",  # noqa: S107 - the default test token
        *,
        team_id: str = "9000",
        rate_limit_per_minute: int | None = None,
        rate_window: float = 60.0,
        field_write_cap: int | None = None,
        now: datetime | None = None,
        latency: float = 0.0,
    ) -> None:
        super().__init__(latency=latency)
        self.token = token
        self.team_id = team_id
        self.clock = Clock(now)
        self.lists: dict[str, dict[str, Any]] = {}  # id -> {"id", "name", "fields": [ids]}
        self.fields: dict[str, dict[str, Any]] = {}  # id -> field definition
        self.tasks: dict[str, Task] = {}
        self._ids = itertools.count(1)
        self.field_write_cap = field_write_cap  # the free plan's lifetime cap is 60
        self.field_uses = 0  # accepted custom-field writes (what the cap counts)
        self.rate_limit_per_minute = rate_limit_per_minute
        self.rate_window = rate_window
        self._window_start = 0.0
        self._window_count = 0

    # ---- seeding and inspection ------------------------------------------------------------
    def add_list(self, list_id: str = "901", name: str = "Tasks") -> str:
        with self.lock:
            self.lists.setdefault(list_id, {"id": list_id, "name": name, "fields": []})
            return list_id

    def add_field(
        self,
        list_id: str = "901",
        name: str = "ai_context",
        *,
        type: str = "text",
        field_id: str | None = None,
    ) -> str:
        """Make field NAME available on LIST_ID; reuse FIELD_ID to share one field (as a
        space-level field is) across lists. Returns the field id."""
        with self.lock:
            field_id = field_id or str(uuid.uuid4())
            self.fields.setdefault(
                field_id,
                {
                    "id": field_id,
                    "name": name,
                    "type": type,
                    "type_config": {},
                    "date_created": _ms(self.clock.now()),
                    "hide_from_guests": False,
                    "required": False,
                },
            )
            fields = self.lists[self.add_list(list_id)]["fields"]
            if field_id not in fields:
                fields.append(field_id)
            return field_id

    def add_task(
        self,
        name: str = "Task",
        *,
        list_id: str = "901",
        task_id: str | None = None,
        custom_id: str | None = None,
        values: Mapping[str, Any] | None = None,
        status: str = "to do",
        closed: bool = False,
    ) -> Task:
        """Seed a task; VALUES maps a field name or id (on the task's list) to its value."""
        with self.lock:
            self.add_list(list_id)
            now = self.clock.now()
            task = Task(
                id=task_id or f"86c{next(self._ids):05d}",
                name=name,
                list_id=list_id,
                date_created=now,
                date_updated=now,
                custom_id=custom_id,
                status=status,
                closed=closed,
            )
            for key, value in (values or {}).items():
                task.values[self._field_id(task, key)] = value
            self.tasks[task.id] = task
            return task

    def delete_task(self, task_id: str) -> None:
        """Delete the task: it then answers 404 ITEM_013 and leaves the listings."""
        with self.lock:
            self.tasks[task_id].deleted = True

    def task(self, task_id: str) -> Task:
        with self.lock:
            return self.tasks[task_id]

    def value(self, task_id: str, field: str = "ai_context") -> Any:
        """The value of FIELD (name or id) on the task, or None when unset."""
        with self.lock:
            task = self.tasks[task_id]
            return task.values.get(self._field_id(task, field))

    def _field_id(self, task: Task, key: str) -> str:
        for fid in self.lists[task.list_id]["fields"]:
            if key in (fid, self.fields[fid]["name"]):
                return str(fid)
        raise KeyError(f"no field {key!r} on list {task.list_id}")

    # ---- fault helpers ---------------------------------------------------------------------
    def rate_limit_next(
        self, method: str = ANY, path: str = ANY, *, reset_in: int = 1, times: int = 1
    ) -> None:
        """429 APP_002 with X-RateLimit-Reset RESET_IN seconds ahead (epoch seconds)."""
        headers = {
            "X-RateLimit-Limit": str(self.rate_limit_per_minute or 100),
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(math.ceil(time.time()) + reset_in),
        }
        body = {"err": "Rate limit reached", "ECODE": "APP_002"}
        self.fail_next(method, path, status=429, body=body, headers=headers, times=times)

    # ---- plumbing hooks --------------------------------------------------------------------
    def error_body(self, status: int) -> dict[str, str]:
        if status == 429:
            return {"err": "Rate limit reached", "ECODE": "APP_002"}
        if status == 404:
            return {"err": "Route not found", "ECODE": "APP_001"}  # assumed wording
        return {"err": "Internal server error", "ECODE": "FAKE_500"}

    def check(self, req: Request) -> Reply | None:
        auth = req.headers.get("authorization")
        if not auth:
            return Reply(400, {"err": "Authorization header required", "ECODE": "OAUTH_017"})
        if auth != self.token:  # personal tokens are sent raw: no "Bearer"
            return Reply(401, {"err": "Token invalid", "ECODE": "OAUTH_025"})
        if self.rate_limit_per_minute is not None:
            now = time.time()
            if now - self._window_start >= self.rate_window:
                self._window_start, self._window_count = now, 0
            self._window_count += 1
            if self._window_count > self.rate_limit_per_minute:
                return Reply(429, self.error_body(429))
        return None

    def finish(self, req: Request, reply: Reply) -> None:
        if self.rate_limit_per_minute is not None:
            limit = self.rate_limit_per_minute
            reset = math.ceil(self._window_start + self.rate_window)
            reply.headers.update(
                {
                    "X-RateLimit-Limit": str(limit),
                    "X-RateLimit-Remaining": str(max(0, limit - self._window_count)),
                    "X-RateLimit-Reset": str(reset),
                }
            )

    # ---- helpers ---------------------------------------------------------------------------
    def _task_json(self, task: Task) -> dict[str, Any]:
        lst = self.lists[task.list_id]
        custom_fields = []
        for fid in lst["fields"]:
            entry = dict(self.fields[fid])
            if fid in task.values:
                entry["value"] = task.values[fid]
            custom_fields.append(entry)
        folder = {"id": "700", "name": "Folder", "hidden": False, "access": True}
        return {
            "id": task.id,
            "custom_id": task.custom_id,
            "custom_item_id": 0,
            "name": task.name,
            "text_content": "",
            "description": "",
            "status": {
                "status": task.status,
                "color": "#d3d3d3",
                "orderindex": 0,
                "type": "closed" if task.closed else "open",
            },
            "orderindex": "1.00000000000000000000000000000000",
            "date_created": _ms(task.date_created),
            "date_updated": _ms(task.date_updated),
            "date_closed": _ms(task.date_updated) if task.closed else None,
            "date_done": _ms(task.date_updated) if task.closed else None,
            "archived": False,
            "creator": {"id": 183, "username": "Manager", "color": "#827718", "email": None},
            "assignees": [],
            "group_assignees": [],
            "watchers": [],
            "checklists": [],
            "tags": [],
            "parent": None,
            "top_level_parent": None,
            "priority": None,
            "due_date": None,
            "start_date": None,
            "points": None,
            "time_estimate": None,
            "custom_fields": custom_fields,
            "dependencies": [],
            "linked_tasks": [],
            "locations": [],
            "team_id": self.team_id,
            "url": f"https://app.clickup.com/t/{task.id}",
            "permission_level": "create",
            "list": {"id": lst["id"], "name": lst["name"], "access": True},
            "project": folder,
            "folder": folder,
            "space": {"id": "7000"},
        }

    @staticmethod
    def _unauthorized() -> HttpError:
        return HttpError(401, {"err": "Team not authorized", "ECODE": "OAUTH_027"})

    def _find_task(self, req: Request, task_id: str) -> Task:
        if req.arg("custom_task_ids") == "true":
            team = req.arg("team_id")
            if not team:
                body = {"err": "team_id is required with custom_task_ids", "ECODE": "FAKE_TEAM"}
                raise HttpError(400, body)
            if team != self.team_id:
                raise self._unauthorized()
            task = next((t for t in self.tasks.values() if t.custom_id == task_id), None)
        else:
            task = self.tasks.get(task_id)
        if task is None:
            raise self._unauthorized()
        if task.deleted:
            raise HttpError(404, {"err": "Task not found, deleted", "ECODE": "ITEM_013"})
        return task

    def _field_on(self, task: Task, field_id: str) -> str:
        if field_id not in self.lists[task.list_id]["fields"]:
            err = "Custom field does not exist in the task location hierarchy"
            raise HttpError(400, {"err": err, "ECODE": "FIELD_115"})
        return field_id

    # ---- endpoints -------------------------------------------------------------------------
    @route("GET", "/task/{task_id}")
    def get_task(self, req: Request, task_id: str) -> Reply:
        return Reply(200, self._task_json(self._find_task(req, task_id)))

    @route("GET", "/list/{list_id}/field")
    def list_fields(self, req: Request, list_id: str) -> Reply:
        if list_id not in self.lists:
            raise self._unauthorized()
        return Reply(200, {"fields": [self.fields[f] for f in self.lists[list_id]["fields"]]})

    @route("GET", "/team/{team_id}/task")
    def team_tasks(self, req: Request, team_id: str) -> Reply:
        if team_id != self.team_id:
            raise self._unauthorized()
        tasks = [t for t in self.tasks.values() if not t.deleted]
        if req.arg("include_closed") != "true":
            tasks = [t for t in tasks if not t.closed]
        if lists := req.query.get("list_ids[]"):
            tasks = [t for t in tasks if t.list_id in lists]
        for rule in self._custom_field_filters(req):
            tasks = [t for t in tasks if _matches(rule, t.values.get(rule.get("field_id", "")))]
        order = req.arg("order_by", "created")
        tasks.sort(key=lambda t: t.date_updated if order == "updated" else t.date_created)
        if req.arg("reverse") == "true":
            tasks.reverse()
        page = max(req.int_arg("page", 0), 0)
        chunk = tasks[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
        last_page = (page + 1) * PAGE_SIZE >= len(tasks)
        return Reply(200, {"tasks": [self._task_json(t) for t in chunk], "last_page": last_page})

    @staticmethod
    def _custom_field_filters(req: Request) -> list[dict[str, Any]]:
        raw = req.arg("custom_fields")
        if not raw:
            return []
        try:
            rules = json.loads(raw)
        except ValueError:
            rules = None
        if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
            raise HttpError(400, {"err": "custom_fields must be a JSON array", "ECODE": "FAKE_CF"})
        for rule in rules:
            if rule.get("operator") not in _OPERATORS:
                err = f"operator {rule.get('operator')!r} is not supported by the fake"
                raise HttpError(400, {"err": err, "ECODE": "FAKE_CF"})
        return rules

    @route("POST", "/task/{task_id}/field/{field_id}")
    def set_field(self, req: Request, task_id: str, field_id: str) -> Reply:
        task = self._find_task(req, task_id)
        self._field_on(task, field_id)
        if not isinstance(req.json, dict) or "value" not in req.json:
            raise HttpError(400, {"err": "Invalid Value", "ECODE": "FIELD_342"})
        if self.field_write_cap is not None and self.field_uses >= self.field_write_cap:
            err = "Custom field usages exceeded for your plan"
            raise HttpError(400, {"err": err, "ECODE": "FIELD_033"})
        self.field_uses += 1
        task.values[field_id] = req.json["value"]
        task.date_updated = self.clock.now()
        return Reply(200, {})

    @route("DELETE", "/task/{task_id}/field/{field_id}")
    def remove_field(self, req: Request, task_id: str, field_id: str) -> Reply:
        task = self._find_task(req, task_id)
        task.values.pop(self._field_on(task, field_id), None)
        task.date_updated = self.clock.now()
        return Reply(200, {})


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


_OPERATORS: dict[
    str, Callable[[Any, Any], bool]
] = {  # ClickUp's custom-field filter operators (developer.clickup.com/docs/taskfilters)
    "=": lambda v, f: v is not None and _text(f).lower() in _text(v).lower(),
    "==": lambda v, f: v is not None and _text(v) == _text(f),
    "!=": lambda v, f: v is None or _text(f).lower() not in _text(v).lower(),
    "!==": lambda v, f: v is None or _text(v) != _text(f),
    "<": lambda v, f: _number(v) < _number(f),
    "<=": lambda v, f: _number(v) <= _number(f),
    ">": lambda v, f: _number(v) > _number(f),
    ">=": lambda v, f: _number(v) >= _number(f),
    "IS NULL": lambda v, f: v is None or v == "",
    "IS NOT NULL": lambda v, f: v is not None and v != "",
}


def _matches(rule: dict[str, Any], value: Any) -> bool:
    return bool(_OPERATORS[rule["operator"]](value, rule.get("value")))
