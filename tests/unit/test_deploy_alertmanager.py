"""Alertmanager in the deploy bundle: the config passes amtool, every Prometheus alert reaches the receiver its
severity calls for, compose wires it to Prometheus, and a real Alertmanager delivers posted alerts to webhooks,
inhibits the warnings a critical alert makes redundant, pings the heartbeat and counts failed deliveries. A real
Prometheus on the repository's config and rules shows the alert path watched end to end."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath
from typing import Any

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.support.paths import REPO_ROOT
from tests.support.prerequisites import missing_prerequisite
from tests.support.processes import stop_group, wait_until

DEPLOY = REPO_ROOT / "deploy"
CONFIG_FILE = DEPLOY / "alertmanager" / "alertmanager.yml"
EXAMPLE_SECRETS = DEPLOY / "alertmanager" / "secrets.example"
ALERTS_FILE = DEPLOY / "prometheus" / "rules" / "dsx-alerts.yml"
PROMETHEUS_FILE = DEPLOY / "prometheus" / "prometheus.yml"
COMPOSE_FILE = REPO_ROOT / "docker-compose.yml"
# Where compose mounts the receiver URL files inside the container.
CONTAINER_SECRETS = PurePosixPath("/etc/alertmanager/secrets")

# A compose volume `source:target[:mode]`, where the source may be `${VARIABLE:-default}`.
VOLUME = re.compile(r"(?P<source>\$\{[^}]*\}|[^:]+):(?P<target>[^:]+)(?::(?P<mode>[a-z]+))?")

# Who must hear about each severity. A rule with a severity missing here fails the routing test until someone
# decides where it goes. `none` is the dead man's switch DsxWatchdog, whose receiver is an external heartbeat.
HEARTBEAT_RECEIVER = "dsx-heartbeat"
RECEIVER_FOR_SEVERITY = {"critical": "dsx-pager", "warning": "dsx-default", "none": HEARTBEAT_RECEIVER}
# Receiver fields that hold credentials; each has a `*_file` twin.
SECRET_FIELDS = {"url", "api_url", "routing_key", "service_key", "auth_password", "auth_secret", "bot_token",
                 "api_key", "token"}
# Webhook `url_file` arrived in Alertmanager 0.26; Debian bookworm ships 0.25 (the compose image is newer).
WEBHOOK_URL_FILE_SINCE = (0, 26)


def required_tool(name: str, package: str = "prometheus-alertmanager") -> str:
    """A binary of a Debian package (skipped without it on a developer machine, failed in CI)."""
    path = shutil.which(name)
    if path is None:
        missing_prerequisite(f"{name} is not installed (Debian: apt-get install -y {package})")
    return path


def amtool() -> str:
    return required_tool("amtool")


def alertmanager_binary() -> str:
    return required_tool("prometheus-alertmanager")


def prometheus_binary() -> str:
    return required_tool("prometheus", package="prometheus")


def installed_version(binary: str) -> tuple[int, int]:
    output = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    found = re.search(r"version (\d+)\.(\d+)", output.stdout + output.stderr)
    assert found, output.stdout + output.stderr
    return int(found[1]), int(found[2])


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def compose_services() -> dict[str, Any]:
    return load_yaml(COMPOSE_FILE)["services"]


def alert_rules() -> list[dict[str, Any]]:
    return [rule for group in load_yaml(ALERTS_FILE)["groups"] for rule in group["rules"] if "alert" in rule]


def rule_named(name: str) -> dict[str, Any]:
    return next(rule for rule in alert_rules() if rule["alert"] == name)


def alert_labels(rule: dict[str, Any]) -> dict[str, str]:
    """The labels Prometheus sends for this rule: its external labels, the rule's labels and the alert name."""
    external = load_yaml(PROMETHEUS_FILE)["global"].get("external_labels", {})
    return {**external, **rule.get("labels", {}), "alertname": rule["alert"]}


def webhook_configs(config: dict[str, Any]) -> list[dict[str, Any]]:
    return [hook for receiver in config["receivers"] for hook in receiver.get("webhook_configs", [])]


def with_secrets_dir(config: dict[str, Any], secrets_dir: Path, version: tuple[int, int]) -> dict[str, Any]:
    """The config with its URL files read from `secrets_dir` instead of the container's mount. An Alertmanager
    older than webhook `url_file` gets each file's URL inline; the rest of the config is left as it is."""
    for hook in webhook_configs(config):
        source = secrets_dir / PurePosixPath(hook["url_file"]).relative_to(CONTAINER_SECRETS)
        if version >= WEBHOOK_URL_FILE_SINCE:
            hook["url_file"] = str(source)
        else:
            del hook["url_file"]
            hook["url"] = source.read_text().strip()
    return config


def duration_seconds(text: str) -> int:
    """An Alertmanager duration such as `1h30m` in seconds."""
    seconds = {"s": 1, "m": 60, "h": 3600}
    return sum(int(n) * seconds[unit] for n, unit in re.findall(r"(\d+)([smh])", text))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- Static checks ---------------------------------------------------------------------------------------

def test_config_passes_amtool_check_config(tmp_path: Path) -> None:
    tool = amtool()
    version = installed_version(tool)
    config_path = CONFIG_FILE
    if version < WEBHOOK_URL_FILE_SINCE:
        config_path = tmp_path / "alertmanager.yml"
        config = with_secrets_dir(load_yaml(CONFIG_FILE), EXAMPLE_SECRETS, version)
        config_path.write_text(yaml.safe_dump(config))
    result = subprocess.run([tool, "check-config", str(config_path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout, result.stdout + result.stderr


def routed_receivers(config_path: Path, labels: dict[str, str]) -> str:
    result = subprocess.run([amtool(), "config", "routes", "test", f"--config.file={config_path}",
                             *(f"{name}={value}" for name, value in labels.items())],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip()


@pytest.fixture(scope="module")
def routable_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("alertmanager") / "alertmanager.yml"
    config = with_secrets_dir(load_yaml(CONFIG_FILE), EXAMPLE_SECRETS, installed_version(amtool()))
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("rule", alert_rules(), ids=lambda rule: rule["alert"])
def test_every_alert_reaches_the_receiver_its_severity_calls_for(rule: dict[str, Any], routable_config: Path) -> None:
    labels = alert_labels(rule)
    severity = labels.get("severity")
    assert severity in RECEIVER_FOR_SEVERITY, (
        f"{rule['alert']} has severity {severity!r}, which no one has decided where to route: add a route in "
        f"deploy/alertmanager/alertmanager.yml and its receiver to RECEIVER_FOR_SEVERITY")
    assert routed_receivers(routable_config, labels) == RECEIVER_FOR_SEVERITY[severity]


def test_an_alert_of_an_unknown_severity_still_reaches_someone(routable_config: Path) -> None:
    assert routed_receivers(routable_config, {"alertname": "DsxSomethingNew", "severity": "info"}) == "dsx-default"
    assert routed_receivers(routable_config, {"alertname": "DsxSomethingNew"}) == "dsx-default"


def test_only_the_watchdog_counts_as_a_heartbeat(routable_config: Path) -> None:
    """Another alert reaching the heartbeat would keep the dead man's switch quiet for the wrong reason."""
    for labels in ({"alertname": "DsxSomethingNew", "severity": "none"},
                   {"alertname": "DsxTargetDown", "severity": "critical"}):
        assert routed_receivers(routable_config, labels) != HEARTBEAT_RECEIVER, labels
    assert routed_receivers(routable_config, {"alertname": "DsxWatchdog", "severity": "none"}) == HEARTBEAT_RECEIVER


def test_pager_route_waits_and_repeats_less_than_the_default() -> None:
    root = load_yaml(CONFIG_FILE)["route"]
    (pager,) = [route for route in root["routes"] if route["receiver"] == RECEIVER_FOR_SEVERITY["critical"]]
    assert duration_seconds(pager["group_wait"]) < duration_seconds(root["group_wait"])
    assert duration_seconds(pager["repeat_interval"]) < duration_seconds(root["repeat_interval"])
    assert {"alertname", "severity", "model"} <= set(root["group_by"])


def test_heartbeat_pings_every_few_minutes_and_never_as_resolved() -> None:
    config = load_yaml(CONFIG_FILE)
    (heartbeat,) = [route for route in config["route"]["routes"] if route["receiver"] == HEARTBEAT_RECEIVER]
    # The external service pages after a few minutes without a ping: a ping must come well within that.
    assert 60 <= duration_seconds(heartbeat["repeat_interval"]) <= 300
    assert duration_seconds(heartbeat["group_interval"]) <= duration_seconds(heartbeat["repeat_interval"])
    assert not heartbeat.get("continue"), "the watchdog must not also reach people"
    (receiver,) = [item for item in config["receivers"] if item["name"] == HEARTBEAT_RECEIVER]
    # Alertmanager resolves the watchdog when Prometheus stops sending it: that must not count as a ping.
    assert all(hook.get("send_resolved") is False for hook in receiver["webhook_configs"])


def test_no_receiver_secret_is_committed() -> None:
    """URLs, keys and passwords of receivers come from files in the mounted secrets directory, never inline."""
    integrations = [item for receiver in load_yaml(CONFIG_FILE)["receivers"]
                    for key, items in receiver.items() if key.endswith("_configs") for item in items]
    assert integrations and webhook_configs(load_yaml(CONFIG_FILE))
    for item in integrations:
        assert not SECRET_FIELDS & set(item), f"read {sorted(SECRET_FIELDS & set(item))} from a file instead"
        for key, value in item.items():
            if not key.endswith("_file"):
                continue
            path = PurePosixPath(value)
            assert path.is_relative_to(CONTAINER_SECRETS), f"{key}: {path} is outside the mounted secrets"
            example = EXAMPLE_SECRETS / path.relative_to(CONTAINER_SECRETS)
            assert example.is_file(), f"{example} is missing: compose mounts that directory by default"
            if key.endswith("url_file"):
                placeholder = httpx.URL(example.read_text().strip())
                assert placeholder.host.endswith(".invalid"), f"{example} must hold a placeholder"


def test_compose_runs_alertmanager_and_prometheus_sends_to_it() -> None:
    services = compose_services()
    alertmanager = services["alertmanager"]
    image, tag = alertmanager["image"].split(":")
    assert image == "prom/alertmanager"
    pinned = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)", tag)
    assert pinned, "pin a release tag"
    assert (int(pinned[1]), int(pinned[2])) >= WEBHOOK_URL_FILE_SINCE, "the config's url_file needs Alertmanager 0.26+"

    mounts = {found["target"]: found for found in map(VOLUME.fullmatch, alertmanager["volumes"]) if found}
    config_flag = next(arg for arg in alertmanager["command"] if arg.startswith("--config.file="))
    config_mount = mounts[config_flag.split("=", 1)[1]]
    assert (config_mount["source"], config_mount["mode"]) == ("./deploy/alertmanager/alertmanager.yml", "ro")
    secrets = mounts[str(CONTAINER_SECRETS)]
    assert secrets["mode"] == "ro"
    default_source = re.fullmatch(r"\$\{[A-Z_]+:-(?P<path>[^}]+)\}", secrets["source"])
    assert default_source, "the secrets directory is chosen by an environment variable with a default"
    assert (REPO_ROOT / default_source["path"]).resolve() == EXAMPLE_SECRETS.resolve()
    assert "--cluster.listen-address=" in alertmanager["command"]
    assert any("/-/ready" in part for part in alertmanager["healthcheck"]["test"])

    prometheus = services["prometheus"]
    assert prometheus["depends_on"]["alertmanager"]["condition"] == "service_healthy"
    assert prometheus["depends_on"]["api"]["condition"] == "service_started"
    (manager,) = load_yaml(PROMETHEUS_FILE)["alerting"]["alertmanagers"]
    (target,) = manager["static_configs"][0]["targets"]
    assert target == "alertmanager:9093", "Alertmanager listens on 9093 unless --web.listen-address says otherwise"
    assert not any(arg.startswith("--web.listen-address") for arg in alertmanager["command"])


# --- A real Alertmanager ---------------------------------------------------------------------------------

class WebhookSink:
    """A local HTTP endpoint that records every notification posted to it, with the path it was posted to."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with sink._lock:
                    sink.received.append((self.path, json.loads(body)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def alerts(self) -> list[tuple[str, str, dict[str, str]]]:
        """(path, receiver, labels) of every alert in every notification so far."""
        with self._lock:
            return [(path, body["receiver"], alert["labels"]) for path, body in self.received
                    for alert in body["alerts"]]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class RunningAlertmanager:
    def __init__(self, base_url: str, sink: WebhookSink, process: subprocess.Popen) -> None:
        self.base_url = base_url
        self.sink = sink
        self.process = process

    @property
    def address(self) -> str:
        return self.base_url.removeprefix("http://")

    def post(self, *label_sets: dict[str, str]) -> None:
        response = httpx.post(f"{self.base_url}/api/v2/alerts", timeout=10,
                              json=[{"labels": labels, "annotations": {"summary": "test"}} for labels in label_sets])
        assert response.status_code == 200, response.text

    def alert_status(self, labels: dict[str, str]) -> dict[str, Any] | None:
        response = httpx.get(f"{self.base_url}/api/v2/alerts", timeout=10)
        response.raise_for_status()
        return next((alert["status"] for alert in response.json() if alert["labels"] == labels), None)

    def delivered(self, labels: dict[str, str]) -> list[tuple[str, str]]:
        """(path, receiver) of each notification that carried an alert with exactly these labels."""
        return [(path, receiver) for path, receiver, got in self.sink.alerts() if got == labels]

    def failed_notifications(self, integration: str) -> float:
        """alertmanager_notifications_failed_total of one integration, summed over its other labels."""
        response = httpx.get(f"{self.base_url}/metrics", timeout=10)
        response.raise_for_status()
        return sum(sample.value for family in text_string_to_metric_families(response.text)
                   for sample in family.samples
                   if sample.name == "alertmanager_notifications_failed_total"
                   and sample.labels.get("integration") == integration)

    def stop(self) -> None:
        stop_group(self.process)


@contextmanager
def serving(log_path: Path, what: str, port: int, command: list[str]) -> Iterator[tuple[str, subprocess.Popen]]:
    """Start one of the Prometheus project's servers, wait for its /-/ready on 127.0.0.1:`port`, stop it after."""
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        assert process.poll() is None, log_path.read_text()
        try:
            return httpx.get(f"{base_url}/-/ready", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until(ready, timeout_s=20, interval_s=0.2, what=f"{what} to be ready")
        yield base_url, process
    finally:
        stop_group(process)


@contextmanager
def running_alertmanager(tmp_path: Path, sink: WebhookSink,
                         unreachable: frozenset[str] = frozenset()) -> Iterator[RunningAlertmanager]:
    """A real Alertmanager on the repository's config whose webhooks post to `sink`, except the URL files named in
    `unreachable`, which point at a closed port (a wrong receiver URL)."""
    binary = alertmanager_binary()
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    config = load_yaml(CONFIG_FILE)
    for hook in webhook_configs(config):
        name = PurePosixPath(hook["url_file"]).name
        base = f"http://127.0.0.1:{free_port()}" if name in unreachable else sink.url
        (secrets / name).write_text(f"{base}/{name}")
    config = with_secrets_dir(config, secrets, installed_version(binary))
    # Same routes and receivers, without the production waits; the heartbeat pings every second, not minute.
    for route in [config["route"], *config["route"].get("routes", [])]:
        route["group_wait"] = route["group_interval"] = "1s"
        if route["receiver"] == HEARTBEAT_RECEIVER:
            route["repeat_interval"] = "1s"
    config_path = tmp_path / "alertmanager.yml"
    config_path.write_text(yaml.safe_dump(config))

    port = free_port()
    with serving(tmp_path / "alertmanager.log", "Alertmanager", port,
                 [binary, f"--config.file={config_path}", f"--storage.path={tmp_path / 'data'}",
                  f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address="]) as (base_url, process):
        yield RunningAlertmanager(base_url, sink, process)


@pytest.fixture
def alertmanager(tmp_path: Path) -> Iterator[RunningAlertmanager]:
    sink = WebhookSink()
    try:
        with running_alertmanager(tmp_path, sink) as running:
            yield running
    finally:
        sink.close()


def test_alertmanager_delivers_critical_to_the_pager_and_warnings_to_the_default(
        alertmanager: RunningAlertmanager) -> None:
    critical = {**alert_labels(next(r for r in alert_rules() if r["alert"] == "DsxTargetDown")),
                "job": "dsx-api", "instance": "api:8000"}
    warning = alert_labels(next(r for r in alert_rules() if r["alert"] == "DsxQueueBacklog"))
    assert (critical["severity"], warning["severity"]) == ("critical", "warning")
    alertmanager.post(critical, warning)

    wait_until(lambda: alertmanager.delivered(critical) and alertmanager.delivered(warning), timeout_s=15,
               interval_s=0.2, what="both notifications")
    assert alertmanager.delivered(critical) == [("/pager-webhook-url", "dsx-pager")]
    assert alertmanager.delivered(warning) == [("/default-webhook-url", "dsx-default")]
    (pager_body,) = [body for path, body in alertmanager.sink.received if path == "/pager-webhook-url"]
    assert pager_body["status"] == "firing"
    assert pager_body["groupLabels"] == {"alertname": "DsxTargetDown", "severity": "critical"}


def test_a_critical_alert_silences_the_warnings_it_makes_redundant(alertmanager: RunningAlertmanager) -> None:
    def alert(name: str, severity: str, model: str) -> dict[str, str]:
        return {"service": "dsx", "alertname": name, "severity": severity, "model": model}

    ratio = alert("DsxLlmNoToolCallRatioHigh", "critical", "model-a")
    burst_same_model = alert("DsxLlmNoToolCallBurst", "warning", "model-a")
    burst_other_model = alert("DsxLlmNoToolCallBurst", "warning", "model-b")
    # A warning twin of a critical alert (same name and model), as a rule split into two thresholds would send.
    errors = alert("DsxEngineErrorRatioHigh", "critical", "model-a")
    errors_warning = alert("DsxEngineErrorRatioHigh", "warning", "model-a")
    alertmanager.post(ratio, burst_same_model, burst_other_model, errors, errors_warning)

    def state(labels: dict[str, str]) -> str | None:
        status = alertmanager.alert_status(labels)
        return status and status["state"]

    wait_until(lambda: state(burst_same_model) == "suppressed" and state(errors_warning) == "suppressed",
               timeout_s=15, interval_s=0.2, what="the warnings to be inhibited")
    assert state(burst_other_model) == "active"
    assert alertmanager.alert_status(burst_same_model)["inhibitedBy"]

    wait_until(lambda: alertmanager.delivered(burst_other_model) and alertmanager.delivered(errors), timeout_s=15,
               interval_s=0.2, what="the notifications that are not inhibited")
    # An alert posted now is flushed after any group posted before it: once it is delivered, an inhibited
    # warning that was going to be sent would have been.
    later = alert("DsxLlmNoToolCallBurst", "warning", "model-later")
    alertmanager.post(later)
    wait_until(lambda: alertmanager.delivered(later), timeout_s=15, interval_s=0.2, what="the later alert")
    assert alertmanager.delivered(burst_other_model) == [("/default-webhook-url", "dsx-default")]
    assert alertmanager.delivered(ratio) == [("/pager-webhook-url", "dsx-pager")]
    assert alertmanager.delivered(burst_same_model) == []
    assert alertmanager.delivered(errors_warning) == []


def test_the_watchdog_pings_the_heartbeat_again_and_reaches_no_one_else(alertmanager: RunningAlertmanager) -> None:
    watchdog = alert_labels(rule_named("DsxWatchdog"))
    alertmanager.post(watchdog)

    pings = wait_until(lambda: len(alertmanager.delivered(watchdog)) >= 3 and alertmanager.delivered(watchdog),
                       timeout_s=20, interval_s=0.2, what="three heartbeat pings")
    assert set(pings) == {("/heartbeat-webhook-url", HEARTBEAT_RECEIVER)}
    assert all(body["status"] == "firing" for path, body in alertmanager.sink.received)


def test_a_wrong_receiver_url_is_counted_in_the_failed_notifications(tmp_path: Path) -> None:
    """The counter DsxAlertmanagerNotificationsFailing watches, fed by a real Alertmanager."""
    sink = WebhookSink()
    try:
        with running_alertmanager(tmp_path, sink, unreachable=frozenset({"default-webhook-url"})) as alertmanager:
            assert alertmanager.failed_notifications("webhook") == 0
            warning = alert_labels(rule_named("DsxQueueBacklog"))
            critical = {**alert_labels(rule_named("DsxTargetDown")), "job": "dsx-api", "instance": "api:8000"}
            alertmanager.post(warning, critical)
            # Alertmanager retries until the notification's deadline (10 s at the least), then gives up and counts.
            wait_until(lambda: alertmanager.failed_notifications("webhook") >= 1, timeout_s=30, interval_s=0.5,
                       what="the failed delivery to be counted")
            assert alertmanager.delivered(critical) == [("/pager-webhook-url", "dsx-pager")]
            assert alertmanager.delivered(warning) == []
    finally:
        sink.close()


# --- A real Prometheus in front of it --------------------------------------------------------------------

class RunningPrometheus:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def query(self, expr: str) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.base_url}/api/v1/query", params={"query": expr}, timeout=10)
        response.raise_for_status()
        return response.json()["data"]["result"]

    def alerts(self, state: str) -> set[str]:
        return {item["metric"]["alertname"] for item in self.query(f'ALERTS{{alertstate="{state}"}}')}


@contextmanager
def running_prometheus(tmp_path: Path, alertmanager_address: str) -> Iterator[RunningPrometheus]:
    """Prometheus on the repository's prometheus.yml and rules, every second instead of every 15: Alertmanager is
    the one given, Prometheus scrapes itself on its test port, and every other target is a closed port."""
    binary = prometheus_binary()
    port = free_port()
    addresses = {"alertmanager:9093": alertmanager_address, "localhost:9090": f"127.0.0.1:{port}"}
    closed = f"127.0.0.1:{free_port()}"
    config = load_yaml(PROMETHEUS_FILE)
    config["global"]["scrape_interval"] = config["global"]["evaluation_interval"] = "1s"
    config["rule_files"] = [str(PROMETHEUS_FILE.parent / pattern) for pattern in config["rule_files"]]
    for section in [*config["alerting"]["alertmanagers"], *config["scrape_configs"]]:
        if section.pop("dns_sd_configs", None) is not None:  # compose's service names do not resolve here
            section["static_configs"] = [{"targets": [closed]}]
        for static in section["static_configs"]:
            static["targets"] = [addresses.get(target, closed) for target in static["targets"]]
    config_path = tmp_path / "prometheus.yml"
    config_path.write_text(yaml.safe_dump(config))

    with serving(tmp_path / "prometheus.log", "Prometheus", port,
                 [binary, f"--config.file={config_path}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                  f"--web.listen-address=127.0.0.1:{port}", "--rules.alert.resend-delay=1s"]) as (base_url, _):
        yield RunningPrometheus(base_url)


def test_prometheus_sends_the_heartbeat_and_notices_when_alertmanager_dies(
        alertmanager: RunningAlertmanager, tmp_path: Path) -> None:
    watchdog = alert_labels(rule_named("DsxWatchdog"))
    with running_prometheus(tmp_path, alertmanager.address) as prometheus:
        # The whole path: the rule, Prometheus's alerting block, Alertmanager's route, the heartbeat webhook.
        wait_until(lambda: alertmanager.delivered(watchdog), timeout_s=20, interval_s=0.2,
                   what="the watchdog to reach the heartbeat through Prometheus and Alertmanager")
        assert set(alertmanager.delivered(watchdog)) == {("/heartbeat-webhook-url", HEARTBEAT_RECEIVER)}
        wait_until(lambda: prometheus.query('up{job="alertmanager"} == 1'), timeout_s=10, interval_s=0.2,
                   what="Prometheus to scrape Alertmanager")
        assert prometheus.query("prometheus_notifications_alertmanagers_discovered == 1")
        path_alerts = {"DsxAlertmanagerTargetDown", "DsxAlertmanagerSendFailing"}
        assert not path_alerts & prometheus.alerts("pending")

        alertmanager.stop()
        # The measures of the rules react to a dead Alertmanager; both alerts start their `for` wait.
        wait_until(lambda: path_alerts <= prometheus.alerts("pending"), timeout_s=20, interval_s=0.5,
                   what="the alert-path alerts to go pending")
        (send_failing,) = [item["metric"]
                           for item in prometheus.query('ALERTS{alertname="DsxAlertmanagerSendFailing"}')]
        assert send_failing["alertmanager"] == f"http://{alertmanager.address}/api/v2/alerts"
        assert "DsxAlertmanagerNotDiscovered" not in prometheus.alerts("pending")
