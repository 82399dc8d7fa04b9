"""`make screenshots`: the pictures of the README, made from the real renderers.

The digest comment and the sticky comment are rendered to Markdown by the code that posts
them, turned into HTML by cmark-gfm (GitHub's own renderer) and laid out with GitHub's
stylesheet (the npm package github-markdown-css) at a comment's width; the digest's pie chart
is drawn by Mermaid (npm), as GitHub draws it. The Slack message is the Block Kit payload the
digest job posts, laid out the way Slack shows one. Headless Chromium (Debian's `chromium`
package) takes the screenshots.

    make screenshots     # npm install into build/screenshots, then this script

Usage: python docs/screenshots.py NODE_MODULES OUT_DIR
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
import tempfile
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import cmarkgfm
from cmarkgfm.cmark import Options

from ai_context.adapters.store import DirectoryStore
from ai_context.adapters.templates import Templates
from ai_context.core.findings import Finding
from ai_context.rules.checks import check_body
from ai_context.rules.digest.build import build_digest
from ai_context.rules.digest.render import render_markdown
from ai_context.rules.digest.slack import slack_messages
from ai_context.rules.digest.state import find_state
from ai_context.rules.sticky import render_findings

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2026, 5, 27, 9, 0, tzinfo=UTC)
REPO = "acme/shop"
COMMENT_URL = f"https://github.com/{REPO}/issues/9#issuecomment-2217"
WIDTH = 900  # a comment is about 850 px wide on github.com
PEOPLE = {"U024BE7LH": "omer"}  # Slack shows a mention as the person's name
TEMPLATES = Templates().env  # the bundled templates


def _page(body: str, modules: Path, *, title: str, author: str = "github-actions") -> str:
    css = (modules / "github-markdown-css" / "github-markdown-light.css").as_uri()
    mermaid = (modules / "mermaid" / "dist" / "mermaid.min.js").as_uri()
    return f"""<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="{css}"><style>
body {{ background: #fff; margin: 0; padding: 16px; width: {WIDTH - 32}px;
  font-family: -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }}
.comment {{ border: 1px solid #d0d7de; border-radius: 6px; }}
.head {{ background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 8px 16px;
  font-size: 14px; color: #59636e; border-radius: 6px 6px 0 0; }}
.head b {{ color: #1f2328; }}
.markdown-body {{ padding: 16px; font-size: 14px; }}
.mermaid {{ text-align: center; }}
</style></head><body><div class="comment"><div class="head"><b>{author}</b> <span>bot</span>
commented · {html.escape(title)}</div><div class="markdown-body">{body}</div></div>
<script src="{mermaid}"></script>
<script>mermaid.initialize({{startOnLoad: true}});</script></body></html>"""


def github_html(markdown: str) -> str:
    """What GitHub makes of the Markdown, with Mermaid blocks handed to Mermaid."""
    body = cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=Options.CMARK_OPT_GITHUB_PRE_LANG
    )
    return re.sub(
        r'<pre lang="mermaid"><code>(.*?)</code></pre>',
        lambda m: f'<div class="mermaid">{m.group(1)}</div>',
        body,
        flags=re.S,
    )


def _mrkdwn(text: str) -> str:
    """Slack mrkdwn as Slack shows it: *bold*, _italic_, `code`, <url|label>, bullets."""
    out = text  # already entity-escaped by the renderer, as Slack wants it
    out = re.sub(r"`([^`]+)`", r'<code class="c">\1</code>', out)
    out = re.sub(r"&lt;(https?://[^|&]+)\|([^&]*)&gt;", r'<a href="\1">\2</a>', out)
    out = re.sub(r"<(https?://[^|>]+)\|([^>]*)>", r'<a href="\1">\2</a>', out)
    out = re.sub(r"<@(U[A-Z0-9]+)>", lambda m: f'<span class="at">@{PEOPLE[m.group(1)]}</span>', out)
    out = re.sub(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])", r"<b>\1</b>", out)
    out = re.sub(r"(?<![\w_])_([^_\n]+)_(?![\w_])", r"<i>\1</i>", out)
    return out.replace("\n", "<br>")


def slack_html(message: dict[str, Any]) -> str:
    parts = []
    for block in message["blocks"]:
        if block["type"] == "header":
            parts.append(f'<div class="h">{html.escape(block["text"]["text"])}</div>')
        elif block["type"] == "context":
            parts.append(f'<div class="ctx">{_mrkdwn(block["elements"][0]["text"])}</div>')
        else:
            parts.append(f'<div class="s">{_mrkdwn(block["text"]["text"])}</div>')
    return f"""<!doctype html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; padding: 20px; width: {WIDTH - 40}px; background: #fff; color: #1d1c1d;
  font: 15px/1.46668 Lato, "Noto Sans", Helvetica, Arial, sans-serif; }}
.msg {{ display: flex; gap: 8px; }}
.av {{ width: 36px; height: 36px; border-radius: 4px; background: #1a7f37; color: #fff;
  font-weight: 700; display: flex; align-items: center; justify-content: center; }}
.who b {{ font-weight: 900; }} .who span {{ color: #616061; font-size: 12px; }}
.h {{ font-size: 18px; font-weight: 900; margin: 4px 0 8px; }}
.s {{ margin: 4px 0 10px; }} .ctx {{ color: #616061; font-size: 13px; }}
code.c {{ color: #c01343; background: #f8f8f8; border: 1px solid #ddd; border-radius: 3px;
  padding: 0 3px; font-size: 12px; }}
a {{ color: #1264a3; text-decoration: none; }}
.at {{ color: #1264a3; background: #e8f5fa; border-radius: 3px; padding: 0 2px; }}
</style></head><body><div class="msg"><div class="av">ai</div><div><div class="who">
<b>ai-context</b> <span>APP 9:00 AM</span></div>{"".join(parts)}</div></div></body></html>"""


CHROMIUM = [
    "chromium",
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--virtual-time-budget=8000",
]
# Once the page (and Mermaid) is drawn, its height goes into the DOM, so a first pass can
# measure it and the screenshot is cut to the content.
MEASURE = """</body><script>addEventListener("load", () => setTimeout(() => {
  document.body.setAttribute("data-height", Math.ceil(document.body.firstElementChild.getBoundingClientRect().bottom) + 16);
}, 2000));</script>"""


def shoot(page: str, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "page.html"
        source.write_text(MEASURE.join(page.rsplit("</body>", 1)), encoding="utf-8")
        dom = subprocess.run(
            [*CHROMIUM, f"--window-size={WIDTH},800", "--dump-dom", source.as_uri()],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
        found = re.search(r'data-height="(\d+)"', dom)
        height = min(int(found.group(1)), 6000) if found else 2000
        subprocess.run(
            [*CHROMIUM, f"--window-size={WIDTH},{height}", f"--screenshot={out}", source.as_uri()],
            check=True,
            capture_output=True,
            timeout=120,
        )
    print(f"wrote {out} ({WIDTH}x{height})")


def examples() -> list[Any]:
    """The bundled examples, as issues of acme/shop (with the URLs GitHub would give them)."""
    return [
        replace(i, html_url=f"https://github.com/{REPO}/issues/{i.number}")
        for i in DirectoryStore(ROOT / "examples", REPO).list_issues("all")
    ]


def digest_pictures(modules: Path, out: Path) -> None:
    issues = examples()
    yesterday = build_digest(issues, NOW - timedelta(days=1))
    previous = find_state(render_markdown(yesterday, TEMPLATES))
    digest = build_digest(issues, NOW, previous=previous)
    markdown = render_markdown(digest, TEMPLATES)
    shoot(_page(github_html(markdown), modules, title="ai-context daily digest"), out / "digest.png")
    [message, *_] = slack_messages(
        digest, TEMPLATES, comment_url=COMMENT_URL, mentions={"cc-omer-laptop": "U024BE7LH"}
    )
    shoot(slack_html(message), out / "slack.png")


def sticky_picture(modules: Path, out: Path) -> None:
    findings = [
        f
        for issue in examples()
        for f in check_body(issue.body, now=NOW).findings
        if issue.number == 103
    ]
    findings.append(
        Finding(
            code="AIC603",
            severity="warning",
            line=None,
            message="commits naming this issue were pushed by octo-dev, not cc-dana-desktop",
            hint="Have the agent save its block (run `ai-context derive 103` in the checkout).",
        )
    )
    markdown = render_findings(findings)
    shoot(_page(github_html(markdown), modules, title="on #103"), out / "sticky.png")


def main(argv: list[str]) -> int:
    modules, out = Path(argv[0]).resolve(), Path(argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    digest_pictures(modules, out)
    sticky_picture(modules, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
