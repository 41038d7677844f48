"""route(): single-pass when the document fits the model's context and page cap, agentic otherwise, with
figures from the models file, LiteLLM's model map or conservative defaults."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from app.agent.engines import route
from app.agent.registry import ModelConfig
from app.agent.transport import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_PDF_PAGES, capabilities
from app.config import OFFLINE_MODEL, reset_settings
from tests.support.documents import make_index

OFFLINE = ModelConfig(alias=OFFLINE_MODEL, litellm_params={"model": OFFLINE_MODEL})


@pytest.fixture(autouse=True)
def _settings(tmp_path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:  # noqa: ANN001
    """Default settings in a temporary data dir (capabilities read the output cap from Settings)."""
    for key in [k for k in os.environ if k.startswith("DSX_") and k != "DSX_SHARED_DIR"]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("DSX_DATA_DIR", str(tmp_path))
    reset_settings()
    yield
    reset_settings()


def vllm(**model_info: object) -> ModelConfig:
    return ModelConfig(alias="qwen", litellm_params={"model": "openai/qwen", "api_base": "http://127.0.0.1:1/v1"},
                       model_info=dict(model_info))


def pages(count: int, chars_per_page: int = 3000, text_layer: str = "ok"):  # noqa: ANN201
    return make_index(["x" * chars_per_page] * count, text_layer=text_layer)


def test_small_document_goes_single_pass_on_the_text_layer() -> None:
    decision = route(pages(20), vllm(context_window=128_000))
    assert (decision.engine, decision.document_mode) == ("single-pass", "text")
    # The text layer plus the document's framing (page markers), as sent.
    assert "fit" in decision.reason and 20 * 3000 // 4 < decision.estimated_tokens - 2_000 < 20 * 3100 // 4


def test_a_document_over_the_context_window_goes_agentic() -> None:
    decision = route(pages(60), vllm(context_window=32_000))
    assert decision.engine == "agentic"
    assert "32000-token context window (config)" in decision.reason


def test_a_document_over_the_page_cap_goes_agentic_even_if_it_is_short() -> None:
    decision = route(pages(397, chars_per_page=10), vllm(context_window=1_000_000, max_pdf_pages=100))
    assert decision.engine == "agentic" and "397 pages exceed the page cap of 100" in decision.reason


def test_unknown_models_get_conservative_defaults() -> None:
    caps = capabilities(vllm())
    assert caps.context_window == DEFAULT_CONTEXT_WINDOW and caps.max_pdf_pages == DEFAULT_MAX_PDF_PAGES
    assert caps.sources["context_window"] == "default" and caps.tool_choice is True
    assert route(pages(40), vllm()).engine == "agentic"  # 32k default: 30k tokens of text do not fit with room


def test_litellm_model_map_is_used_and_the_models_file_overrides_it() -> None:
    known = ModelConfig(alias="gpt", litellm_params={"model": "gpt-4o"})
    caps = capabilities(known)
    assert caps.context_window == 128_000 and caps.sources["context_window"] == "litellm"
    assert caps.pdf_input is True
    assert route(pages(40), known).engine == "single-pass"
    assert route(pages(40), known).document_mode == "pdf"  # the native PDF block where the provider takes one
    smaller = ModelConfig(alias="gpt", litellm_params={"model": "gpt-4o"}, model_info={"context_window": 16_000})
    assert capabilities(smaller).sources["context_window"] == "config"
    assert route(pages(40), smaller).engine == "agentic"


def test_offline_reader_goes_agentic_unless_single_pass_is_requested() -> None:
    assert route(pages(2), OFFLINE).engine == "agentic"
    forced = route(pages(2), OFFLINE, "single-pass")
    assert (forced.engine, forced.document_mode, forced.reason) == ("single-pass", "text", "requested")


def test_scanned_documents_need_image_or_pdf_input_for_single_pass() -> None:
    scanned = pages(3, chars_per_page=0, text_layer="none")
    assert route(scanned, vllm(context_window=128_000)).engine == "agentic"
    decision = route(scanned, vllm(context_window=128_000, supports_vision=True))
    assert (decision.engine, decision.document_mode) == ("single-pass", "images")


def test_an_explicit_engine_is_honoured() -> None:
    assert route(pages(500), vllm(), "single-pass").engine == "single-pass"
    assert route(pages(1), vllm(context_window=128_000), "agentic").engine == "agentic"
    with pytest.raises(ValueError):
        route(pages(1), vllm(), "fast")


def test_reasoning_expectation_comes_from_configuration() -> None:
    assert capabilities(vllm(reasoning=True)).reasoning_expected is True
    assert capabilities(vllm()).reasoning_expected is False
    assert capabilities(OFFLINE).reasoning_expected is False


def test_the_output_cap_is_bounded_by_settings_unless_the_models_file_sets_one() -> None:
    from app.config import get_settings

    default = get_settings().llm_max_output_tokens
    assert capabilities(ModelConfig(alias="gpt", litellm_params={"model": "gpt-4o"})).max_output_tokens == default
    assert capabilities(vllm(max_output_tokens=32_000)).max_output_tokens == 32_000
