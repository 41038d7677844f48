"""Latency a real LiteLLM proxy adds to each model call. Run from the repository root after ``make gateway-proxy``:
``.venv/bin/python bench/gateway.py``.

The same chat completion (one tool offered, ``tool_choice="required"``, the scripted server answering at once with
one tool call) is made N times through ``app.agent.transport.chat`` straight to the scripted server and N times
through the proxy in front of it, interleaved so both see the same machine load. Prints p50/p90 per call of each,
the added latency (proxy p50 - direct p50, and the median of the per-pair differences) and the ratio proxy/direct.

Options: ``--calls N`` (default 50), ``--warmup N`` (default 5, not counted).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
for _key in [k for k in os.environ if k.startswith("DSX_") and not k.startswith("DSX_TEST_")]:
    del os.environ[_key]
os.environ["DSX_DATA_DIR"] = tempfile.mkdtemp(prefix="dsx-bench-gateway-")

from app.agent import transport  # noqa: E402
from app.agent.registry import ModelConfig  # noqa: E402
from app.config import reset_settings  # noqa: E402
from tests.support.litellm_proxy import PROXY_BINARY, litellm_proxy  # noqa: E402
from tests.support.scripted_llm import ScriptedLLM, tool_call  # noqa: E402

ALIAS = "bench-group"
UPSTREAM_MODEL = "bench-model"
TOOLS = [{"type": "function", "function": {
    "name": "search_text", "description": "Search the datasheet text.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}]
MESSAGES = [{"role": "system", "content": "Read the datasheet with the tools."},
            {"role": "user", "content": "What is the supply voltage?"}]


def _call_ms(model: ModelConfig) -> float:
    result = transport.chat(model, messages=MESSAGES, tools=TOOLS, tool_choice="required", timeout_s=60,
                            max_tokens=256, identity={})
    if not result.tool_calls:
        raise RuntimeError(f"no tool call came back through {model.alias}")
    return result.latency_ms


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    if not PROXY_BINARY.exists():
        sys.exit(f"the LiteLLM proxy is not installed ({PROXY_BINARY}); run `make gateway-proxy` first")

    with ScriptedLLM(model_name=UPSTREAM_MODEL) as upstream, tempfile.TemporaryDirectory() as workdir:
        upstream.always(tool_call("search_text", {"query": "supply voltage"}))
        with litellm_proxy(Path(workdir), ALIAS, upstream.base_url, UPSTREAM_MODEL,
                           supports_tool_choice=True) as proxy:
            os.environ.update({"DSX_GATEWAY_URL": proxy.base_url, "DSX_GATEWAY_KEY": proxy.master_key})
            reset_settings()
            direct = upstream.model_config(alias="direct")
            via_proxy = ModelConfig(alias=ALIAS, litellm_params={"model": ALIAS})
            for _ in range(args.warmup):
                _call_ms(direct)
                _call_ms(via_proxy)
            pairs = [(_call_ms(direct), _call_ms(via_proxy)) for _ in range(args.calls)]

    direct_ms = [d for d, _ in pairs]
    proxy_ms = [p for _, p in pairs]
    print(f"{args.calls} chat completions with one tool call each, interleaved (after {args.warmup} warm-up pairs)")
    for name, values in (("direct", direct_ms), ("through proxy", proxy_ms)):
        print(f"  {name:<14} p50 {_percentile(values, 0.5):7.1f} ms   p90 {_percentile(values, 0.9):7.1f} ms")
    added_p50 = _percentile(proxy_ms, 0.5) - _percentile(direct_ms, 0.5)
    added_pairs = statistics.median(p - d for d, p in pairs)
    print(f"  added per call: p50 difference {added_p50:.1f} ms, median per-pair difference {added_pairs:.1f} ms")
    print(f"  ratio proxy/direct (p50): {_percentile(proxy_ms, 0.5) / _percentile(direct_ms, 0.5):.2f}")


if __name__ == "__main__":
    main()
