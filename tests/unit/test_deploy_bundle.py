"""The container bundle: Dockerfile, .dockerignore, docker-compose.yml, and the example gateway and collector
configs. No Docker engine runs here, so the files are checked for the properties the service relies on, and the
compose file is also validated by a compose client when one is installed."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
from pathlib import PurePosixPath
from typing import Any

import pytest
import yaml

from tests.support.paths import REPO_ROOT
from tests.support.prerequisites import missing_prerequisite

DOCKERFILE = REPO_ROOT / "Dockerfile"
COMPOSE_FILE = REPO_ROOT / "docker-compose.yml"
DEPLOY = REPO_ROOT / "deploy"


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE_FILE.read_text())


def stages() -> list[list[str]]:
    """Dockerfile instructions (continuations joined), split into build stages."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    result: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            result.append([])
        if result:
            result[-1].append(line)
    return result


def dockerignore_excludes(path: str) -> bool:
    """Docker's rule: the last matching pattern wins; `!` re-includes; a directory pattern covers its contents."""
    excluded = False
    for raw in (REPO_ROOT / ".dockerignore").read_text().splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").rstrip("/")
        parts = PurePosixPath(path).parts
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if pattern.startswith("**/"):
            hit = any(fnmatch.fnmatch(part, pattern[3:]) for part in parts)
        else:
            hit = any(fnmatch.fnmatch(prefix, pattern) for prefix in prefixes)
        if hit:
            excluded = not negate
    return excluded


def volume_target(volumes: list[str | dict], source: str) -> str:
    for volume in volumes:
        if isinstance(volume, dict):  # long syntax
            if volume.get("source") == source:
                return volume["target"]
            continue
        parts = volume.split(":")
        if parts[0] == source:
            return parts[1]
    raise AssertionError(f"{source} is not mounted")


# --- Dockerfile ------------------------------------------------------------------------------------------

def test_dockerfile_is_multi_stage_and_runs_as_a_non_root_user() -> None:
    all_stages = stages()
    assert len(all_stages) >= 2, "build and runtime stages"
    runtime = all_stages[-1]
    users = [line.split(None, 1)[1] for line in runtime if line.upper().startswith("USER ")]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert any(line.upper().startswith("COPY --FROM=") for line in runtime), "runtime copies the built venv"
    assert not any(re.search(r"\b(gcc|build-essential)\b", line) for line in runtime), "no compilers at runtime"


def test_dockerfile_default_command_serves_the_api() -> None:
    runtime = stages()[-1]
    (cmd,) = [line for line in runtime if line.upper().startswith("CMD ")]
    assert '"uvicorn", "app.main:app"' in cmd
    assert any(line.upper().startswith("EXPOSE 8000") for line in runtime)
    env = " ".join(line for line in runtime if line.upper().startswith("ENV "))
    data_dir = re.search(r"DSX_DATA_DIR=(\S+)", env)
    metrics_dir = re.search(r"PROMETHEUS_MULTIPROC_DIR=(\S+)", env)
    assert data_dir and metrics_dir and metrics_dir[1].startswith(data_dir[1] + "/"), \
        "the metrics directory belongs in the container's own data dir"
    # dsx_build_info's revision comes from a build argument.
    assert "ARG DSX_BUILD_REVISION" in " ".join(runtime) and "DSX_BUILD_REVISION=${DSX_BUILD_REVISION}" in env


def test_everything_the_dockerfile_copies_is_in_the_build_context() -> None:
    for stage in stages():
        for line in stage:
            if not line.upper().startswith("COPY ") or "--from=" in line.lower():
                continue
            sources = line.split()[1:-1]
            for source in sources:
                assert (REPO_ROOT / source).exists(), f"COPY {source}: no such path"
                assert not dockerignore_excludes(source), f"COPY {source}: excluded by .dockerignore"


def test_dockerignore_keeps_local_state_out_of_the_image() -> None:
    for path in (".venv/bin/python", "var/dsx.db", "tests/conftest.py", ".git/HEAD", "app/__pycache__/x.pyc",
                 "bench/out/report.json", "dsx.egg-info/PKG-INFO"):
        assert dockerignore_excludes(path), f"{path} would be sent to the Docker daemon"
    for path in ("app/main.py", "workers/tasks.py", "migrations/env.py", "alembic.ini", "pyproject.toml"):
        assert not dockerignore_excludes(path), f"{path} is needed in the image"


# --- docker-compose.yml ----------------------------------------------------------------------------------

def test_compose_has_the_production_services() -> None:
    services = compose()["services"]
    assert {"api", "worker", "migrate", "postgres", "redis", "prometheus", "grafana"} <= set(services)
    assert services["worker"]["command"][:2] == ["dsx", "worker"]
    assert services["migrate"]["command"] == ["dsx", "migrate"]
    assert services["api"]["command"][:2] == ["uvicorn", "app.main:app"]
    for name in ("api", "worker"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_api_and_worker_share_urls_data_and_metrics_directory() -> None:
    services = compose()["services"]
    api, worker = services["api"], services["worker"]
    assert api["image"] == worker["image"] and api["build"] == worker["build"]
    for service in (api, worker):
        env = service["environment"]
        database_url = env["DSX_DATABASE_URL"]
        assert database_url.startswith("postgresql+psycopg://") and "@postgres:5432/" in database_url
        assert env["DSX_BROKER_URL"].startswith("redis://redis:6379/")
        data_target = volume_target(service["volumes"], "dsx-data")
        assert env["DSX_DATA_DIR"] == data_target
        assert env["PROMETHEUS_MULTIPROC_DIR"].startswith(data_target + "/")
    assert "dsx-data" in compose()["volumes"]


def test_each_container_has_its_own_metrics_directory_and_every_worker_is_scraped() -> None:
    """`docker compose up --scale worker=N`: each replica sums its own processes only, and Prometheus finds every
    replica through the compose DNS name of the worker service."""
    services = compose()["services"]
    for name in ("api", "worker"):
        metrics_dir = services[name]["environment"]["PROMETHEUS_MULTIPROC_DIR"]
        tmpfs = [v for v in services[name]["volumes"] if isinstance(v, dict) and v["type"] == "tmpfs"]
        assert [v["target"] for v in tmpfs] == [metrics_dir], "a per-container directory, empty at each start"
    worker = services["worker"]
    port = int(worker["environment"]["DSX_WORKER_METRICS_PORT"])
    assert str(port) in worker["expose"]
    scrape = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    (job,) = [job for job in scrape["scrape_configs"] if job["job_name"] == "dsx-worker"]
    (discovery,) = job["dns_sd_configs"]
    assert discovery["names"] == ["worker"] and discovery["type"] == "A" and discovery["port"] == port
    assert job.get("metrics_path", "/metrics") == "/metrics"


def test_uploads_go_to_the_object_store_service() -> None:
    """API and workers read PDFs from the S3-compatible service, whose bucket exists before anything starts."""
    from app.config import Settings

    services = compose()["services"]
    minio = services["minio"]
    assert ":" in minio["image"] and not minio["image"].endswith(":latest"), "pin the object store's image"
    for name in ("api", "worker"):
        env = services[name]["environment"]
        settings = Settings(**{k.removeprefix("DSX_").lower(): v for k, v in env.items() if k.startswith("DSX_")})
        assert settings.resolved_blob_store == "s3"
        host, port = settings.s3_endpoint_url.removeprefix("http://").split(":")
        assert host == "minio" and port == "9000"
        assert env["DSX_S3_ACCESS_KEY_ID"] in {minio["environment"]["MINIO_ROOT_USER"]}
        assert env["DSX_S3_SECRET_ACCESS_KEY"] == minio["environment"]["MINIO_ROOT_PASSWORD"]
        assert settings.s3_bucket in " ".join(services["minio-bucket"]["command"])
    assert services["migrate"]["depends_on"]["minio-bucket"]["condition"] == "service_completed_successfully"


def test_prometheus_and_grafana_are_wired_to_the_deploy_files() -> None:
    services = compose()["services"]
    prometheus_dir = volume_target(services["prometheus"]["volumes"], "./deploy/prometheus")
    assert f"--config.file={prometheus_dir}/prometheus.yml" in services["prometheus"]["command"]

    scrape = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    (dsx_job,) = [job for job in scrape["scrape_configs"] if job["job_name"] == "dsx-api"]
    (target,) = dsx_job["static_configs"][0]["targets"]
    host, port = target.split(":")
    command = services[host]["command"]
    assert command[command.index("--port") + 1] == port, "Prometheus scrapes another port than the API serves"

    grafana = services["grafana"]["volumes"]
    assert volume_target(grafana, "./deploy/grafana/provisioning") == "/etc/grafana/provisioning"
    dashboards_target = volume_target(grafana, "./deploy/grafana/dashboards")
    provider = yaml.safe_load((DEPLOY / "grafana" / "provisioning" / "dashboards" / "dsx.yml").read_text())
    assert provider["providers"][0]["options"]["path"] == dashboards_target
    datasource = yaml.safe_load((DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text())
    assert datasource["datasources"][0]["url"].endswith("prometheus:9090")
    for service in services.values():
        for volume in service.get("volumes", []):
            source = volume["source"] if isinstance(volume, dict) and "source" in volume else \
                volume.split(":")[0] if isinstance(volume, str) else ""
            if source.startswith("./"):
                assert (REPO_ROOT / source).exists(), f"bind mount {source} does not exist"


def test_compose_file_validates_with_a_compose_client() -> None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        command = [docker, "compose"]
    elif shutil.which("docker-compose"):
        command = [shutil.which("docker-compose") or "docker-compose"]
    else:
        missing_prerequisite("no compose client installed (Debian: apt-get install -y docker-compose)")
    result = subprocess.run([*command, "-f", str(COMPOSE_FILE), "config", "-q"], capture_output=True, text=True,
                            timeout=60, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


# --- Gateway and collector examples ----------------------------------------------------------------------

def _walk_keys(node: object) -> list[str]:
    if isinstance(node, dict):
        return [str(k) for k in node] + [k for v in node.values() for k in _walk_keys(v)]
    if isinstance(node, list):
        return [k for item in node for k in _walk_keys(item)]
    return []


@pytest.mark.parametrize("name", ["config.yaml", "dsx-models.yaml"])
def test_model_lists_never_constrain_the_response_format(name: str) -> None:
    config = yaml.safe_load((DEPLOY / "litellm" / name).read_text())
    entries = config["model_list"]
    assert entries and all(entry["model_name"] and entry["litellm_params"]["model"] for entry in entries)
    keys = _walk_keys(config)
    # A response-format constraint is the decoding mask that blocked tool calls: structured output only
    # ever comes through the submit_extraction tool.
    assert not {"response_format", "guided_json", "json_schema"} & set(keys)
    for entry in entries:
        for key, value in entry["litellm_params"].items():
            if key == "api_key" and value not in ("none", None):
                assert str(value).startswith("os.environ/"), f"{entry['model_name']}: secret written in the file"


def test_models_file_example_resolves_through_the_registry(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from app.agent.registry import resolve_model
    from app.config import reset_settings

    path = DEPLOY / "litellm" / "dsx-models.yaml"
    monkeypatch.setenv("DSX_MODELS_FILE", str(path))
    reset_settings()
    for entry in yaml.safe_load(path.read_text())["model_list"]:
        model = resolve_model(entry["model_name"])
        assert model.litellm_model == entry["litellm_params"]["model"]
        assert model.model_info.get("context_window"), "the router needs the deployment's context window"


def test_collector_pipelines_use_defined_components() -> None:
    config = yaml.safe_load((DEPLOY / "otel" / "collector.yaml").read_text())
    assert config["receivers"]["otlp"]["protocols"]["http"]["endpoint"].endswith(":4318")
    for pipeline in config["service"]["pipelines"].values():
        for kind in ("receivers", "processors", "exporters"):
            for component in pipeline.get(kind, []):
                assert component in config[kind], f"{kind[:-1]} {component} is used but not defined"
    for extension in config["service"].get("extensions", []):
        assert extension in config["extensions"]
    published = [port.split(":")[-1] for port in compose()["services"]["otel-collector"]["ports"]]
    assert "4318" in published


def test_the_llm_gateway_is_opt_in_pinned_private_and_keyed() -> None:
    services = compose()["services"]
    proxy, database = services["litellm"], services["litellm-postgres"]
    assert proxy["profiles"] == ["gateway"] and database["profiles"] == ["gateway"]
    image, _, tag = proxy["image"].rpartition(":")
    assert image and re.search(r"\d+\.\d+\.\d+", tag), f"{proxy['image']} is not pinned to a release"
    assert "ports" not in proxy and "ports" not in database, "the gateway is published beyond the compose network"
    assert proxy["environment"]["LITELLM_MASTER_KEY"] == "${LITELLM_MASTER_KEY:-}"  # no default key ...
    assert 'test -n "$$LITELLM_MASTER_KEY"' in " ".join(proxy["entrypoint"])  # ... and none means no start
    assert "@litellm-postgres:5432/" in proxy["environment"]["DATABASE_URL"]
    assert proxy["depends_on"]["litellm-postgres"]["condition"] == "service_healthy"
    config = yaml.safe_load((DEPLOY / "litellm" / "config.yaml").read_text())
    assert volume_target(proxy["volumes"], "./deploy/litellm/config.yaml") == \
        proxy["command"][proxy["command"].index("--config") + 1]
    groups = {entry["model_name"] for entry in config["model_list"]}
    for fallback in config["router_settings"]["fallbacks"]:
        ((primary, targets),) = fallback.items()
        assert primary in groups and set(targets) <= groups and primary not in targets
    assert config["general_settings"]["database_url"] == "os.environ/DATABASE_URL"
    for name in ("api", "worker"):
        assert "DSX_GATEWAY_URL" in services[name]["environment"]
