"""The configuration: precedence, validation with the source named, secrets masked and hidden,
the file's vocabulary, its sections typed and parsed once."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from ai_context.adapters.config import JOB_NAMES, Config, load_config
from ai_context.adapters.config_file import FILE_SETTINGS, SECTIONS
from ai_context.core.errors import ConfigError
from ai_context.core.secret import Secret
from ai_context.jobs.registry import JOBS

TOKEN = "ghp_" + "a" * 36


def test_input_beats_env_beats_file_beats_default(tmp_path: Path) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/ai-context.yml").write_text(
        "stale-after: 3d\nfail-on: warning\nbot-login: my-bot\n", encoding="utf-8"
    )
    env = {"INPUT_STALE-AFTER": "90m", "AI_CONTEXT_FAIL_ON": "error", "INPUT_FAIL-ON": ""}
    settings = load_config(env, tmp_path)
    assert settings.stale_after == timedelta(minutes=90)
    assert settings.fail_on == "error"
    assert settings.bot_login == "my-bot"
    assert settings.jobs == ("auto",)


def test_tokens_from_inputs_or_plain_env() -> None:
    settings = load_config({"GITHUB_TOKEN": TOKEN})
    assert isinstance(settings.github_token, Secret)
    assert settings.github_token.get_secret_value() == TOKEN
    assert TOKEN not in repr(settings) and TOKEN not in str(settings.model_dump())
    assert TOKEN not in repr(settings.github_token) and TOKEN not in str(settings.github_token)
    assert settings.secrets() == [TOKEN]


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"INPUT_STALE-AFTER": "soon"}, "setting stale-after (input stale-after)"),
        ({"INPUT_FAIL-ON": "sometimes"}, "setting fail-on (input fail-on)"),
        ({"INPUT_JOBS": "check,dance"}, "unknown job dance"),
        ({"INPUT_DRY-RUN": "maybe"}, "Input should be a valid boolean"),
        ({"INPUT_DIGEST-ISSUE": "-3"}, "setting digest-issue"),
        ({"INPUT_CLICKUP-API-URL": "ftp://x"}, "not an http(s) URL"),
    ],
)
def test_bad_values_name_the_setting(env: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError, match="bad configuration") as info:
        load_config(env)
    assert needle in str(info.value)


def test_the_jobs_setting_accepts_exactly_the_jobs_there_are() -> None:
    # Config refuses an unknown job at load, so the route never meets one.
    assert sorted(JOB_NAMES) == sorted(JOBS)


def test_file_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("# comment\njobs: check\n\nstale-after: forever\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config({"INPUT_CONFIG": str(path)})
    assert f"{path} line 4" in str(info.value) and "stale-after" in str(info.value)


def test_unknown_key_and_secret_in_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("stale_aftr: 1d\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1: unknown setting 'stale_aftr'"):
        load_config({"INPUT_CONFIG": str(path)})
    path.write_text(f"github-token: {TOKEN}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="is a secret") as info:
        load_config({"INPUT_CONFIG": str(path)})
    assert TOKEN not in str(info.value)


def test_bad_yaml(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("jobs: [check\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config({"INPUT_CONFIG": str(path)})
    path.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config({"INPUT_CONFIG": str(path)})


def test_missing_file_is_fine() -> None:
    settings = load_config({"INPUT_CONFIG": "/nonexistent/ai-context.yml"})
    assert settings.fail_on == "never" and len(settings.actors.actors) == 0
    assert settings.digest.repositories == () and settings.stale.max_active_per_actor is None


def test_every_action_input_is_a_setting_the_code_reads() -> None:
    import yaml

    action = yaml.safe_load((Path(__file__).parents[1] / "action.yml").read_text("utf-8"))
    assert set(action["inputs"]) <= {name.replace("_", "-") for name in Config.model_fields}


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
            assert "load_config(" in sources
            continue
        assert re.search(rf"settings\.{field}\b", sources), f"no code reads settings.{field}"


HOOK = "https://hooks.slack.com/services/T000/B000/x"


def test_the_readme_config_example_is_valid(tmp_path: Path) -> None:
    """What the README shows users to copy must load, section by section."""
    import re

    readme = (Path(__file__).parents[1] / "README.md").read_text("utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    [example] = [b for b in blocks if b.startswith("stale-after:")]
    path = tmp_path / "ai-context.yml"
    path.write_text(example, encoding="utf-8")
    settings = load_config({"INPUT_CONFIG": str(path), "SLACK_WEBHOOK_URL": HOOK})
    settings.check_sections()
    assert settings.stale_after == timedelta(days=2) and settings.fail_on == "error"
    assert settings.actors.owner("cc-ariel-laptop") == "ariel"
    assert settings.stale.max_active_per_actor == 3
    assert settings.stale.stale_after == timedelta(days=2)  # the top-level setting
    assert settings.lease.ttl == timedelta(hours=2)
    assert settings.mirror.lists == ("901",)
    assert [str(r) for r in settings.digest.repositories] == ["acme/shop", "acme/infra"]


def test_each_section_is_parsed_once(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("actors: {cc-a: {owner: ariel}}\nlease: {ttl: 2h}\n", encoding="utf-8")
    settings = load_config({"INPUT_CONFIG": str(path)})
    assert settings.actors is settings.actors and settings.lease is settings.lease


def test_a_bad_section_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("digest: [a]\n", encoding="utf-8")
    settings = load_config({"INPUT_CONFIG": str(path)})  # top-level settings are fine
    with pytest.raises(
        ConfigError, match=f"{path}: digest: must be false \\(no digest\\) or a mapping"
    ):
        settings.check_sections()


@pytest.mark.parametrize("key", ["write-interval", "http-retries", "http-backoff", "now", "config"])
def test_internal_settings_are_no_keys_of_the_file(tmp_path: Path, key: str) -> None:
    path = tmp_path / "c.yml"
    path.write_text(f"{key}: 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"unknown setting '{key}'"):
        load_config({"INPUT_CONFIG": str(path)})


def test_the_known_list_offers_only_what_the_file_accepts(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("stale_aftr: 1d\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config({"INPUT_CONFIG": str(path)})
    known = str(info.value).split("the file takes: ")[1].split(", ")
    assert known == sorted((*FILE_SETTINGS, *SECTIONS))
    for hidden in ("github-token", "clickup-token", "write-interval", "http-retries", "now"):
        assert hidden not in known


def test_internal_settings_come_from_the_environment_only() -> None:
    settings = load_config({"AI_CONTEXT_HTTP_RETRIES": "2", "INPUT_HTTP-RETRIES": "9"})
    assert settings.http_retries == 2 and settings.source("http-retries") == (
        "environment variable AI_CONTEXT_HTTP_RETRIES"
    )


def test_every_key_the_file_accepts_is_documented() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text("utf-8")
    for key in (*FILE_SETTINGS, *SECTIONS):
        assert f"`{key}" in readme, f"{key} is accepted by the file but not in the README"
