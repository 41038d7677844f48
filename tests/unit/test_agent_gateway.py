"""What dsx tells an LLM gateway and hears back, and a provider that rejects a capability dsx assumed."""

from __future__ import annotations

import pytest
import yaml

from app.agent import gateway, transport
from app.agent.registry import ModelConfig
from app.config import reset_settings
from app.dispatch import semconv
from tests.support.scripted_llm import ScriptedLLM, error, scripted_llm, submit, tool_call  # noqa: F401
from tests.unit.test_agent_loop import ANSWER, by_kind, env, run, spans_of  # noqa: F401 - fixtures and helpers


@pytest.fixture
def gateway_env(dsx_env, monkeypatch: pytest.MonkeyPatch, scripted_llm: ScriptedLLM):  # noqa: ANN001, ANN201, F811
    monkeypatch.setenv("DSX_GATEWAY_URL", scripted_llm.base_url)
    monkeypatch.setenv("DSX_GATEWAY_KEY", "sk-service")
    reset_settings()
    gateway.forget_model_info()
    yield monkeypatch
    gateway.forget_model_info()


def test_tenant_keys_from_settings_and_file_fall_back_to_the_service_key(gateway_env, tmp_path) -> None:  # noqa: ANN001
    keys_file = tmp_path / "keys.yaml"
    keys_file.write_text(yaml.safe_dump({"acme": "sk-acme-file", "globex": "sk-globex-file"}))
    gateway_env.setenv("DSX_GATEWAY_KEYS_FILE", str(keys_file))
    gateway_env.setenv("DSX_GATEWAY_KEYS", '{"globex": "sk-globex-env"}')
    reset_settings()
    assert gateway.key_for("acme") == "sk-acme-file"
    assert gateway.key_for("globex") == "sk-globex-env"  # the environment wins over the file
    assert gateway.key_for("initech") == "sk-service"
    assert gateway.key_for(None) == "sk-service"


def test_an_unreadable_keys_file_is_a_clear_error(gateway_env, tmp_path) -> None:  # noqa: ANN001
    bad = tmp_path / "keys.yaml"
    bad.write_text("- just\n- a list\n")
    gateway_env.setenv("DSX_GATEWAY_KEYS_FILE", str(bad))
    reset_settings()
    with pytest.raises(RuntimeError, match="DSX_GATEWAY_KEYS_FILE .* must map tenant names"):
        gateway.key_for("acme")


def test_gateway_model_info_sets_capabilities_and_is_cached(gateway_env, scripted_llm: ScriptedLLM) -> None:  # noqa: F811
    scripted_llm.gateway_models = [
        {"model_name": "big", "litellm_params": {"model": "openai/gpt-4o"},
         "model_info": {"max_input_tokens": 128000, "supports_tool_choice": True, "supports_vision": True}},
        {"model_name": "local", "litellm_params": {"model": "openai/llama"},
         "model_info": {"max_input_tokens": 8192, "supports_tool_choice": False}},
    ]
    big = transport.capabilities(ModelConfig("big", {"model": "big"}))
    local = transport.capabilities(ModelConfig("local", {"model": "local"}))
    unknown = transport.capabilities(ModelConfig("unknown", {"model": "unknown"}))
    assert (big.context_window, big.tool_choice, big.vision) == (128000, True, True)
    assert big.sources["context_window"] == "gateway"
    assert (local.context_window, local.tool_choice) == (8192, False)
    assert unknown.sources["context_window"] == "default"
    assert len(scripted_llm.info_requests) == 1  # one fetch served all three
    assert scripted_llm.info_requests[0].headers["authorization"] == "Bearer sk-service"


def test_an_unreachable_gateway_leaves_the_defaults(gateway_env) -> None:  # noqa: ANN001
    gateway_env.setenv("DSX_GATEWAY_URL", "http://127.0.0.1:9")
    reset_settings()
    assert transport.capabilities(ModelConfig("big", {"model": "big"})).sources["context_window"] == "default"


def test_litellm_response_headers_become_attributes() -> None:
    attributes = gateway.response_attributes({
        "llm_provider-x-litellm-model-id": "d1", "x-litellm-attempted-fallbacks": "2",
        "llm_provider-x-litellm-response-cost": "0.5", "x-litellm-overhead-duration-ms": "1.25",
        "x-litellm-attempted-retries": "not-a-number", "content-type": "application/json"})
    assert attributes == {semconv.DSX_GATEWAY_MODEL_ID: "d1", semconv.DSX_GATEWAY_ATTEMPTED_FALLBACKS: 2,
                          semconv.DSX_GATEWAY_RESPONSE_COST: 0.5, semconv.DSX_GATEWAY_OVERHEAD_MS: 1.25}


def test_the_span_names_the_model_as_requested_and_its_server(env, scripted_llm: ScriptedLLM) -> None:  # noqa: ANN001, F811
    scripted_llm.script(submit(ANSWER))
    root, chats, _ = by_kind(spans_of(run(scripted_llm)))
    assert root.attributes[semconv.GEN_AI_PROVIDER_NAME] == "openai"
    assert chats[0].name == "chat scripted"
    assert chats[0].attributes[semconv.GEN_AI_PROVIDER_NAME] == "openai"
    assert chats[0].attributes[semconv.SERVER_ADDRESS] == "127.0.0.1"
    assert chats[0].attributes[semconv.SERVER_PORT] == int(scripted_llm.base_url.rsplit(":", 1)[1].split("/")[0])


REJECTION = "Invalid tool_choice: 'required' is not supported by the chatml-function-calling format"


def test_a_rejected_tool_choice_is_retried_once_without_it_for_the_rest_of_the_run(
        env, scripted_llm: ScriptedLLM) -> None:  # noqa: ANN001, F811
    scripted_llm.script(error(500, REJECTION), tool_call("search_text", {"query": "supply voltage"}), submit(ANSWER))
    outcome = run(scripted_llm, supports_tool_choice=True)
    assert outcome.error_code is None
    assert [r.body.get("tool_choice") for r in scripted_llm.requests] == ["required", None, None]
    _, chats, _ = by_kind(spans_of(outcome))
    rejected = chats[0]
    assert rejected.attributes[semconv.DSX_LLM_CAPABILITY_REJECTED] == "tool_choice"
    assert rejected.attributes[semconv.ERROR_TYPE] == "InternalServerError"
    hint = next(e for e in rejected.events if e["name"] == "capability_rejected")["attributes"]["hint"]
    assert "DSX_MODELS_FILE" in hint and "supports_tool_choice: false" in hint
    assert all(c.attributes[semconv.DSX_LLM_WITHOUT] == ["tool_choice"] for c in chats[1:])


def test_a_provider_failing_without_the_capability_too_ends_with_the_setting_to_fix(
        env, scripted_llm: ScriptedLLM) -> None:  # noqa: ANN001, F811
    env.setenv("DSX_LLM_MAX_RETRIES", "0")
    reset_settings()
    scripted_llm.script(error(400, REJECTION), error(400, "model overloaded"))
    outcome = run(scripted_llm, supports_tool_choice=True)
    assert outcome.error_code == "provider_error"
    assert len(scripted_llm.requests) == 2  # one retry, not the whole budget
    assert "supports_tool_choice: false" in outcome.error_detail and "DSX_MODELS_FILE" in outcome.error_detail


def test_an_unrelated_400_is_not_retried(env, scripted_llm: ScriptedLLM) -> None:  # noqa: ANN001, F811
    scripted_llm.script(error(400, "context length exceeded"))
    outcome = run(scripted_llm, supports_tool_choice=True)
    assert outcome.error_code == "provider_error" and len(scripted_llm.requests) == 1


def test_rejected_reasoning_parameters_are_dropped_once(env, scripted_llm: ScriptedLLM) -> None:  # noqa: ANN001, F811
    model = scripted_llm.model_config()
    model.litellm_params["reasoning_effort"] = "low"
    exc = transport.ProviderCallError("Unrecognized request argument supplied: reasoning_effort",
                                      error_type="BadRequestError", http_status=400, retryable=False)
    assert transport.rejected_capability(exc, tool_choice_sent=True, reasoning_sent=True) == transport.REASONING
    assert transport.rejected_capability(exc, tool_choice_sent=True, reasoning_sent=False) is None
    arguments = transport.call_arguments(model, messages=[], tools=[], tool_choice=None, timeout_s=1, max_tokens=1,
                                         without=frozenset({transport.REASONING}))
    assert "reasoning_effort" not in arguments
