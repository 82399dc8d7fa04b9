"""The block model as plain frozen dataclasses: the checks and normalisation pydantic gave it,
each problem a BlockError naming its field, and pydantic models that hold one still working."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import BaseModel, ValidationError

from ai_context.core.block.model import Block, BlockError, PlanStep, block_data, block_from_data
from ai_context.core.block.parse import parse
from ai_context.core.block.render import render
from ai_context.core.findings import Finding, FindingError, make_finding
from ai_context.rules.checks import CheckConfig

T = datetime(2026, 5, 26, 14, 32, tzinfo=UTC)


def test_the_model_normalises_as_the_parser_reads() -> None:
    block = Block(
        actor=" `cc-a` ",
        phase="implementing (chunk 3 of 5)",
        last_updated=datetime(2026, 5, 26, 16, 32, 0, 999, tzinfo=timezone(timedelta(hours=2))),
        plan=[PlanStep(number=1, text="Write it\n(done)")],  # type: ignore[arg-type]
        decisions=["none", " a\nb "],  # type: ignore[arg-type]
        extra={"Note": "first\n  second"},
    )
    assert block.actor == "cc-a"
    assert (block.phase, block.chunk) == ("implementing", (3, 5))
    assert block.last_updated == T and block.last_updated.tzinfo is UTC
    assert block.plan == (PlanStep(1, "Write it", "done"),)
    assert block.decisions == ("a b",)
    assert block.extra == {"Note": "first\n    second"}
    assert parse(render(block)).block == block


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"actor": "two words"}, "actor: the actor id is one word, e.g. cc-ariel-laptop"),
        ({"actor": "``"}, "actor: the actor id is one word"),
        ({"chunk": (1, 2)}, "block: a chunk needs a phase"),
        ({"actor_description": "x"}, "block: an actor description needs an actor id"),
        ({"phase": "p", "chunk": (1, 10**9)}, "chunk: chunk numbers are between 0 and 999999999"),
        (
            {"last_updated": datetime(2026, 5, 26)},
            "last_updated: Last updated must carry a timezone",
        ),
        ({"extra": {"Phase": "x"}}, "extra: 'Phase' is a known field, not an extra one"),
        ({"extra": {"a**b": "x"}}, "extra: unusable field label 'a**b'"),
        (
            {"extra": {"N": "x\n<!-- ai-context:end -->"}},
            "extra: field 'N' holds an ai-context marker line",
        ),
        ({"plan": [{"number": 1, "text": " "}]}, "plan.0.text: a plan step needs text"),
        ({"plan": [{"number": -1, "text": "x"}]}, "plan.0.number: a plan step number is between"),
        ({"plan": [{"number": 1, "text": "x", "status": "later"}]}, "plan.0.status: must be one"),
        ({"next_step": 3}, "next_step: must be text, not int"),
    ],
)
def test_bad_values_are_a_block_error_naming_the_field(
    values: dict[str, object], message: str
) -> None:
    with pytest.raises(BlockError) as caught:
        block_from_data(values)
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, ValueError)


def test_block_from_data_ignores_unknown_keys_and_reads_steps_as_mappings() -> None:
    block = block_from_data(
        {"actor": "cc-a", "plan": [{"number": 2, "text": "x (pending)"}], "mood": "good"}
    )
    assert block == Block(actor="cc-a", plan=(PlanStep(2, "x", "pending"),))


def test_replace_checks_like_the_constructor() -> None:
    block = Block(actor="cc-a", phase="p")
    assert dataclasses.replace(block, next_step="go\nnow").next_step == "go now"
    with pytest.raises(BlockError, match="one word"):
        dataclasses.replace(block, actor="two words")
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.actor = "cc-b"  # type: ignore[misc]


def test_block_data_is_what_model_dump_gave() -> None:
    block = Block(phase="p", chunk=(1, 2), last_updated=T, files_touched="a/{b,c}.py, prose")
    as_json = block_data(block)
    assert as_json["chunk"] == [1, 2] and as_json["last_updated"] == "2026-05-26T14:32:00Z"
    assert as_json["paths"] == ["a/b.py", "a/c.py"]
    assert list(as_json) == [*(f.name for f in dataclasses.fields(Block)), "paths"]


class _Holder(BaseModel):
    block: Block | None = None
    findings: tuple[Finding, ...] = ()


def test_pydantic_models_holding_one_validate_and_round_trip() -> None:
    block = Block(actor="cc-a", phase="p (chunk 1 of 2)", plan=(PlanStep(1, "x", "done"),))
    held = _Holder(block=block, findings=(Finding("AIC1", "error", "m", 3),))
    again = _Holder.model_validate_json(held.model_dump_json())
    assert again == held and again.block == block
    with pytest.raises(ValidationError, match="one word"):
        _Holder.model_validate({"block": {"actor": "two words"}})


def test_findings_check_their_severity_and_types() -> None:
    assert make_finding("AIC1", "info", "m", None, "").severity == "info"
    with pytest.raises(FindingError, match="severity"):
        make_finding("AIC1", "fatal", "m", None, "")
    with pytest.raises(FindingError, match="line"):
        Finding("AIC1", "error", "m", "3")  # type: ignore[arg-type]
    assert hash(Finding("A", "error", "m")) == hash(Finding("A", "error", "m"))


def test_check_config_names_the_known_fields() -> None:
    assert CheckConfig(required=["phase"]).required == ("phase",)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown required field"):
        CheckConfig(required=("mood",))


@pytest.mark.parametrize(
    "files", ["a/" + "{a,b}" * 2000, "a/" + "{a," * 3000 + "b" + "}" * 3000, "a/" + "{x}" * 2000]
)
def test_files_touched_with_thousands_of_braces_is_kept_as_written(files: str) -> None:
    # Each brace group was one level of recursion: past ~1,000 a RecursionError (exit 3).
    assert Block(files_touched=files).paths == (files,)
    assert block_data(Block(files_touched=files))["paths"] == [files]
