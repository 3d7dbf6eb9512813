"""guardrail.config: defaults, YAML, GUARDRAIL_* env, overrides, cross-field checks."""

import pytest

from guardrail.config import (GuardrailConfig, PolicyConfig, UpstreamConfig, env_overrides,
                              load_config)
from guardrail.types import Action


def test_defaults_are_safe():
    c = GuardrailConfig()
    assert c.policy.hold is True
    assert c.policy.action is Action.REDACT
    assert c.verification.on_error == "closed"
    assert c.upstream.forward_client_key is False
    assert c.limits.allow_hold_off is False


def test_every_field_is_documented():
    def walk(model):
        for name, f in model.model_fields.items():
            assert f.description, f"{model.__name__}.{name} has no docstring"
            ann = f.annotation
            if isinstance(ann, type) and hasattr(ann, "model_fields"):
                walk(ann)
    for section in GuardrailConfig.model_fields.values():
        if hasattr(section.annotation, "model_fields"):
            walk(section.annotation)


def test_yaml_then_env_then_overrides(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("upstream:\n  base_url: http://yaml:1/v1\n  read_timeout_s: 9\n"
                    "policy:\n  action: annotate\n")
    env = {"GUARDRAIL_UPSTREAM__BASE_URL": "http://env:2/v1",
           "GUARDRAIL_POLICY__REGENERATE__MAX_ATTEMPTS": "4",
           "GUARDRAIL_VERIFICATION__FINAL_PASS": "false",
           "UNRELATED": "x", "GUARDRAIL_NOSECTION": "ignored"}
    c = load_config(path, env=env, overrides={"server.port": 9001, "detector.model": None})
    assert c.upstream.base_url == "http://env:2/v1"
    assert c.upstream.read_timeout_s == 9
    assert c.policy.action is Action.ANNOTATE
    assert c.policy.regenerate.max_attempts == 4
    assert c.verification.final_pass is False
    assert c.server.port == 9001
    assert c.detector.model is None


def test_env_overrides_parse_scalars():
    assert env_overrides({"GUARDRAIL_A__B": "0.5", "GUARDRAIL_A__C": "[x, y]"}) == \
        {"a": {"b": 0.5, "c": ["x", "y"]}}


def test_secrets_from_the_environment_are_read_as_written():
    """An API key of digits is a key, "00123" is not 83 (YAML's octal), "null" is not no
    key; a list of tenant keys keeps each as written (``deploy/k8s`` sets both)."""
    c = load_config(env={"GUARDRAIL_UPSTREAM__API_KEY": "12345678",
                         "GUARDRAIL_TENANTS__ACME__API_KEYS": "[00123, sk-b, 'null']"})
    assert c.upstream.api_key.get_secret_value() == "12345678"
    assert [k.get_secret_value() for k in c.tenants["acme"].api_keys] == \
        ["00123", "sk-b", "null"]
    assert load_config(env={"GUARDRAIL_UPSTREAM__API_KEY": "null"}
                       ).upstream.api_key.get_secret_value() == "null"


def test_text_settings_from_the_environment_are_read_as_written():
    """A text field takes the variable as written: YAML would make "::" a mapping,
    "[redacted]" a list, "2024" and "1.5" numbers, and refuse them all."""
    prompt = "Rewrite: {sentence} from {context} for {question} after {answer_so_far}"
    c = load_config(env={"GUARDRAIL_SERVER__HOST": "::",
                         "GUARDRAIL_POLICY__REDACT_MARKER": "[redacted]",
                         "GUARDRAIL_CACHE__KEY_PREFIX": "2024",
                         "GUARDRAIL_POLICY__REGENERATE__MODEL": "1.5",
                         "GUARDRAIL_POLICY__REGENERATE__PROMPT": prompt,
                         "GUARDRAIL_SERVER__PORT": "9000",
                         "GUARDRAIL_TENANTS__ACME__API_KEYS": "sk-one"})
    assert (c.server.host, c.policy.redact_marker, c.cache.key_prefix) == \
        ("::", "[redacted]", "2024")
    assert (c.policy.regenerate.model, c.policy.regenerate.prompt) == ("1.5", prompt)
    assert c.server.port == 9000  # a number is still read as one
    assert [k.get_secret_value() for k in c.tenants["acme"].api_keys] == ["sk-one"]


def test_an_environment_tenant_is_the_files_whatever_its_case(tmp_path):
    """Variable names are upper case: GUARDRAIL_TENANTS__ACMECORP__API_KEYS gives its
    keys to the file's "AcmeCorp" (and its policy), not to a second tenant."""
    path = tmp_path / "g.yaml"
    path.write_text("tenants:\n  AcmeCorp:\n    policy: {action: block}\n")
    c = load_config(path, env={"GUARDRAIL_TENANTS__ACMECORP__API_KEYS": "[sk-acme]"})
    assert list(c.tenants) == ["AcmeCorp"] and c.tenant_for_key("sk-acme") == "AcmeCorp"


def test_config_errors_name_the_field_never_its_value(tmp_path):
    """One line; the field and what is wrong; no key, password or pydantic link."""
    cases = [
        ({"GUARDRAIL_UPSTREAM__API_KEY": "x", "GUARDRAIL_CACHE__REDIS_URL":
          "redis//:S3cretPW@redis"}, "cache.redis_url must start with"),
        ({"GUARDRAIL_UPSTREAM__BASE_URL": "ftp://svc:S3cretPW@llm/v1"},
         "upstream.base_url must start with http"),
        ({"GUARDRAIL_TENANTS__ACME__API_KEYS": "[[S3cretPW]]"}, "tenants.acme.api_keys.0"),
    ]
    for env, what in cases:
        with pytest.raises(ValueError) as e:
            load_config(env=env)
        said = str(e.value)
        assert what in said and "S3cretPW" not in said, said
        assert "\n" not in said and "pydantic" not in said and "input_value" not in said
    path = tmp_path / "g.yaml"
    path.write_text("upstream:\n  api_key: 123456789\n")
    with pytest.raises(ValueError) as e:
        load_config(path, env={})
    assert str(e.value) == "upstream.api_key: Input should be a valid string"


def test_a_section_that_is_no_mapping_stays_an_error(tmp_path):
    """A variable or a flag setting a field of it does not replace it quietly."""
    path = tmp_path / "g.yaml"
    path.write_text("server: [1, 2]\n")
    for env, overrides in (({"GUARDRAIL_SERVER__PORT": "9000"}, {}),
                           ({}, {"server.port": 9000})):
        with pytest.raises(ValueError, match="'server' must be a mapping, got list"):
            load_config(path, env=env, overrides=overrides)
    path.write_text("server:\n")  # empty: the variable fills it
    assert load_config(path, env={"GUARDRAIL_SERVER__PORT": "9000"}).server.port == 9000


def test_a_key_given_twice_in_the_file_is_an_error(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("server:\n  port: 1\n  port: 2\n")
    with pytest.raises(ValueError, match=r"'port' is given twice \(line 3, column 3\)"):
        load_config(path, env={})


def test_unknown_key_is_an_error(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("upstream:\n  baseurl: http://x\n")
    with pytest.raises(ValueError, match="baseurl"):
        load_config(path, env={})


def test_bad_files(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        load_config(tmp_path / "missing.yaml", env={})
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1,\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        load_config(bad, env={})
    bad.write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="must hold a mapping"):
        load_config(bad, env={})


@pytest.mark.parametrize("kwargs, message", [
    ({"hold": False, "action": "redact"}, "hold=false cannot be combined with action=redact"),
    ({"hold": False, "action": "regenerate"}, "action=regenerate"),
    ({"hold": False, "action": "annotate", "by_basis": {"value_changed": "redact"}},
     "action=redact"),
    ({"by_basis": {"value_guessed": "annotate"}}, "unknown basis 'value_guessed'"),
    ({"by_basis": {"tool.value_missing": "annotate"}}, "after 'structured.' or 'prose.'"),
])
def test_hold_off_needs_a_non_rewriting_action(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PolicyConfig(**kwargs)
    assert PolicyConfig(hold=False, action="annotate").hold is False
    assert PolicyConfig(by_basis={"structured.value_missing": "annotate"}).by_basis == {
        "structured.value_missing": "annotate"}


def test_cross_field_errors_name_the_values():
    with pytest.raises(ValueError, match=r"min_threshold \(0.8\) exceeds.*\(0.2\)"):
        GuardrailConfig.model_validate({"limits": {"min_threshold": 0.8, "max_threshold": 0.2}})
    with pytest.raises(ValueError, match=r"policy.threshold \(0.9\) lies outside"):
        GuardrailConfig.model_validate({"policy": {"threshold": 0.9},
                                        "limits": {"max_threshold": 0.7}})
    with pytest.raises(ValueError, match="must start with http"):
        UpstreamConfig(base_url="llm:8000")
    with pytest.raises(ValueError, match="max_keepalive_connections"):
        UpstreamConfig(max_connections=2, max_keepalive_connections=5)
    with pytest.raises(ValueError, match="share an API key"):
        GuardrailConfig.model_validate({"tenants": {"a": {"api_keys": ["k"]},
                                                    "b": {"api_keys": ["k"]}}})
    with pytest.raises(ValueError, match="require_api_key"):
        GuardrailConfig.model_validate({"server": {"require_api_key": True}})
    with pytest.raises(ValueError, match=r"tenants.t: policy.hold=false"):
        GuardrailConfig.model_validate({"tenants": {"t": {"policy": {"hold": False}}}})


def test_regenerate_hook_and_prompt_validation():
    ok = {"policy": {"regenerate": {"hook": "mymod.sub:rewrite"}}}
    assert GuardrailConfig.model_validate(ok).policy.regenerate.hook == "mymod.sub:rewrite"
    GuardrailConfig.model_validate({"policy": {"regenerate": {"hook": "https://h/x"}}})
    with pytest.raises(ValueError, match="'module:function'"):
        GuardrailConfig.model_validate({"policy": {"regenerate": {"hook": "nocolon"}}})
    with pytest.raises(ValueError, match=r"lacks the \{sentence\} field"):
        GuardrailConfig.model_validate({"policy": {"regenerate": {
            "prompt": "{context} {question} {answer_so_far}"}}})


def test_tenant_lookup_and_secret_key_not_printed():
    c = GuardrailConfig.model_validate({"tenants": {"acme": {"api_keys": ["sk-acme"]}},
                                        "upstream": {"api_key": "sk-upstream"}})
    assert c.tenant_for_key("sk-acme") == "acme"
    assert c.tenant_for_key("other") is None and c.tenant_for_key(None) is None
    assert "sk-upstream" not in repr(c) and "sk-acme" not in repr(c)


def test_scheduler_and_cache_sections_defaults_and_env():
    c = GuardrailConfig()
    assert c.verification.engine == "scheduler"
    s = c.scheduler
    assert (s.left_context(False)[0], s.in_flight_exit, s.depth_ladder) == (600, None, (6, 64))
    assert c.cache.redis_url is None and c.server.overload_status == 503
    env = {"GUARDRAIL_CACHE__REDIS_URL": "redis://127.0.0.1:6379/2",
           "GUARDRAIL_SCHEDULER__MAX_WAIT_MS": "2.5",
           "GUARDRAIL_SCHEDULER__DEPTH_LADDER": "[8, 32]",
           "GUARDRAIL_VERIFICATION__ENGINE": "local"}
    c = load_config(env=env, overrides={"cache.redis_url": None})
    assert c.cache.redis_url == "redis://127.0.0.1:6379/2"
    assert (c.scheduler.max_wait_ms, c.scheduler.depth_ladder) == (2.5, (8, 32))
    assert c.verification.engine == "local"
    assert load_config(env=env, overrides={"cache.redis_url": "redis://r:1/0"}).cache.redis_url \
        == "redis://r:1/0"  # the --redis-url flag wins
    with pytest.raises(ValueError, match="cache.redis_url must start with redis://"):
        load_config(env={"GUARDRAIL_CACHE__REDIS_URL": "http://x"})
    with pytest.raises(ValueError, match="depth_ladder must be strictly increasing"):
        GuardrailConfig.model_validate({"scheduler": {"depth_ladder": [64, 8]}})


def test_window_selection_per_priority_defaults_and_validation():
    s = GuardrailConfig().scheduler
    assert (s.in_flight_windows, s.in_flight_top_k, s.final_windows, s.final_top_k,
            s.final_sentence_windows) == ("blocks", 3, "own", 8, 1)
    c = load_config(env={"GUARDRAIL_SCHEDULER__IN_FLIGHT_WINDOWS": "all",
                         "GUARDRAIL_SCHEDULER__FINAL_TOP_K": "4"},
                    overrides={"scheduler.final_windows": "topk"})
    assert (c.scheduler.in_flight_windows, c.scheduler.final_windows,
            c.scheduler.final_top_k) == ("all", "topk", 4)
    for field in ("in_flight_top_k", "final_top_k", "final_sentence_windows"):
        with pytest.raises(ValueError, match=field):
            GuardrailConfig.model_validate({"scheduler": {field: 0}})
    with pytest.raises(ValueError, match="in_flight_windows"):
        GuardrailConfig.model_validate({"scheduler": {"in_flight_windows": "truncate"}})


def test_old_verification_keys_are_refused():
    """``verification.shallow_exit_layer`` & co. live only in the scheduler section."""
    for key in ("shallow_exit_layer", "left_context_chars", "check_timeout_s",
                "max_pending_checks"):
        with pytest.raises(ValueError, match=key):
            GuardrailConfig.model_validate({"verification": {key: 5}})


def test_tenant_keys_and_the_reserved_default_tenant():
    assert GuardrailConfig().keys_required is False
    tenants = {"acme": {"api_keys": ["sk-acme"]}}
    assert GuardrailConfig.model_validate({"tenants": tenants}).keys_required is True
    assert GuardrailConfig.model_validate({"tenants": tenants, "server": {
        "require_api_key": False}}).keys_required is False
    policy_only = {"t": {"policy": {"action": "annotate"}}}
    assert GuardrailConfig.model_validate({"tenants": policy_only}).keys_required is False
    with pytest.raises(ValueError, match="tenants.default: the name is reserved"):
        GuardrailConfig.model_validate({"tenants": {"default": {"api_keys": ["k"]}}})
