"""Loopback stand-ins for GitHub, ClickUp and Slack, shared by end-to-end tests and benchmarks.

Each fake is a real HTTP server on 127.0.0.1 (standard library only), stateful and faithful to
the real API's status codes, headers and error bodies. Use one as a context manager:

    with GitHubFake() as gh, ClickUpFake() as cu, SlackFake() as slack:
        ...  # point the code under test at gh.url, cu.url, slack.webhook_url

See base.py for what every fake shares: request recording and counting, `fail_next` faults,
`before`/`after` hooks, `hold` (a request kept at the door until the test lets it in).
"""

from .base import ANY, Clock, FakeServer, Hold, HttpError, Reply, Request
from .clickup import ClickUpFake
from .github import GitHubFake
from .slack import SlackFake

__all__ = [
    "ANY",
    "ClickUpFake",
    "Clock",
    "FakeServer",
    "GitHubFake",
    "Hold",
    "HttpError",
    "Reply",
    "Request",
    "SlackFake",
]
