"""The monitoring bundle under deploy/: Prometheus rules (run through promtool), the Grafana dashboard and the
Grafana-managed alert rules, checked against each other and against the metrics the service really exports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.metrics import MetricWrapperBase

from app import metrics
from app.jobs.metrics import JobQueueCollector
from tests.support.paths import REPO_ROOT
from tests.support.prerequisites import missing_prerequisite

DEPLOY = REPO_ROOT / "deploy"
PROMETHEUS = DEPLOY / "prometheus"
ALERTS_FILE = PROMETHEUS / "rules" / "dsx-alerts.yml"
RECORDING_FILE = PROMETHEUS / "rules" / "dsx-recording.yml"
ALERT_TESTS_FILE = PROMETHEUS / "tests" / "dsx-alerts.test.yml"
GRAFANA = DEPLOY / "grafana"
DASHBOARD_FILE = GRAFANA / "dashboards" / "dsx-overview.json"
GRAFANA_ALERTS_FILE = GRAFANA / "provisioning" / "alerting" / "dsx-alerts.yml"
DATASOURCE_FILE = GRAFANA / "provisioning" / "datasources" / "prometheus.yml"

# Rule groups that watch Prometheus's own way to people (through Alertmanager). Grafana-managed alerting does not
# use that way, so these have no Grafana counterpart.
PROMETHEUS_ONLY_GROUPS = {"dsx-alert-path"}
# The severity of the dead man's switch: an alert that always fires, and is a heartbeat rather than a problem.
HEARTBEAT_SEVERITY = "none"

# `(<measure>) > <threshold>`, the one shape every alert expression has (so Grafana can split it the same way).
ALERT_SHAPE = re.compile(r"^\((?P<measure>.*)\)\s*(?P<op>[<>])\s*(?P<threshold>-?[0-9.]+)\s*$", re.S)
METRIC_NAME = re.compile(r"\b(dsx_[a-z0-9_]+)")
RECORDED_NAME = re.compile(r"\b(dsx:[a-z0-9_:]+)")


def promtool() -> str:
    """promtool (skipped without it on a developer machine, failed in CI)."""
    path = shutil.which("promtool")
    if path is None:
        missing_prerequisite("promtool is not installed (Debian: apt-get install -y prometheus)")
    return path


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def alert_rules(*, mirrored_in_grafana: bool = False) -> list[dict[str, Any]]:
    return [rule for group in load_yaml(ALERTS_FILE)["groups"] for rule in group["rules"] if "alert" in rule
            if not (mirrored_in_grafana and group["name"] in PROMETHEUS_ONLY_GROUPS)]


def scrape_jobs() -> dict[str, list[str]]:
    """Job name -> its static targets, from prometheus.yml."""
    return {job["job_name"]: [target for config in job.get("static_configs", []) for target in config["targets"]]
            for job in load_yaml(PROMETHEUS / "prometheus.yml")["scrape_configs"]}


def recorded_names() -> set[str]:
    return {rule["record"] for group in load_yaml(RECORDING_FILE)["groups"] for rule in group["rules"]}


def exported_sample_names() -> set[str]:
    """Every sample name the service can expose at /metrics."""
    names: set[str] = set()
    for candidate in vars(metrics).values():
        if not isinstance(candidate, MetricWrapperBase):
            continue
        for family in candidate.describe():
            if family.type == "counter":
                names.add(family.name + "_total")
            elif family.type == "histogram":
                names.update(family.name + suffix for suffix in ("_bucket", "_count", "_sum"))
            else:
                names.add(family.name)
    names.update(family.name for family in JobQueueCollector().describe())
    return names


def dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD_FILE.read_text())


def dashboard_queries() -> list[str]:
    return [target["expr"] for panel in dashboard()["panels"] for target in panel.get("targets", [])]


def squash(text: str) -> str:
    return " ".join(text.split())


# --- Prometheus ------------------------------------------------------------------------------------------

def test_alert_unit_tests_pass_under_promtool() -> None:
    result = subprocess.run([promtool(), "test", "rules", str(ALERT_TESTS_FILE)], capture_output=True, text=True,
                            timeout=120, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def check_config(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), "check", "config", str(path)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", ["prometheus.yml", "prometheus-kubernetes.yml"])
def test_prometheus_config_and_rule_files_are_valid(name: str, tmp_path: Path) -> None:
    path = PROMETHEUS / name
    result = check_config(path)
    output = result.stdout + result.stderr
    if "field kubernetes_sd_configs not found" in output:
        # Some distribution builds (Debian's) leave the Kubernetes discovery out of Prometheus. Everything else
        # (relabelling, regexes, rule files) is still checked, with the discovery swapped for an empty static one;
        # tests/unit/test_deploy_k8s.py checks what the relabelling makes of the bundle's pods.
        config = load_yaml(path)
        for job in config["scrape_configs"]:
            if job.pop("kubernetes_sd_configs", None) is not None:
                job["static_configs"] = [{"targets": []}]
        (tmp_path / "rules").symlink_to(PROMETHEUS / "rules")
        path = tmp_path / name
        path.write_text(yaml.safe_dump(config))
        result = check_config(path)
        output = result.stdout + result.stderr
    assert result.returncode == 0, output
    # check config also checks the rule files it names; make sure it found both.
    assert "2 rule files found" in output, output


def test_every_dsx_job_matches_the_target_down_alert() -> None:
    for name in ("prometheus.yml", "prometheus-kubernetes.yml"):
        jobs = [job["job_name"] for job in load_yaml(PROMETHEUS / name)["scrape_configs"]]
        assert any(re.fullmatch("dsx.*", job) for job in jobs), name


def test_every_alert_is_shown_firing_and_silent() -> None:
    tests = load_yaml(ALERT_TESTS_FILE)["tests"]
    cases = [case for test in tests for case in test.get("alert_rule_test", [])]
    for rule in alert_rules():
        mine = [case for case in cases if case["alertname"] == rule["alert"]]
        assert any(case.get("exp_alerts") for case in mine), f"no test shows {rule['alert']} firing"
        if rule["labels"]["severity"] == HEARTBEAT_SEVERITY:
            # A heartbeat is never silent: show it firing at more than one time instead.
            assert all(case.get("exp_alerts") for case in mine), f"a test shows the heartbeat {rule['alert']} silent"
            assert len({case["eval_time"] for case in mine}) > 1, f"show {rule['alert']} firing at several times"
        else:
            assert any(not case.get("exp_alerts") for case in mine), f"no test shows {rule['alert']} silent"


def test_alerts_cover_the_failures_operators_must_be_paged_on() -> None:
    expressions = {rule["alert"]: rule["expr"] for rule in alert_rules()}
    used = " ".join(expressions.values())
    for needle in ("dsx_llm_http_200_no_tool_call_total", "dsx:flags_per_parameter:ratio_rate30m",
                   'dsx_parameter_duration_seconds_count{outcome!="submitted"}', "dsx_queue_oldest_age_seconds",
                   "up{", "dsx_api_problems_total{code=~", 'dsx_http_requests_total{status_class="5xx"'):
        assert needle in used, f"no alert watches {needle}"
    for rule in alert_rules():
        assert ALERT_SHAPE.match(rule["expr"].strip()), f"{rule['alert']}: expr is not `(<measure>) > <threshold>`"
        assert rule["labels"]["severity"] in ("warning", "critical", HEARTBEAT_SEVERITY)
        assert {"summary", "description", "runbook"} <= set(rule["annotations"])


def test_alerts_watch_the_alert_path_itself() -> None:
    jobs = scrape_jobs()
    assert jobs["alertmanager"] == ["alertmanager:9093"]
    assert jobs["prometheus"] == ["localhost:9090"], "Prometheus scrapes itself for its notification counters"
    rules = alert_rules()
    used = " ".join(rule["expr"] for rule in rules)
    for needle in ("alertmanager_notifications_failed_total", "prometheus_notifications_errors_total",
                   "prometheus_notifications_alertmanagers_discovered", 'up{job="alertmanager"}'):
        assert needle in used, f"no alert watches {needle}"
    # The dead man's switch: one alert, always true, whatever the scraped data.
    (heartbeat,) = [rule for rule in rules if rule["labels"]["severity"] == HEARTBEAT_SEVERITY]
    assert squash(heartbeat["expr"]) == "( vector(1) ) > 0" and "for" not in heartbeat
    severities = {rule["alert"]: rule["labels"]["severity"] for rule in rules}
    assert severities["DsxAlertmanagerNotificationsFailing"] == "warning"
    for name in ("DsxAlertmanagerTargetDown", "DsxAlertmanagerSendFailing", "DsxAlertmanagerNotDiscovered"):
        assert severities[name] == "critical", name


def test_the_upload_check_alert_watches_the_codes_exported_from_zero() -> None:
    """rate() cannot see a counter's first increment when the series is born with it: the codes the alert
    matches must be the ones the API exposes at zero before any happens."""
    (expr,) = [rule["expr"] for rule in alert_rules() if rule["alert"] == "DsxUploadChecksFailing"]
    (codes,) = re.findall(r'code=~"([^"]+)"', expr)
    assert set(codes.split("|")) == set(metrics.UPLOAD_CHECK_FAILURE_CODES)


def test_up_alerts_name_jobs_that_are_scraped() -> None:
    """`up{job=...}` of a job Prometheus does not scrape has no series, so its alert could never fire."""
    jobs = scrape_jobs()
    for rule in alert_rules():
        for operator, value in re.findall(r'\bup\{job(=~?)"([^"]+)"', rule["expr"]):
            matching = [job for job in jobs if (re.fullmatch(value, job) if operator == "=~" else job == value)]
            assert matching, f"{rule['alert']}: no scrape job matches job{operator}{value!r}"


def test_rules_only_use_metrics_the_service_exports() -> None:
    exported, recorded = exported_sample_names(), recorded_names()
    texts = [rule["expr"] for group in load_yaml(RECORDING_FILE)["groups"] for rule in group["rules"]]
    texts += [rule["expr"] for rule in alert_rules()]
    for text in texts:
        assert set(METRIC_NAME.findall(text)) <= exported, text
        assert set(RECORDED_NAME.findall(text)) <= recorded, text


def test_runbook_anchors_exist_in_the_deploy_readme() -> None:
    readme = (DEPLOY / "README.md").read_text()
    anchors = {re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
               for line in readme.splitlines() if line.startswith("#")}
    for rule in alert_rules():
        anchor = rule["annotations"]["runbook"].split("#", 1)[1]
        assert anchor in anchors, f"deploy/README.md has no heading for #{anchor}"


# --- Grafana dashboard -----------------------------------------------------------------------------------

def test_dashboard_queries_use_exported_metrics_and_parse(tmp_path: Path) -> None:
    exported, recorded = exported_sample_names(), recorded_names()
    queries = dashboard_queries()
    assert queries
    for query in queries:
        assert set(METRIC_NAME.findall(query)) <= exported, query
        assert set(RECORDED_NAME.findall(query)) <= recorded, query
    # promtool parses PromQL when checking rules: Grafana's variables become plain values first.
    concrete = [q.replace("$__rate_interval", "5m").replace("$__range", "1h").replace("$model", ".*")
                for q in queries]
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:query_{i}", "expr": q} for i, q in enumerate(concrete)]}]}
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(yaml.safe_dump(rules))
    result = subprocess.run([promtool(), "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dashboard_covers_throughput_latency_cost_tools_flags_no_tool_calls_and_the_api() -> None:
    queries = " ".join(dashboard_queries())
    for topic, needle in {
        "throughput": "dsx_jobs_finished_total",
        "latency": "dsx_llm_request_duration_seconds_bucket",
        "job latency": "dsx_job_duration_seconds_bucket",
        "cost": "dsx_llm_cost_usd_total",
        "tool usage": "dsx_tool_calls_total",
        "flags by rule": "sum by (rule) (rate(dsx_flags_total",
        "no-tool-call rate": "sum by (model) (rate(dsx_llm_http_200_no_tool_call_total",
        "queue": "dsx_queue_depth",
        "API request rate by route": "sum by (route, status_class) (rate(dsx_http_requests_total",
        "API latency by route": "sum by (le, route) (rate(dsx_http_request_duration_seconds_bucket",
        "upload refusals by code": "sum by (outcome) (rate(dsx_upload_check_duration_seconds_count",
        "problems by code": "sum by (code, status) (increase(dsx_api_problems_total",
    }.items():
        assert needle in queries, f"the dashboard shows no {topic}"


def test_dashboard_layout_and_datasource_references() -> None:
    board = dashboard()
    panels = board["panels"]
    ids = [panel["id"] for panel in panels]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    variables = {variable["name"]: variable for variable in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    cells: set[tuple[int, int]] = set()
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["w"] > 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        covered = {(x, y) for x in range(grid["x"], grid["x"] + grid["w"])
                   for y in range(grid["y"], grid["y"] + grid["h"])}
        assert not covered & cells, f"panel {panel['title']!r} overlaps another"
        cells |= covered
        for target in panel.get("targets", []):
            assert target["datasource"]["uid"] == "${datasource}", panel["title"]
            assert target["refId"]
    assert board["uid"] and len(board["uid"]) <= 40


# --- Grafana provisioning and alert rules ----------------------------------------------------------------

def test_datasource_provisioning() -> None:
    (source,) = load_yaml(DATASOURCE_FILE)["datasources"]
    assert source["type"] == "prometheus"
    assert source["uid"] == "dsx-prometheus"
    assert source["url"] == "http://prometheus:9090"


def test_grafana_alert_rules_match_the_prometheus_alerts() -> None:
    grafana = {rule["title"]: rule for group in load_yaml(GRAFANA_ALERTS_FILE)["groups"] for rule in group["rules"]}
    prometheus = {rule["alert"]: rule for rule in alert_rules(mirrored_in_grafana=True)}
    assert set(grafana) == set(prometheus)
    for name, source in prometheus.items():
        rule = grafana[name]
        shape = ALERT_SHAPE.match(source["expr"].strip())
        assert shape is not None
        queries = {item["refId"]: item for item in rule["data"]}
        query = queries["A"]
        assert squash(query["model"]["expr"]) == squash(shape["measure"]), f"{name}: query differs from Prometheus"
        (condition,) = queries[rule["condition"]]["model"]["conditions"]
        assert condition["evaluator"]["type"] == {">": "gt", "<": "lt"}[shape["op"]], name
        assert condition["evaluator"]["params"] == [float(shape["threshold"])], name
        assert rule["for"] == source.get("for", "0s"), name
        assert rule["labels"]["severity"] == source["labels"]["severity"], name
        assert squash(rule["annotations"]["summary"]) == squash(source["annotations"]["summary"]), name


def test_grafana_alert_rules_are_well_formed() -> None:
    datasource_uid = load_yaml(DATASOURCE_FILE)["datasources"][0]["uid"]
    groups = load_yaml(GRAFANA_ALERTS_FILE)["groups"]
    uids = [rule["uid"] for group in groups for rule in group["rules"]]
    assert len(uids) == len(set(uids)) and all(len(uid) <= 40 for uid in uids)
    for group in groups:
        assert group["folder"] and group["interval"] and group["orgId"] == 1
        for rule in group["rules"]:
            refs = {item["refId"] for item in rule["data"]}
            assert rule["condition"] in refs
            for item in rule["data"]:
                model = item["model"]
                assert model["refId"] == item["refId"]
                if item["datasourceUid"] == "__expr__":
                    assert model["type"] in ("reduce", "threshold", "math", "classic_conditions")
                    assert model["expression"] in refs - {item["refId"]}
                else:
                    assert item["datasourceUid"] == datasource_uid
                    assert model["expr"].strip()
            assert rule["noDataState"] in ("OK", "NoData", "Alerting")
            assert rule["execErrState"] in ("OK", "Error", "Alerting")
