"""Settings: precedence, validation with the source named, secrets masked and hidden."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from ai_context.adapters.config import load_settings, secrets_to_mask, setting_names
from ai_context.core.errors import ConfigError

TOKEN = "ghp_" + "a" * 36


def test_input_beats_env_beats_file_beats_default(tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/ai-context.yml").write_text(
        "stale-after: 3d\nfail-on: warning\nbot-login: my-bot\n", encoding="utf-8"
    )
    env = {"INPUT_STALE-AFTER": "90m", "AI_CONTEXT_FAIL_ON": "error", "INPUT_FAIL-ON": ""}
    settings, _ = load_settings(env, tmp_path)
    assert settings.stale_after == timedelta(minutes=90)
    assert settings.fail_on == "error"
    assert settings.bot_login == "my-bot"
    assert settings.jobs == ("auto",)


def test_tokens_from_inputs_or_plain_env() -> None:
    settings, _ = load_settings({"GITHUB_TOKEN": TOKEN})
    assert settings.github_token is not None
    assert settings.github_token.get_secret_value() == TOKEN
    assert TOKEN not in repr(settings) and TOKEN not in str(settings.model_dump())
    assert secrets_to_mask(settings) == [TOKEN]


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"INPUT_STALE-AFTER": "soon"}, "setting stale-after (input stale-after)"),
        ({"INPUT_FAIL-ON": "sometimes"}, "setting fail-on (input fail-on)"),
        ({"INPUT_JOBS": "check,dance"}, "unknown job dance"),
        ({"INPUT_DRY-RUN": "maybe"}, "not true or false"),
        ({"INPUT_DIGEST-ISSUE": "-3"}, "setting digest-issue"),
        ({"INPUT_CLICKUP-API-URL": "ftp://x"}, "not an http(s) URL"),
    ],
)
def test_bad_values_name_the_setting(env: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError, match="bad configuration") as info:
        load_settings(env)
    assert needle in str(info.value)


def test_file_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("# comment\njobs: check\n\nstale-after: forever\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings({"INPUT_CONFIG": str(path)})
    assert f"{path} line 4" in str(info.value) and "stale-after" in str(info.value)


def test_unknown_key_and_secret_in_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("stale_aftr: 1d\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1: unknown setting 'stale_aftr'"):
        load_settings({"INPUT_CONFIG": str(path)})
    path.write_text(f"github-token: {TOKEN}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="is a secret") as info:
        load_settings({"INPUT_CONFIG": str(path)})
    assert TOKEN not in str(info.value)


def test_bad_yaml(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("jobs: [check\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_settings({"INPUT_CONFIG": str(path)})
    path.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_settings({"INPUT_CONFIG": str(path)})


def test_missing_file_is_fine() -> None:
    settings, extras = load_settings({"INPUT_CONFIG": "/nonexistent/ai-context.yml"})
    assert extras == {} and settings.fail_on == "never"


def test_every_action_input_is_a_setting_the_code_reads() -> None:
    import yaml

    action = yaml.safe_load((Path(__file__).parents[1] / "action.yml").read_text("utf-8"))
    assert set(action["inputs"]) <= set(setting_names())


def test_every_action_input_is_documented_and_read_by_the_code() -> None:
    import re

    import yaml

    root = Path(__file__).parents[1]
    action = yaml.safe_load((root / "action.yml").read_text("utf-8"))
    readme = (root / "README.md").read_text("utf-8")
    sources = "\n".join(
        p.read_text("utf-8")
        for p in (root / "src" / "ai_context").rglob("*.py")
        if p.name != "config.py"
    )
    for name in action["inputs"]:
        assert f"`{name}`" in readme, f"input {name} is not documented in the README"
        field = name.replace("-", "_")
        if name == "config":
            assert "load_settings(" in sources
            continue
        assert re.search(rf"settings\.{field}\b", sources), f"no code reads settings.{field}"


HOOK = "https://hooks.slack.com/services/T000/B000/x"


def test_the_readme_config_example_is_valid(tmp_path: Path) -> None:
    """What the README shows users to copy must load, section by section."""
    import re

    from ai_context.jobs.digest import digest_section
    from ai_context.rules.actors import parse_actors
    from ai_context.rules.lease import parse_lease_config
    from ai_context.rules.mirror import load_mirror_config
    from ai_context.rules.stale import parse_stale_config

    readme = (Path(__file__).parents[1] / "README.md").read_text("utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    [example] = [b for b in blocks if b.startswith("stale-after:")]
    path = tmp_path / "ai-context.yml"
    path.write_text(example, encoding="utf-8")
    settings, extras = load_settings({"INPUT_CONFIG": str(path), "SLACK_WEBHOOK_URL": HOOK})
    assert settings.stale_after == timedelta(days=2) and settings.fail_on == "error"
    source = str(path)
    assert parse_actors(extras["actors"], source).owner("cc-ariel-laptop") == "ariel"
    assert (
        parse_stale_config(extras["stale"], source, settings.stale_after).max_active_per_actor == 3
    )
    assert parse_lease_config(extras["lease"], source).ttl == timedelta(hours=2)
    assert load_mirror_config(extras, source).lists == ("901",)
    assert digest_section(extras, settings).repositories == ("acme/shop", "acme/infra")
