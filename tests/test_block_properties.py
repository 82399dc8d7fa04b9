"""Properties: round trips, total parsing of arbitrary text, byte-exact replace_block."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_context.core.block.locate import find
from ai_context.core.block.model import Block, PlanStep
from ai_context.core.block.parse import parse
from ai_context.core.block.render import render, replace_block
from ai_context.core.block.syntax import ALIASES, BULLET_RE, canon_label, field_of, split_label
from ai_context.core.findings import Finding

# Text an agent could put in a one-line field: any printable characters, no line breaks.
line_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda s: s.strip() != "")
word = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Z")), min_size=1, max_size=20
).filter(lambda w: w.strip().strip("`") != "")
label = st.from_regex(r"[A-Z][a-z]{1,10}( [a-z]{1,8})?", fullmatch=True).filter(
    lambda s: " ".join(s.lower().split()) not in ALIASES
)
steps = st.builds(
    PlanStep,
    number=st.integers(min_value=0, max_value=10_000),
    text=line_text,
    status=st.sampled_from([None, "done", "in progress", "pending", "blocked", "skipped"]),
)
stamps = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)


@st.composite
def blocks(draw: st.DrawFn) -> Block:
    actor = draw(st.none() | word)
    phase = draw(st.none() | line_text)
    return Block(
        actor=actor,
        actor_description=draw(st.none() | line_text) if actor else None,
        phase=phase,
        chunk=draw(st.none() | st.tuples(st.integers(0, 99), st.integers(0, 99)))
        if phase
        else None,
        last_updated=draw(st.none() | stamps),
        plan=tuple(draw(st.lists(steps, max_size=6))),
        files_touched=draw(st.none() | line_text),
        decisions=tuple(draw(st.lists(line_text, max_size=4))),
        blockers=tuple(draw(st.lists(line_text, max_size=4))),
        next_step=draw(st.none() | line_text),
        extra=draw(st.dictionaries(label, st.text(max_size=30).map(str.strip), max_size=3)),
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks())
def test_parse_of_render_is_identity(block: Block) -> None:
    parsed = parse(render(block))
    assert parsed.block == block
    # A canonical block carries no structural findings beyond steps the model left unmarked.
    assert {f.code for f in parsed.findings} <= {"AIC105", "AIC106"}


@settings(max_examples=200, deadline=None)
@given(blocks())
def test_render_with_markers_round_trips_and_is_untampered(block: Block) -> None:
    parsed = parse(render(block, markers=True))
    assert parsed.block == block
    assert parsed.marker is not None and parsed.marker.matches


@settings(max_examples=200, deadline=None)
@given(blocks())
def test_render_is_a_fixed_point(block: Block) -> None:
    text = render(block)
    again = parse(text).block
    assert again is not None
    assert render(again) == text


markdownish = st.lists(
    st.sampled_from(
        [*"#-*+_`~:()[]xX 0123456789\n\r\t", "## AI Context", "**Phase:**", "Plan:", "```"]
    ),
    max_size=200,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=400), markdownish))
def test_arbitrary_text_never_raises(body: str) -> None:
    parsed = parse(body)
    assert all(isinstance(f, Finding) for f in parsed.findings)
    if parsed.block is not None:
        parse(render(parsed.block))


# Field lines as agents and editors write them, with the odd whitespace they paste (a no-break
# space after the actor id once raised inside the parser and stopped a scheduled run).
odd_value = st.lists(
    st.sampled_from(
        [
            *"abc-_`()*:#. 0123456789",
            "\u00a0",
            "\t",
            "\x0b",
            "\x0c",
            "\u2028",
            "\u200b",
            "\ufeff",
            "\r",
            "<!-- ai-context:hash=1 -->",
            "(chunk 3 of 5)",
            "2026-05-26T14:32:00Z",
            "none",
            "-",
        ]
    ),
    max_size=12,
).map("".join)
field_line = st.builds(
    lambda label, value, cont: f"- **{label}:** {value}" + (f"\n  {cont}" if cont else ""),
    st.sampled_from(
        [
            "Active actor",
            "Phase",
            "Last updated",
            "Plan",
            "Files touched",
            "Decisions",
            "Blockers",
            "Next step",
            "Notes",
            "Reviewer",
        ]
    ),
    odd_value,
    st.none() | odd_value,
)


@settings(max_examples=500, deadline=None)
@given(st.lists(field_line, max_size=10))
def test_odd_field_values_are_findings_never_exceptions(lines: list[str]) -> None:
    parsed = parse("## AI Context\n\n" + "\n".join(lines) + "\n")
    assert parsed.block is not None
    assert all(isinstance(f, Finding) for f in parsed.findings)
    parse(render(parsed.block))


# --- replace_block preserves every byte outside the block --------------------------------

free_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200).filter(
    lambda s: "```" not in s and "~~~" not in s and "ai context" not in s.lower()
)


@settings(max_examples=300, deadline=None)
@given(free_text, blocks(), blocks(), free_text, st.booleans())
def test_replace_block_preserves_outside_bytes(
    prefix: str, old: Block, new: Block, suffix: str, crlf: bool
) -> None:
    nl = "\r\n" if crlf else "\n"
    tail = f"{nl}{nl}## Notes{nl}{suffix}"
    body = f"{prefix}{nl}{nl}{render(old, markers=True, newline=nl)}{tail}"
    result = replace_block(body, new)
    assert result == f"{prefix}{nl}{nl}{render(new, markers=True, newline=nl)}{tail}"
    assert parse(result).block == new


@settings(max_examples=200, deadline=None)
@given(free_text, blocks())
def test_replace_block_inserts_at_top_when_absent(body: str, block: Block) -> None:
    result = replace_block(body, block)
    assert result.endswith(body)
    assert find(result)[0].start == 0
    assert parse(result).block == block


# Pieces of field lines, the canonical `- **Label:** value` and every variant around it.
_field_piece = st.sampled_from(
    [
        *("-", "*", "+", " ", "\t", "**", "__", ":", "Phase", "Next step", "plan", "x", "a*b"),
        *("\u00a0", "(done)", "http://x", "\n", "_", "Label", "  ", "**Phase:**", "- **"),
    ]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_field_piece, max_size=12).map("".join))
def test_field_of_reads_the_canonical_line_as_the_general_rule_does(text: str) -> None:
    """field_of reads `- **Label:** value` from one match (every field line of every body);
    the general rule (a bullet, then split_label, the label known when there is none) must
    give the same pair for any text, so that shortcut changes nothing."""
    stripped = text.strip()
    bullet = BULLET_RE.match(stripped)
    pair = split_label(stripped[bullet.end() :] if bullet else stripped)
    if pair is not None and bullet is None and canon_label(pair[0]) not in ALIASES:
        pair = None
    assert field_of(text) == pair
