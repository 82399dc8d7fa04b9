"""Privacy scrub (pure): home paths (the caller passes the real one as `home`) become `~/`;
secrets (`Kind`) and emails are found and redacted. A hit carries its kind and position, never
its value; every pattern has bounded repeats and starts after a separator, so scanning stays
linear.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ai_context.core.findings import Finding, make_finding

Kind = Literal[
    "home-path",
    "email",
    "github-token",
    "clickup-token",
    "slack-token",
    "slack-webhook",
    "aws-access-key",
    "private-key",
    "url-credentials",
    "secret",
]
PRIVACY_KINDS: frozenset[str] = frozenset({"home-path", "email"})


@dataclass(frozen=True)
class Hit:
    """Where something to scrub sits: [start, end) in the text, 1-based line and column."""

    kind: Kind
    start: int
    end: int
    line: int
    column: int


def _marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


# --- patterns ---------------------------------------------------------------------------

_SEP = r"(?:\\\\|\\|/)"  # a path separator, also as JSON escapes it
_SEGMENT = r"[^\s\"'<>|:*?\\/]{1,255}"
_USER = r"(?![$%{<~])[^\s\"'<>|:*?\\/]{1,64}"
_UNIX_HOME_RE = re.compile(r"(?<![\w.~-])/(?:Users|home)/(" + _USER + r")(/|(?![^\s\"'<>|,;)\]}]))")
_WINDOWS_HOME_RE = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z]:" + _SEP + r"Users" + _SEP + "(" + _USER + ")"
    r"((?:" + _SEP + _SEGMENT + r")*" + _SEP + r"?)",
    re.IGNORECASE,
)
_NOT_A_USER = frozenset({"shared", "public", "default", "all users"})
_PATH_END = r"(/|(?![^\s\"'<>|,;)\]}]))"  # a separator, or the path ends here
_ROOT_HOME_RE = re.compile(r"(?<![\w.~-])/root" + _PATH_END)
_COMMON_HOMES = ("/home/", "/Users/", "/root/")


@lru_cache(maxsize=8)
def _home_re(home: str) -> re.Pattern[str] | None:
    """The pattern for HOME (the real home directory) when the usual ones miss it."""
    home = home.rstrip("/")
    if home.count("/") < 2 or not home.startswith("/") or (home + "/").startswith(_COMMON_HOMES):
        return None  # "/", "/srv" (too generic to be a person's) or already covered
    return re.compile(r"(?<![\w.~-])" + re.escape(home) + _PATH_END)


_EMAIL_RE = re.compile(
    r"(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-]{1,64})@[A-Za-z0-9-]{1,63}"
    r"(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"
)
_NOT_PERSONAL = frozenset({"git", "noreply", "no-reply"})

_TOKEN_PATTERNS: list[tuple[Kind, re.Pattern[str]]] = [
    (
        "github-token",
        re.compile(
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"
            r"(?![A-Za-z0-9_])"
        ),
    ),
    (
        "clickup-token",
        re.compile(r"(?<![A-Za-z0-9_])pk_\d{1,12}_[A-Za-z0-9]{20,64}(?![A-Za-z0-9_])"),
    ),
    (
        "slack-token",
        re.compile(
            r"(?<![A-Za-z0-9-])(?:xox[abposre]-[A-Za-z0-9-]{10,250}|xapp-\d-[A-Za-z0-9-]{10,250})"
        ),
    ),
    (
        "slack-webhook",
        re.compile(
            r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{8,250}"
        ),
    ),
    (
        "aws-access-key",
        re.compile(
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}"
            r"(?![A-Za-z0-9])"
        ),
    ),
]
_PEM_BEGIN_RE = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY-----")
_PEM_BODY_RE = re.compile(r"(?:[A-Za-z0-9+/=\s]|\\[nr])*")  # base64, whitespace, JSON \n
_PEM_END = "-----END"
_PEM_TAIL = "PRIVATE KEY-----"
_URL_CREDENTIALS_RE = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s/:@\[\]\"']{1,128}:"
    r"([^\s/@\[\]\"']{1,256})@"
)
_KEYWORD = (
    r"(?:api[_-]?key|apikey|secret(?:[_-]?key)?|token|passw(?:or)?d|pwd|access[_-]?key|"
    r"auth[_-]?token|client[_-]?secret|private[_-]?key|credentials?)"
)
_ASSIGNMENT_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]{1,20}[_.-]){0,4}"
    + _KEYWORD
    + r"(?:[_.-][A-Za-z0-9]{1,20}){0,3}[\"']?[ \t]{0,3}(?:[:=]|=>)[ \t]{0,3}[\"']?"
    r"([A-Za-z0-9+/=_.~-]{16,512})",
    re.IGNORECASE,
)
_BEARER_RE = re.compile(r"(?<![A-Za-z0-9])bearer[ \t]{1,3}([A-Za-z0-9+/=_.~-]{16,512})", re.I)
_HEX40_RE = re.compile(r"[0-9a-fA-F]{40}")
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_PLACEHOLDER_WORDS = ("xxxx", "example", "changeme", "your", "redacted", "placeholder", "dummy")

# Which kind wins when two hits start at the same place: the more specific one.
_PRIORITY: dict[str, int] = {
    "private-key": 0,
    "github-token": 1,
    "clickup-token": 1,
    "slack-webhook": 1,
    "slack-token": 2,
    "aws-access-key": 1,
    "url-credentials": 3,
    "secret": 4,
    "email": 5,
    "home-path": 6,
}


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts = Counter(value)
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def looks_secret(value: str) -> bool:
    """Whether an assigned value is random enough to be a credential."""
    if len(value) < 16 or value.isdigit():
        return False
    if _HEX40_RE.fullmatch(value) or _UUID_RE.fullmatch(value):
        return False  # a git sha or an id, not a secret
    lowered = value.lower()
    if any(word in lowered for word in _PLACEHOLDER_WORDS):
        return False
    classes = sum(any(map(kind, value)) for kind in (str.islower, str.isupper, str.isdigit))
    return classes >= 2 and entropy(value) >= 3.5


# --- finding ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Span:
    kind: Kind
    start: int
    end: int
    replacement: str


def _home_spans(text: str, home: str | None) -> list[_Span]:
    spans: list[_Span] = []
    for pattern in (_UNIX_HOME_RE, _WINDOWS_HOME_RE):  # group 1 the user, 2 the rest
        for m in pattern.finditer(text):
            if m.group(1).lower() not in _NOT_A_USER:
                rest = re.sub(_SEP, "/", m.group(2))
                spans.append(_Span("home-path", m.start(), m.end(), "~" + rest))
    own = _home_re(home) if home else None
    for rooted in (_ROOT_HOME_RE, own):  # group 1 the rest
        if rooted is not None:
            spans.extend(
                _Span("home-path", m.start(), m.end(), "~" + m.group(1))
                for m in rooted.finditer(text)
            )
    return spans


def _pem_spans(text: str) -> list[_Span]:
    spans: list[_Span] = []
    position = 0
    while True:
        begin = _PEM_BEGIN_RE.search(text, position)
        if begin is None:
            return spans
        end_at = text.find(_PEM_END, begin.end())
        tail = text.find(_PEM_TAIL, end_at) if end_at >= 0 else -1
        if tail >= 0:
            stop = tail + len(_PEM_TAIL)
        else:  # unterminated: the key material that follows, up to anything else
            body = _PEM_BODY_RE.match(text, begin.end())
            stop = body.end() if body else begin.end()
        spans.append(_Span("private-key", begin.start(), stop, _marker("private-key")))
        position = stop


def _candidate_spans(text: str, home: str | None) -> list[_Span]:
    spans = _home_spans(text, home) + _pem_spans(text)
    for kind, pattern in _TOKEN_PATTERNS:
        spans.extend(_Span(kind, m.start(), m.end(), _marker(kind)) for m in pattern.finditer(text))
    for match in _URL_CREDENTIALS_RE.finditer(text):
        if not match.group(1).startswith(("$", "%", "<", "{")):
            spans.append(
                _Span("url-credentials", match.start(1), match.end(1), _marker("url-credentials"))
            )
    for pattern in (_ASSIGNMENT_RE, _BEARER_RE):
        for match in pattern.finditer(text):
            if looks_secret(match.group(1)):
                spans.append(_Span("secret", match.start(1), match.end(1), _marker("secret")))
    for match in _EMAIL_RE.finditer(text):
        in_url = text.endswith("://", 0, match.start())  # user@host of a URL, not a mailbox
        if match.group(1).lower() not in _NOT_PERSONAL and not in_url:
            spans.append(_Span("email", match.start(), match.end(), _marker("email")))
    return spans


def _spans(text: str, home: str | None) -> list[_Span]:
    """Non-overlapping spans, earliest first; at one start the most specific kind wins."""
    ordered = sorted(
        _candidate_spans(text, home), key=lambda s: (s.start, _PRIORITY[s.kind], -(s.end - s.start))
    )
    kept: list[_Span] = []
    for span in ordered:
        if kept and span.start < kept[-1].end:
            last = kept[-1]
            # A specific token inside a generic span (or a longer span after) replaces it.
            if _PRIORITY[span.kind] < _PRIORITY[last.kind] and span.end >= last.end:
                kept[-1] = span
            continue
        kept.append(span)
    return kept


def find(text: str, *, home: str | None = None) -> list[Hit]:
    """Everything the scrub would change, in order; positions only, never values. HOME is the
    real home directory ($HOME), redacted wherever it lies."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    hits: list[Hit] = []
    for span in _spans(text, home):
        line = bisect_right(newlines, span.start - 1) + 1
        line_start = newlines[line - 2] + 1 if line >= 2 else 0
        hits.append(Hit(span.kind, span.start, span.end, line, span.start - line_start + 1))
    return hits


def _apply(text: str, spans: list[_Span]) -> str:
    out, position = [], 0
    for span in spans:
        out += [text[position : span.start], span.replacement]
        position = span.end
    return "".join(out) + text[position:]


def scrub_counted(text: str, *, home: str | None = None) -> tuple[str, Counter[str]]:
    """The scrubbed text and how many of each kind were replaced (HOME: see `find`)."""
    counts: Counter[str] = Counter()
    # Redacting can bring two fragments together into something new (rare); repeat until
    # nothing changes so that scrubbing twice is the same as scrubbing once.
    for _ in range(8):
        spans = _spans(text, home)
        if not spans:
            break
        counts.update(
            span.kind for span in spans if span.replacement != text[span.start : span.end]
        )
        new = _apply(text, spans)
        if new == text:
            break
        text = new
    return text, counts


def scrub(text: str, *, home: str | None = None) -> str:
    """Home paths to `~/`, secrets and emails to `[REDACTED:<kind>]` (HOME: see `find`)."""
    return scrub_counted(text, home=home)[0]


def describe_counts(counts: Counter[str]) -> str:
    """`2 home-paths, 1 email` style text for reports."""
    return ", ".join(
        f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in sorted(counts.items()) if n
    )


# --- findings for committed files -------------------------------------------------------


def hit_finding(path: str, hit: Hit) -> Finding:
    """A Finding naming where and what kind, never the value."""
    if hit.kind not in PRIVACY_KINDS:  # a secret
        code, severity = "AIC530", "error"
        what = f"a {hit.kind} (value not shown)"
        hint = "Remove it from the file and from git history, and revoke it: it is exposed."
    elif hit.kind == "email":
        code, severity = "AIC532", "warning"
        what = "an email address"
        hint = "Session files hold no personal data; run `ai-context scrub` on the file."
    else:
        code, severity = "AIC531", "warning"
        what = "a home path with a user name"
        hint = "Write paths relative to the repository or as ~/...; `ai-context scrub` does it."
    return make_finding(code, severity, f"{path}:{hit.line}:{hit.column}: {what}", hit.line, hint)


def privacy_findings(path: str, text: str, *, home: str | None = None) -> list[Finding]:
    """One finding per hit in `text` (the contents of `path`)."""
    return [hit_finding(path, hit) for hit in find(text, home=home)]
