"""The one Jinja environment every template renders in, and its escaping filters.

Issue text reaches a template only as a variable, and each interpolation goes through the
filter of its target (`md_text`/`md_cell`: GitHub Markdown, no markup, no mention; `slack`:
mrkdwn entities, special mentions defused; `html`; `mermaid_label`), as each target has its own
dangerous characters; autoescape is on only for HTML. Templates run in Jinja's immutable
sandbox with StrictUndefined, bounded in time and output (template_limits), and every output
leaves without control characters. Any failure is a TemplateError (exit 2).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, urlsplit

from jinja2 import (
    BaseLoader,
    BytecodeCache,
    Environment,
    StrictUndefined,
    select_autoescape,
)
from jinja2 import TemplateError as JinjaTemplateError
from jinja2.nodes import EvalContext
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import escape as _markup_escape
from pydantic import BaseModel

from ai_context.core.block.model import format_timestamp
from ai_context.core.durations import format_duration
from ai_context.core.errors import TemplateError
from ai_context.core.markdown import escape_code_text, escape_text, map_code_spans, strip_controls
from ai_context.rules.template_limits import (
    BoundedRange,
    bounded_concat,
    checked_binop,
    guarded_center,
    guarded_format,
    huge_width,
    too_big,
)

ZWSP = "\u200b"
ELLIPSIS = "…"

_NEWLINES_RE = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_SLACK_SPECIAL_RE = re.compile(r"@(?=(?:here|channel|everyone)\b)", re.IGNORECASE)
# `&` first, so no entity it adds is escaped again (str.replace: str.translate with a table
# of strings looks up every character in Python).
_SLACK_ENTITIES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
_URL_SAFE = "/:?#@!$&'*+,;=%-._~[]"
_REMEMBERED_CHARS = 500  # a title is at most 256: longer text is escaped each time, not kept
# A plain URL with a lower-case scheme, tried first: without re.I, which slows every character.
_LOWER_URL_RE = re.compile(r"https?://[A-Za-z0-9.-]+(?::\d{1,5})?(?:/[A-Za-z0-9/._~%-]*)?")
_PLAIN_URL_RE = re.compile(_LOWER_URL_RE.pattern, re.I)


# class -> attribute -> whether it is data (see _is_data_attribute): two look-ups without a key
# tuple, as every `e.title` of a template asks (a digest of 1,000 tasks asks 18,000 times).
_VERDICTS: dict[type[object], dict[str, bool]] = {}


def _is_data_attribute(cls: type[object], attr: str) -> bool:
    """Whether `attr` of an instance of CLS is a field or property of a pydantic model or a
    dataclass (never `_private` or a method), remembered in _VERDICTS. CLS is the instance's
    type, so a class itself (whose type is its metaclass) is never data."""
    verdicts = _VERDICTS.setdefault(cls, {})
    if attr not in verdicts:
        verdicts[attr] = _data_verdict(cls, attr)
    return verdicts[attr]


def _data_verdict(cls: type[object], attr: str) -> bool:
    if attr.startswith("_") or not (issubclass(cls, BaseModel) or dataclasses.is_dataclass(cls)):
        return False
    own = getattr(cls, "model_fields", None) or getattr(cls, "__dataclass_fields__", {})
    return attr in own or isinstance(inspect.getattr_static(cls, attr, None), property)


def _output(chunks: Iterable[str]) -> str:
    """Every template's (and macro's) output, bounded, without control characters."""
    return strip_controls(bounded_concat(chunks))


class _Sandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox, bounded. The verdict on the fields and properties of
    pydantic models and dataclasses (data, never code) is cached per class and name: checking
    each access in full was most of a 1,000-task digest's time."""

    intercepted_binops = frozenset({"*", "**", "%"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.globals["range"] = BoundedRange
        self.concat = _output  # type: ignore[method-assign]

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        checked_binop(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """`"{:>999999999}".format(x)`: refused before formatting."""
        owner = getattr(value, "__self__", None)
        if isinstance(owner, str) and huge_width(owner):
            raise too_big("a format width")
        return super().wrap_str_format(value)

    def call_filter(  # noqa: PLR0917 - Jinja's signature
        self,
        name: str,
        value: Any,
        args: Sequence[Any] | None = None,
        kwargs: Mapping[str, Any] | None = None,
        context: Context | None = None,
        eval_ctx: EvalContext | None = None,
    ) -> Any:
        """`map("clip", 110)` calls this once an item: one of FILTERS (plain functions, no
        context) is called directly, without Jinja's per-call look at its signature."""
        if name in FILTERS and self.filters.get(name) is FILTERS[name]:
            return FILTERS[name](value, *(args or ()), **(kwargs or {}))
        return super().call_filter(name, value, args, kwargs, context, eval_ctx)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        return _is_data_attribute(type(obj), attr) or super().is_safe_attribute(obj, attr, value)

    def getattr(self, obj: Any, attribute: str) -> Any:
        try:  # _is_data_attribute's remembered verdict, looked up here: this is hot
            data = _VERDICTS[type(obj)][attribute]
        except KeyError:
            data = _is_data_attribute(type(obj), attribute)
        return getattr(obj, attribute) if data else super().getattr(obj, attribute)


def _text(value: object) -> str:
    if value is None:
        return ""
    text = str(value)
    return text if text.isprintable() else _CONTROL_RE.sub("", text)


def _one_line(value: object) -> str:
    text = "" if value is None else str(value)
    if text.isprintable():  # no newline, tab or control character: the usual case, fast
        return text.strip()
    return _NEWLINES_RE.sub(" ", _CONTROL_RE.sub("", text)).replace("\t", " ").strip()


def clip(value: object, limit: int = 200) -> str:
    """At most `limit` characters, an ellipsis marking the cut. Apply before escaping, so an
    escape sequence is never cut in half."""
    text = value if type(value) is str and value.isprintable() else _text(value)  # hot: no call
    if limit < 1:
        return ""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + ELLIPSIS


def md_text(value: object) -> str:
    """Issue text as inline GitHub Markdown on one line: shown as written, never markup."""
    return escape_text(_one_line(value))


def md_cell(value: object) -> str:
    """Issue text inside a GitHub Markdown table cell: `md_text` already escapes `|`, so the
    two are one; templates name the context they write to."""
    return md_text(value)


def md_url(value: object) -> str:
    """An http(s) URL safe as a Markdown link destination (also inside a table), else ''."""
    url = _one_line(value)
    if _LOWER_URL_RE.fullmatch(url) or _PLAIN_URL_RE.fullmatch(url):
        return url  # nothing to encode: the usual case, fast
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return ""
    return quote(url, safe=_URL_SAFE)


def md_link(label: object, url: object) -> str:
    """`[label](url)` with both escaped for a table cell; just the label if the URL is unusable."""
    text = md_text(label)
    target = md_url(url)
    return f"[{text}]({target})" if target and text else text


def slack(value: object) -> str:
    """Issue text in Slack mrkdwn: `& < >` as entities, special mentions defused, one line."""
    return _slack_inline(_one_line(value))


def slack_url(value: object) -> str:
    """An http(s) URL usable inside `<url|label>`, else ''."""
    target = md_url(value)
    return target.replace("&", "&amp;")


def slack_link(label: object, url: object) -> str:
    """`<url|label>` with both escaped; just the label if the URL is unusable."""
    text = slack(label)
    target = slack_url(url)
    return f"<{target}|{text}>" if target and text else text


def md_code(value: object) -> str:
    """Agent text as inline Markdown: `code spans` stay code, the rest as `md_text` (see
    `markdown.escape_code_text`)."""
    return escape_code_text(_one_line(value))


def md_code_cell(value: object) -> str:
    """`md_code` inside a table cell (a `|` in the code is escaped as GFM asks)."""
    return escape_code_text(_one_line(value), cell=True)


def _slack_inline(text: str) -> str:
    """`slack` for a piece of one line: the spaces at its ends are kept (they separate it from
    the code span beside it, without which Slack does not see the span)."""
    for mark, entity in _SLACK_ENTITIES:
        if mark in text:
            text = text.replace(mark, entity)
    return _SLACK_SPECIAL_RE.sub("@" + ZWSP, text) if "@" in text else text


def slack_code(value: object) -> str:
    """Agent text in Slack mrkdwn: `code spans` stay code (their text escaped as `slack`)."""
    text = _one_line(value)
    if "`" not in text:
        return _slack_inline(text)
    return map_code_spans(text, _slack_inline, _slack_code_span)


def _slack_code_span(code: str) -> str:
    code = code.replace("`", "'").strip()
    return f"`{_slack_inline(code)}`" if code else ""


def html(value: object) -> str:
    """Issue text in HTML (text or a quoted attribute value)."""
    return str(_markup_escape(_text(value)))


def mermaid_label(value: object) -> str:
    """Text for a quoted Mermaid label: letters, digits, spaces and mild punctuation only."""
    kept = (ch if ch.isalnum() or ch in " .,:/+-()'" else " " for ch in _one_line(value))
    return " ".join("".join(kept).split())


def duration(value: timedelta | None) -> str:
    return "-" if value is None else _duration_text(value)


@functools.lru_cache(maxsize=4096)
def _duration_text(value: timedelta) -> str:
    """Remembered: a digest shows the same ages row after row, in the summary, comment, Slack."""
    return format_duration(value)


def timestamp(value: datetime | None) -> str:
    return format_timestamp(value) or "-"


def _remembered(filter_: Callable[[object], str]) -> Callable[[object], str]:
    """FILTER_, remembering what it made of each string up to _REMEMBERED_CHARS: worth it only
    for an escape that costs more than the look-up and text that repeats, as titles in a table
    cell (each is in the step summary and again in the comment) and owners and phases (a few
    values over a thousand rows) do."""
    remembered = functools.lru_cache(maxsize=4096)(filter_)

    @functools.wraps(filter_)
    def the_filter(value: object) -> str:
        if type(value) is str and len(value) <= _REMEMBERED_CHARS:
            return remembered(value)
        return filter_(value)

    return the_filter


FILTERS: dict[str, Callable[..., str]] = {
    "md_cell": _remembered(md_cell),
    "md_text": md_text,
    "md_url": md_url,
    "md_link": md_link,
    "slack": _remembered(slack),
    "md_code": _remembered(md_code),
    "md_code_cell": _remembered(md_code_cell),
    "slack_code": slack_code,
    "slack_url": slack_url,
    "slack_link": slack_link,
    "html": html,
    "mermaid_label": mermaid_label,
    "clip": clip,
    "duration": duration,
    "timestamp": timestamp,
}


def make_env(loader: BaseLoader, bytecode_cache: BytecodeCache | None = None) -> Environment:
    """The sandboxed environment over LOADER's templates, with their compiled code from
    BYTECODE_CACHE when given (adapters/templates.py reads both: the rules read no files)."""
    env = _Sandbox(
        loader=loader,
        bytecode_cache=bytecode_cache,
        undefined=StrictUndefined,
        autoescape=select_autoescape(
            enabled_extensions=("html", "htm", "html.j2", "htm.j2"),
            default_for_string=False,
            default=False,
        ),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    env.filters["format"] = guarded_format(env.filters["format"])
    env.filters["center"] = guarded_center(env.filters["center"])
    return env


def compile_all(env: Environment) -> None:
    """Compile every template ENV can load, so a user template's syntax error is a
    TemplateError before a run's first write rather than after its comments."""
    assert env.loader is not None
    for name in (n for n in env.loader.list_templates() if n.endswith(".j2")):
        try:
            env.get_template(name)
        except JinjaTemplateError as exc:
            raise _template_error(name, exc) from None


def _template_error(name: str, exc: BaseException) -> TemplateError:
    line = getattr(exc, "lineno", None)
    where = f" line {line}" if line else ""
    return TemplateError(f"template error: {name}{where}: {type(exc).__name__}: {exc}")


def render(env: Environment, name: str, **data: Any) -> str:
    """Render template `name` with `data` as its variables; any failure of the template is a
    TemplateError naming it (a MemoryError is left to the process that bounds the render)."""
    try:
        return env.get_template(name).render(**data)
    except (JinjaTemplateError, ArithmeticError, RecursionError) as exc:
        raise _template_error(name, exc) from None
