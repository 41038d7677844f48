"""The Kubernetes bundle (deploy/k8s): every resource validates against the Kubernetes JSON schemas shipped in
the kubernetes-validate package, the pieces reference each other correctly, and the settings and commands stay
in step with docker-compose.yml."""

from __future__ import annotations

import copy
import re
from typing import Any

import kubernetes_validate
import pytest
import yaml

from app.config import Settings
from app.jobs.queue import QUEUE
from tests.support.paths import REPO_ROOT
from tests.support.relabel import relabel

BUNDLE = REPO_ROOT / "deploy" / "k8s"
KUBERNETES_VERSION = "1.30.0"
# Custom resources whose schemas are not part of Kubernetes itself; checked by the tests below instead.
CUSTOM_KINDS = {"ScaledObject"}


def kustomization() -> dict[str, Any]:
    return yaml.safe_load((BUNDLE / "kustomization.yaml").read_text())


def resources() -> list[dict[str, Any]]:
    documents = []
    for name in kustomization()["resources"]:
        documents += [d for d in yaml.safe_load_all((BUNDLE / name).read_text()) if d]
    return documents


def one(kind: str, name: str) -> dict[str, Any]:
    (found,) = [r for r in resources() if r["kind"] == kind and r["metadata"]["name"] == name]
    return found


def compose() -> dict[str, Any]:
    return yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]


def test_every_file_in_the_bundle_is_listed() -> None:
    listed = set(kustomization()["resources"])
    present = {p.name for p in BUNDLE.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present


# Custom resources (KEDA) are not in the Kubernetes schema: each has a test of its own.
@pytest.mark.parametrize("resource", [r for r in resources() if r["kind"] not in CUSTOM_KINDS],
                         ids=lambda r: f"{r['kind']}/{r['metadata']['name']}")
def test_resource_validates_against_the_kubernetes_schema(resource: dict[str, Any]) -> None:
    kubernetes_validate.validate(resource, KUBERNETES_VERSION, strict=True)


def test_workloads_have_requests_probes_and_settings() -> None:
    api, worker = one("Deployment", "dsx-api"), one("Deployment", "dsx-worker")
    job = one("Job", "dsx-migrate")
    for workload in (api, worker, job):
        (container,) = pod_spec(workload)["containers"]
        assert container["image"] in {i["name"] for i in kustomization()["images"]}
        assert {"cpu", "memory"} <= set(container["resources"]["requests"])
        sources = {next(iter(s.values()))["name"] for s in container["envFrom"]}
        assert sources == {"dsx-settings", "dsx-secrets"}
        assert pod_spec(workload)["securityContext"]["runAsNonRoot"] is True
    (api_container,) = pod_spec(api)["containers"]
    assert api_container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert api_container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    service = one("Service", "dsx-api")
    assert service["spec"]["selector"] == api["spec"]["selector"]["matchLabels"]


def test_pod_disruption_budgets_select_the_workloads() -> None:
    for name in ("dsx-api", "dsx-worker"):
        budget = one("PodDisruptionBudget", name)
        assert budget["spec"]["selector"] == one("Deployment", name)["spec"]["selector"]


def test_workers_scale_on_the_celery_queue_and_get_time_to_finish() -> None:
    scaled = one("ScaledObject", "dsx-worker")
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    assert scaled["spec"]["scaleTargetRef"]["name"] == "dsx-worker"
    assert 1 <= scaled["spec"]["minReplicaCount"] < scaled["spec"]["maxReplicaCount"]
    (trigger,) = scaled["spec"]["triggers"]
    settings = one("ConfigMap", "dsx-settings")["data"]
    broker = settings["DSX_BROKER_URL"].removeprefix("redis://")
    assert trigger["type"] == "redis" and trigger["metadata"]["listName"] == QUEUE
    assert f"{trigger['metadata']['address']}/{trigger['metadata']['databaseIndex']}" == broker
    soft_shutdown = float(settings["DSX_WORKER_SOFT_SHUTDOWN_S"])
    assert pod_spec(one("Deployment", "dsx-worker"))["terminationGracePeriodSeconds"] > soft_shutdown
    # SIGTERM must start Celery's soft shutdown (a plain warm shutdown is cut by the SIGKILL with no requeue).
    (container,) = pod_spec(one("Deployment", "dsx-worker"))["containers"]
    assert {"name": "REMAP_SIGTERM", "value": "SIGQUIT"} in container["env"]
    compose_worker = compose()["services"]["worker"]
    assert compose_worker["environment"]["REMAP_SIGTERM"] == "SIGQUIT"
    minutes = int(compose_worker["stop_grace_period"].removesuffix("m"))
    assert minutes * 60 > soft_shutdown


def test_settings_are_known_and_in_step_with_compose() -> None:
    config = one("ConfigMap", "dsx-settings")["data"]
    secret = one("Secret", "dsx-secrets")["stringData"]
    keys = set(config) | set(secret)
    known = {f"DSX_{name.upper()}" for name in Settings.model_fields} | {"PROMETHEUS_MULTIPROC_DIR"}
    assert keys <= known, keys - known
    compose_env = compose()["x-dsx-environment"]
    # The same settings in both bundles, except the graceful-stop budget that only the pod grace period needs.
    assert set(compose_env) == keys - {"DSX_WORKER_SOFT_SHUTDOWN_S"}
    for key in ("DSX_DATA_DIR", "PROMETHEUS_MULTIPROC_DIR", "DSX_WORKER_METRICS_PORT", "DSX_BLOB_STORE",
                "DSX_S3_BUCKET", "DSX_S3_REGION", "DSX_S3_ENDPOINT_URL", "DSX_BROKER_URL"):
        assert config[key] == compose_env[key], key


def test_images_and_commands_match_compose() -> None:
    services = compose()["services"]
    image = kustomization()["images"][0]
    assert services["api"]["image"].split(":")[0] == image["name"]
    for service, workload in (("api", "dsx-api"), ("worker", "dsx-worker")):
        (container,) = pod_spec(one("Deployment", workload))["containers"]
        assert container["command"] == services[service]["command"]
    (migrate,) = pod_spec(one("Job", "dsx-migrate"))["containers"]
    assert migrate["command"] == services["migrate"]["command"]
    # Compose builds the image the bundle deploys; the data dir mount is the pod's own, never shared.
    assert all("emptyDir" in v for w in ("dsx-api", "dsx-worker")
               for v in pod_spec(one("Deployment", w))["volumes"])




def test_api_and_workers_start_only_once_the_migrate_job_has_run() -> None:
    (migrate,) = pod_spec(one("Job", "dsx-migrate"))["containers"]
    assert migrate["command"] == ["dsx", "migrate"]
    for name in ("dsx-api", "dsx-worker"):
        (wait,) = pod_spec(one("Deployment", name))["initContainers"]
        assert wait["command"][:3] == ["dsx", "migrate", "--wait"] and float(wait["command"][3]) > 0
        # The same image and settings as the Job, so it waits for the very migrations the Job applies.
        assert (wait["image"], wait["envFrom"]) == (migrate["image"], migrate["envFrom"])
        assert {"cpu", "memory"} <= set(wait["resources"]["requests"])
    # Compose orders the same: api and worker start after migrate completed.
    services = compose()["services"]
    for service in ("api", "worker"):
        assert services[service]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


# --- Metrics: every replica is discovered and scraped on its own ----------------------------------------------

SCRAPE_CONFIG = REPO_ROOT / "deploy" / "prometheus" / "prometheus-kubernetes.yml"


def _sanitized(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def discovered_targets(workload: dict[str, Any], pod_ip: str) -> list[dict[str, str]]:
    """What Prometheus's pod role discovers for one pod of ``workload``: a target per declared container port."""
    template = workload["spec"]["template"]
    meta = {"__meta_kubernetes_namespace": "dsx", "__meta_kubernetes_pod_name": f"{workload['metadata']['name']}-0",
            "__meta_kubernetes_pod_ip": pod_ip}
    meta |= {f"__meta_kubernetes_pod_label_{_sanitized(k)}": v for k, v in template["metadata"]["labels"].items()}
    meta |= {f"__meta_kubernetes_pod_annotation_{_sanitized(k)}": v
             for k, v in template["metadata"].get("annotations", {}).items()}
    host = f"[{pod_ip}]" if ":" in pod_ip else pod_ip
    ports = [port for container in template["spec"]["containers"] for port in container.get("ports", [])]
    return [{**meta, "__address__": f"{host}:{port['containerPort']}",
             "__meta_kubernetes_pod_container_port_number": str(port["containerPort"])} for port in ports] or \
        [{**meta, "__address__": host}]


def scrape_targets(workload: dict[str, Any], pod_ip: str) -> list[dict[str, str]]:
    (job,) = yaml.safe_load(SCRAPE_CONFIG.read_text())["scrape_configs"]
    assert [sd["role"] for sd in job["kubernetes_sd_configs"]] == ["pod"]
    defaults = {"job": job["job_name"], "__metrics_path__": job.get("metrics_path", "/metrics")}
    targets = [relabel({**defaults, **labels}, job["relabel_configs"])
               for labels in discovered_targets(workload, pod_ip)]
    return [target for target in targets if target is not None]


@pytest.mark.parametrize("pod_ip", ["10.1.2.3", "fd00::17"])
def test_prometheus_discovers_every_api_and_worker_pod_on_its_metrics_port(pod_ip: str) -> None:
    worker_port = one("ConfigMap", "dsx-settings")["data"]["DSX_WORKER_METRICS_PORT"]
    host = f"[{pod_ip}]" if ":" in pod_ip else pod_ip
    for workload, job, port in (("dsx-api", "dsx-api", "8000"), ("dsx-worker", "dsx-worker", worker_port)):
        (target,) = scrape_targets(one("Deployment", workload), pod_ip)
        assert (target["job"], target["__address__"], target["__metrics_path__"]) == \
            (job, f"{host}:{port}", "/metrics"), target
        assert target["pod"] == f"{workload}-0" and target["namespace"] == "dsx"
        # The port Prometheus scrapes is one the container declares (the API's is the one its probes use).
        (container,) = pod_spec(one("Deployment", workload))["containers"]
        assert int(port) in {p["containerPort"] for p in container["ports"]}
    # Compose serves the worker's metrics on the same port.
    assert compose()["x-dsx-environment"]["DSX_WORKER_METRICS_PORT"] == worker_port


def test_pods_that_do_not_ask_to_be_scraped_are_not() -> None:
    migrate = one("Job", "dsx-migrate")
    assert "annotations" not in migrate["spec"]["template"]["metadata"]
    assert scrape_targets(migrate, "10.1.2.4") == []
    api = copy.deepcopy(one("Deployment", "dsx-api"))
    api["spec"]["template"]["metadata"]["annotations"]["prometheus.io/scrape"] = "false"
    assert scrape_targets(api, "10.1.2.5") == []
