"""Markdown as GitHub shows it: cmark-gfm (GitHub's own renderer), read back into tables and
text, so a test can say what a reader sees rather than what the source says."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

# GitHub renders with raw HTML allowed, then sanitises; rendering unsafe shows every piece of
# HTML that reached the renderer, which is what the tests must rule out.
UNSAFE = Options.CMARK_OPT_UNSAFE


@dataclass
class Table:
    heading: str
    head: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    codes: list[list[list[str]]] = field(default_factory=list)  # per row, per cell: code spans


class Page(HTMLParser):
    """Tags seen, text seen, tables by the heading above them, and anything that is not a tag
    cmark-gfm makes from Markdown (a comment, a declaration: raw HTML that got through)."""

    MARKDOWN_TAGS = frozenset(
        [
            "h1",
            "h2",
            "h3",
            "h4",
            "p",
            "a",
            "code",
            "pre",
            "em",
            "strong",
            "del",
            "ul",
            "ol",
            "li",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "blockquote",
            "hr",
            "br",
            "img",
            "input",
        ]
    )

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.raw: list[str] = []
        self.text: list[str] = []
        self.tables: list[Table] = []
        self.headings: list[str] = []
        self._heading: list[str] | None = None
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._row_codes: list[list[str]] = []
        self._code: list[str] | None = None
        self._in_head = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag not in self.MARKDOWN_TAGS:
            self.raw.append(f"<{tag}>")
        if tag in ("h2", "h3"):
            self._heading = []
        elif tag == "table":
            self.tables.append(Table(self.headings[-1] if self.headings else ""))
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr":
            self._row, self._row_codes = [], []
        elif tag in ("td", "th"):
            self._cell = []
            self._row_codes.append([])
        elif tag == "code":
            self._code = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h2", "h3") and self._heading is not None:
            self.headings.append("".join(self._heading).strip())
            self._heading = None
        elif tag == "thead":
            self._in_head = False
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            table = self.tables[-1]
            if self._in_head:
                table.head = self._row
            else:
                table.rows.append(self._row)
                table.codes.append(self._row_codes)
            self._row = None
        elif tag == "code" and self._code is not None:
            if self._row_codes:
                self._row_codes[-1].append("".join(self._code))
            self._code = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        for sink in (self._heading, self._cell, self._code):
            if sink is not None:
                sink.append(data)

    def handle_comment(self, data: str) -> None:
        self.raw.append(f"<!--{data}-->")

    def handle_decl(self, decl: str) -> None:
        self.raw.append(f"<!{decl}>")

    def unknown_decl(self, data: str) -> None:
        self.raw.append(f"<![{data}]>")

    @property
    def all_text(self) -> str:
        return "".join(self.text)


def github(markdown: str) -> Page:
    """The page GitHub would show for `markdown`."""
    return Page(cmarkgfm.github_flavored_markdown_to_html(markdown, options=UNSAFE))
