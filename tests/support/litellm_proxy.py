"""A real LiteLLM proxy process in front of an OpenAI-compatible server (the scripted one), for tests and benches.

The proxy comes from its own virtual environment (``make gateway-proxy``, pinned in
``deploy/litellm/install-proxy.sh``). ``litellm_proxy()`` writes a config with one model group routed to the
upstream server, a master key and no database, starts ``litellm`` on a free loopback port and yields once its
liveliness probe answers. A logging callback loaded by the proxy appends, per successful call, what the proxy
understood about it (trace id, end user, tags, spend-log metadata, model group) to a JSON-lines file: the
proxy's own view of the fields dsx sends, which the upstream never sees.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.support.live import free_port
from tests.support.paths import REPO_ROOT
from tests.support.processes import stop_group, wait_until

PROXY_VENV = Path(os.environ.get("DSX_GATEWAY_VENV", REPO_ROOT / ".venv-gateway"))
PROXY_BINARY = PROXY_VENV / "bin" / "litellm"
MASTER_KEY = "sk-proxy-master-test"
UPSTREAM_KEY = "sk-upstream-test"
# The proxy imports a lot at start-up; on a busy machine that takes a minute or more.
READY_TIMEOUT_S = 300.0

_RECORDER = '''
import json
import os

from litellm.integrations.custom_logger import CustomLogger


class CallRecorder(CustomLogger):
    """Appends what the proxy understood about each successful call to $DSX_PROXY_CALLS_FILE."""

    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
        payload = kwargs.get("standard_logging_object") or {}
        metadata = payload.get("metadata") or {}
        record = {"trace_id": payload.get("trace_id"), "end_user": payload.get("end_user"),
                  "request_tags": payload.get("request_tags"), "model_group": payload.get("model_group"),
                  "spend_logs_metadata": metadata.get("spend_logs_metadata")}
        with open(os.environ["DSX_PROXY_CALLS_FILE"], "a") as out:
            out.write(json.dumps(record, default=str) + "\\n")


recorder = CallRecorder()
'''


@dataclass
class RealProxy:
    base_url: str
    master_key: str
    calls_file: Path
    log_path: Path

    def calls(self) -> list[dict[str, Any]]:
        """What the proxy's logging callback recorded, one entry per successful call (written after the reply)."""
        if not self.calls_file.exists():
            return []
        return [json.loads(line) for line in self.calls_file.read_text().splitlines() if line.strip()]


def proxy_config(alias: str, upstream_base_url: str, upstream_model: str, **model_info: Any) -> dict[str, Any]:
    """A proxy config with one model group ``alias`` served by ``upstream_model`` at ``upstream_base_url``."""
    return {
        "model_list": [{"model_name": alias,
                        "litellm_params": {"model": f"openai/{upstream_model}", "api_base": upstream_base_url,
                                           "api_key": UPSTREAM_KEY},
                        "model_info": dict(model_info)}],
        # As in deploy/litellm/config.yaml: fail on a parameter the backend does not take, and leave retries to dsx.
        "litellm_settings": {"drop_params": False, "num_retries": 0, "request_timeout": 60,
                             "callbacks": ["call_recorder.recorder"]},
        "general_settings": {"master_key": MASTER_KEY},
    }


@contextmanager
def litellm_proxy(workdir: Path, alias: str, upstream_base_url: str, upstream_model: str,
                  **model_info: Any) -> Iterator[RealProxy]:
    """Run the real proxy (see the module docstring); the caller checks ``PROXY_BINARY`` exists first."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "config.yaml"
    config.write_text(yaml.safe_dump(proxy_config(alias, upstream_base_url, upstream_model, **model_info)))
    # The proxy resolves callback modules relative to its config file.
    (workdir / "call_recorder.py").write_text(_RECORDER)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    calls_file = workdir / "calls.jsonl"
    log_path = workdir / "proxy.log"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "DSX_PROXY_CALLS_FILE": str(calls_file),
           "PYTHONPATH": str(workdir)}
    with log_path.open("wb") as log:
        process = subprocess.Popen([str(PROXY_BINARY), "--config", str(config), "--host", "127.0.0.1",
                                    "--port", str(port)], cwd=workdir, env=env, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            def alive() -> bool:
                if process.poll() is not None:
                    raise RuntimeError(f"the LiteLLM proxy exited during start-up:\n{log_path.read_text()[-3000:]}")
                try:
                    return httpx.get(f"{base}/health/liveliness", timeout=2).status_code == 200
                except httpx.TransportError:
                    return False

            wait_until(alive, timeout_s=READY_TIMEOUT_S, interval_s=0.5, what="the LiteLLM proxy to start")
            yield RealProxy(base_url=base, master_key=MASTER_KEY, calls_file=calls_file, log_path=log_path)
        finally:
            stop_group(process)
