"""The review JSON API over stored jobs, extractions, flags and decisions (no pipeline involved)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
import yaml
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.config import Settings
from app.db import session_scope
from app.errors import InvalidInput
from app.review import decisions
from app.review.decisions import QueuePlace, ReviewDecisionRequest
from app.review.models import Decision, Flag
from app.tables.jobs import Extraction, Job
from app.timeutil import utcnow
from tests.support.live import seed_flagged_extraction


@pytest.fixture
def api(dsx_env: Settings) -> Iterator[TestClient]:
    from app.main import create_app

    with TestClient(create_app()) as client:
        yield client


def seed(**kwargs) -> tuple[int, str]:  # noqa: ANN003
    with session_scope() as session:
        extraction = seed_flagged_extraction(session, **kwargs)
        return extraction.id, extraction.job_id


def decision_rows() -> int:
    with session_scope() as session:
        return int(session.scalar(select(func.count()).select_from(Decision)) or 0)


def test_queue_lists_primary_answers_with_a_warning_or_worse(api: TestClient) -> None:
    warned, _ = seed(parameter="Supply voltage", flags=[("tool_bypass", "warning")])
    info_only, _ = seed(parameter="Gain", flags=[("low_confidence", "info")])
    severe, _ = seed(parameter="Quiescent current", flags=[("quote_not_found", "error"),
                                                            ("verification_skipped", "warning")])
    unflagged, _ = seed(parameter="Bandwidth", flags=[])
    with session_scope() as session:
        # A cross-check answer with a flag is the reader's second opinion, not a reviewable item.
        primary = session.get(Extraction, warned)
        cross = Extraction(job_id=primary.job_id, parameter_id=primary.parameter_id, attempt=1, role="cross_check",
                           model="offline/datasheet-reader", engine="agentic", found=True, values=[])
        session.add(cross)
        session.flush()
        session.add(Flag(job_id=primary.job_id, parameter_id=None, extraction_id=cross.id, rule="tool_bypass",
                         rule_version="1", severity="error", message="x", evidence={}))

    body = api.get("/v1/review/queue").json()

    assert [item["extraction_id"] for item in body["items"]] == [warned, severe]
    assert body["total"] == 2
    assert body["counts_by_rule"] == {"tool_bypass": 1, "quote_not_found": 1, "verification_skipped": 1}
    first, second = body["items"]
    assert set(first) == {"extraction_id", "job_id", "parameter", "model", "found", "values", "source_page",
                          "quote", "confidence", "flags", "created_at", "decision"}
    assert first["parameter"] == "Supply voltage" and first["decision"] is None
    assert first["values"] == [{"min": 2.7, "typical": None, "max": 5.5, "unit": "V", "conditions": [],
                                "other_variants": []}]
    assert [f["rule"] for f in second["flags"]] == ["quote_not_found", "verification_skipped"]  # worst first
    assert set(second["flags"][0]) == {"rule", "severity", "message", "rule_version", "evidence"}
    assert second["flags"][0]["evidence"] == {"span_ids": ["00000000000000aa"]}
    assert info_only not in {i["extraction_id"] for i in body["items"]}
    assert unflagged not in {i["extraction_id"] for i in body["items"]}


def test_a_parameter_level_flag_puts_its_answer_in_the_queue(api: TestClient) -> None:
    extraction_id, job_id = seed(flags=[])
    with session_scope() as session:
        extraction = session.get(Extraction, extraction_id)
        session.add(Flag(job_id=job_id, parameter_id=extraction.parameter_id, extraction_id=None,
                         rule="disagrees_with_reader", rule_version="2", severity="warning", message="differs",
                         evidence={"span_ids": []}))
    body = api.get("/v1/review/queue").json()
    assert [i["extraction_id"] for i in body["items"]] == [extraction_id]
    assert [f["rule"] for f in body["items"][0]["flags"]] == ["disagrees_with_reader"]


def test_only_the_latest_attempt_of_a_parameter_is_queued(api: TestClient) -> None:
    first, _ = seed(flags=[("tool_bypass", "warning")])
    with session_scope() as session:
        old = session.get(Extraction, first)
        session.add(Extraction(job_id=old.job_id, parameter_id=old.parameter_id, attempt=2, role="primary",
                               model=old.model, engine="agentic", found=True, values=old.values))
    assert api.get("/v1/review/queue").json()["total"] == 0


def test_queue_filters_and_pagination(api: TestClient) -> None:
    a, job_a = seed(parameter="A", flags=[("tool_bypass", "warning")], model="gpt-x")
    b, _ = seed(parameter="B", flags=[("quote_not_found", "error")], model="offline/datasheet-reader")
    c, _ = seed(parameter="C", flags=[("tool_bypass", "error")], model="offline/datasheet-reader")

    by_rule = api.get("/v1/review/queue", params={"rule": "tool_bypass"}).json()
    assert [i["extraction_id"] for i in by_rule["items"]] == [a, c]
    assert by_rule["total"] == 2
    # Counts ignore the rule filter, so the other rules stay visible beside the filtered list.
    assert by_rule["counts_by_rule"] == {"tool_bypass": 2, "quote_not_found": 1}

    assert [i["extraction_id"] for i in api.get("/v1/review/queue", params={"model": "gpt-x"}).json()["items"]] == [a]
    assert [i["extraction_id"] for i in api.get("/v1/review/queue", params={"job_id": job_a}).json()["items"]] == [a]

    page = api.get("/v1/review/queue", params={"limit": 2, "offset": 1}).json()
    assert [i["extraction_id"] for i in page["items"]] == [b, c]
    assert page["total"] == 3

    for bad in ({"status": "closed"}, {"limit": 0}, {"offset": -1}):
        response = api.get("/v1/review/queue", params=bad)
        assert response.status_code == 422
        assert response.json()["code"] == "invalid_input"


def test_queue_since_newest_first_and_the_place_of_an_item(dsx_env: Settings) -> None:
    now = utcnow()
    ages = {50: "tool_bypass", 30: "quote_not_found", 2: "tool_bypass", 1: "quote_not_found"}
    with session_scope() as session:
        rows = [seed_flagged_extraction(session, parameter=f"P{hours}", flags=[(rule, "warning")])
                for hours, rule in ages.items()]
        for row, hours in zip(rows, ages, strict=True):
            row.created_at = now - timedelta(hours=hours)
        old_bypass, old_quote, new_bypass, new_quote = (row.id for row in rows)
    day_ago = now - timedelta(days=1)
    with session_scope() as session:
        recent = decisions.review_queue(session, tenant="default", since=day_ago)
        assert [i.extraction_id for i in recent.items] == [new_bypass, new_quote]
        assert recent.total == 2 and recent.counts_by_rule == {"tool_bypass": 1, "quote_not_found": 1}
        newest = decisions.review_queue(session, tenant="default", newest_first=True, limit=3)
        assert [i.extraction_id for i in newest.items] == [new_quote, new_bypass, old_quote]
        assert newest.total == 4

        queue = [i.extraction_id for i in decisions.review_queue(session, tenant="default").items]
        for at, extraction_id in enumerate(queue):
            assert decisions.queue_place(session, extraction_id, tenant="default") == QueuePlace(
                total=len(queue), position=at + 1, previous=queue[at - 1] if at else None,
                next=queue[at + 1] if at + 1 < len(queue) else None)
        assert decisions.queue_place(session, new_bypass, tenant="default", rule="tool_bypass",
                                     newest_first=True) == QueuePlace(total=2, position=1, next=old_bypass)
        # Outside the filtered queue an item has no place, and the queue's length is still told.
        assert decisions.queue_place(session, old_bypass, tenant="default", rule="tool_bypass",
                                     since=day_ago) == QueuePlace(total=1)
        assert decisions.queue_place(session, new_quote, tenant="acme") == QueuePlace(total=0)
        with pytest.raises(InvalidInput):
            decisions.queue_place(session, new_quote, tenant="default", status="closed")


def test_the_queue_route_takes_since_and_order(api: TestClient) -> None:
    now = utcnow()
    with session_scope() as session:
        rows = [seed_flagged_extraction(session, parameter=f"P{hours}", flags=[("tool_bypass", "warning")])
                for hours in (50, 2, 1)]
        for row, hours in zip(rows, (50, 2, 1), strict=True):
            row.created_at = now - timedelta(hours=hours)
        old, new, newest = (row.id for row in rows)

    def ids(**params: str) -> list[int]:
        response = api.get("/v1/review/queue", params=params)
        assert response.status_code == 200, response.text
        return [i["extraction_id"] for i in response.json()["items"]]

    day_ago = now - timedelta(days=1)
    assert ids() == [old, new, newest]
    assert ids(order="newest") == [newest, new, old]
    assert ids(since=day_ago.isoformat()) == [new, newest]
    # A moment without a zone is UTC.
    assert ids(since=day_ago.replace(tzinfo=None).isoformat(), order="newest") == [newest, new]
    for bad in ({"order": "random"}, {"since": "yesterday"}):
        response = api.get("/v1/review/queue", params=bad)
        assert response.status_code == 422 and response.json()["code"] == "invalid_input"


def test_a_since_moment_outside_the_storable_years_is_a_client_error(api: TestClient) -> None:
    for since in ("9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"):
        response = api.get("/v1/review/queue", params={"since": since})
        assert response.status_code == 422, response.text
        assert response.json()["code"] == "value_out_of_range"


def test_approve_moves_the_item_out_of_the_open_queue_and_into_the_job_result(api: TestClient) -> None:
    extraction_id, job_id = seed(flags=[("tool_bypass", "warning")])

    response = api.post(f"/v1/review/items/{extraction_id}/decision",
                        json={"decision": "approve", "comment": "value checked on p.3", "reviewer": "ada"})

    assert response.status_code == 201
    stored = response.json()
    assert stored["decision"] == "approve" and stored["reviewer"] == "ada"
    assert stored["extraction_id"] == extraction_id and stored["job_id"] == job_id
    assert stored["parameter"] == "Supply voltage" and stored["comment"] == "value checked on p.3"
    assert api.get("/v1/review/queue").json()["total"] == 0
    decided = api.get("/v1/review/queue", params={"status": "decided"}).json()
    assert [i["decision"]["id"] for i in decided["items"]] == [stored["id"]]
    assert api.get("/v1/review/queue", params={"status": "all"}).json()["total"] == 1

    job = api.get(f"/v1/jobs/{job_id}").json()
    assert job["status"] == "reviewed"  # its only flagged answer is decided; the flags stay in the result
    assert job["results"][0]["review"]["decision"] == "approve"
    assert job["results"][0]["review"]["reviewer"] == "ada"


def test_reviewer_defaults_to_anonymous_without_keys(api: TestClient) -> None:
    extraction_id, _ = seed()
    stored = api.post(f"/v1/review/items/{extraction_id}/decision", json={"decision": "reject"}).json()
    assert stored["reviewer"] == "anonymous"


def test_reviewer_comes_from_the_key_when_keys_are_on() -> None:
    assert decisions.resolve_reviewer(auth_mode="keys", principal_name="key:ops", requested="mallory") == "key:ops"
    assert decisions.resolve_reviewer(auth_mode="open", principal_name="anonymous", requested=" ada ") == "ada"
    assert decisions.resolve_reviewer(auth_mode="open", principal_name="anonymous", requested=None) == "anonymous"


def test_correct_needs_a_correction_and_only_correct_takes_one(api: TestClient) -> None:
    extraction_id, _ = seed()

    missing = api.post(f"/v1/review/items/{extraction_id}/decision", json={"decision": "correct"})
    assert missing.status_code == 422
    assert missing.headers["content-type"].startswith("application/problem+json")
    assert missing.json()["code"] == "correction_required"

    extra = api.post(f"/v1/review/items/{extraction_id}/decision",
                     json={"decision": "approve", "correction": {"values": [{"typical": 3.3}]}})
    assert extra.status_code == 422
    assert extra.json()["code"] == "unexpected_correction"

    empty = api.post(f"/v1/review/items/{extraction_id}/decision",
                     json={"decision": "correct", "correction": {"values": []}})
    assert empty.status_code == 422
    no_number = api.post(f"/v1/review/items/{extraction_id}/decision",
                         json={"decision": "correct", "correction": {"values": [{"unit": "V"}]}})
    assert no_number.status_code == 422
    unknown = api.post(f"/v1/review/items/{extraction_id}/decision", json={"decision": "maybe"})
    assert unknown.status_code == 422
    assert decision_rows() == 0


def test_unknown_and_other_tenants_extractions_are_not_found(api: TestClient) -> None:
    foreign, _ = seed(tenant="acme")
    for extraction_id in (foreign, 999_999):
        response = api.post(f"/v1/review/items/{extraction_id}/decision", json={"decision": "approve"})
        assert response.status_code == 404
        assert response.json()["code"] == "extraction_not_found"
        assert api.get(f"/v1/review/items/{extraction_id}").status_code == 404
    assert api.get("/v1/review/queue").json()["total"] == 0
    with session_scope() as session:
        assert decisions.review_queue(session, tenant="acme").total == 1
        assert decisions.review_queue(session, tenant=None).total == 1
    assert decision_rows() == 0


def test_a_repeated_identical_decision_is_a_replay_and_a_changed_one_supersedes(api: TestClient) -> None:
    extraction_id, job_id = seed()
    body = {"decision": "reject", "comment": "value is from the other variant", "reviewer": "ada"}

    first = api.post(f"/v1/review/items/{extraction_id}/decision", json=body)
    again = api.post(f"/v1/review/items/{extraction_id}/decision", json=body)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()
    assert decision_rows() == 1

    changed = api.post(f"/v1/review/items/{extraction_id}/decision", json={**body, "decision": "approve"})
    assert changed.status_code == 201
    audit = api.get("/v1/reviews", params={"job_id": job_id}).json()
    assert [d["decision"] for d in audit["items"]] == ["approve", "reject"]  # newest first, both kept
    assert audit["total"] == 2
    assert api.get(f"/v1/jobs/{job_id}").json()["results"][0]["review"]["decision"] == "approve"
    assert api.get(f"/v1/review/items/{extraction_id}").json()["decision"]["decision"] == "approve"


def test_review_audit_list_filters_by_job_and_pages(api: TestClient) -> None:
    first, job_one = seed(parameter="One")
    second, job_two = seed(parameter="Two")
    for extraction_id in (first, second):
        assert api.post(f"/v1/review/items/{extraction_id}/decision", json={"decision": "approve"}).status_code == 201

    everything = api.get("/v1/reviews").json()
    assert [d["extraction_id"] for d in everything["items"]] == [second, first]
    assert everything["total"] == 2 and everything["limit"] == 50 and everything["offset"] == 0
    only_two = api.get("/v1/reviews", params={"job_id": job_two}).json()
    assert [d["parameter"] for d in only_two["items"]] == ["Two"]
    paged = api.get("/v1/reviews", params={"limit": 1, "offset": 1}).json()
    assert [d["extraction_id"] for d in paged["items"]] == [first] and paged["total"] == 2
    assert job_one != job_two


def test_corrections_export_as_gold_claims(api: TestClient, claims_file) -> None:  # noqa: ANN001
    voltage, job_id = seed(parameter="Supply voltage", filename="Amp Board.pdf")
    with session_scope() as session:
        job = session.get(Job, job_id)
        rating = seed_flagged_extraction(session, job=job, parameter="Absolute maximum supply voltage")
        rating_id = rating.id
    withdrawn, _ = seed(parameter="Gain")

    correction = {"values": [{"min": 3.0, "max": 5.25, "unit": "V", "conditions": ["TA = 25°C"]},
                             {"typical": 150, "unit": "µA", "conditions": []}],
                  "source_page": 4,
                  "quote": "VDD  Supply voltage   3.0 \n  5.25 V, IDD 150 µA"}
    assert api.post(f"/v1/review/items/{voltage}/decision",
                    json={"decision": "correct", "correction": correction, "reviewer": "ada",
                          "comment": "min is 3.0 V in the table"}).status_code == 201
    assert api.post(f"/v1/review/items/{rating_id}/decision",
                    json={"decision": "correct", "correction": {"values": [{"max": 6.0, "unit": "V"}]}}
                    ).status_code == 201
    assert api.post(f"/v1/review/items/{withdrawn}/decision",
                    json={"decision": "correct", "correction": {"values": [{"typical": 20}]}}).status_code == 201
    assert api.post(f"/v1/review/items/{withdrawn}/decision", json={"decision": "approve"}).status_code == 201

    response = api.get("/v1/review/corrections.yaml")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/yaml")
    data = yaml.safe_load(response.text)

    assert data["version"] == 1
    assert data["documents"] == {"amp_board": {"file": "Amp Board.pdf", "pages": 12, "title": "Amp Board.pdf",
                                               "sha256": data["documents"]["amp_board"]["sha256"]}}
    claims = {c["id"]: c for c in data["claims"]}
    assert set(claims) == {"amp_board-supply-voltage", "amp_board-supply-voltage-2",
                           "amp_board-absolute-maximum-supply-voltage"}
    ranged = claims["amp_board-supply-voltage"]
    assert (ranged["kind"], ranged["min"], ranged["max"], ranged["unit"]) == ("range", 3.0, 5.25, "V")
    assert "typical" not in ranged
    assert ranged["conditions"] == ["TA = 25°C"] and ranged["page"] == 4
    assert ranged["source_text"] == "VDD Supply voltage 3.0 5.25 V, IDD 150 µA"
    assert ranged["needles"] == ["3.0", "5.25"]  # as printed, never a bare "3" that would match inside "3.0"
    assert "ada" in ranged["notes"] and "min is 3.0 V in the table" in ranged["notes"]
    current = claims["amp_board-supply-voltage-2"]
    assert (current["kind"], current["typical"], current["unit"]) == ("typical", 150, "uA")
    assert current["needles"] == ["150"]
    rating_claim = claims["amp_board-absolute-maximum-supply-voltage"]
    assert (rating_claim["kind"], rating_claim["max"]) == ("max_rating", 6.0)
    assert rating_claim["source_text"] == "Supply voltage VDD 2.7 5.5 V"  # the extraction's quote, uncorrected

    # Every key we write is one the evaluation set's own claims use (plus our provenance notes).
    if claims_file.exists():
        gold = yaml.safe_load(claims_file.read_text())
        gold_keys = {key for claim in gold["claims"] for key in claim}
        gold_doc_keys = {key for doc in gold["documents"].values() for key in doc}
        assert {key for claim in data["claims"] for key in claim} <= gold_keys
        assert {key for doc in data["documents"].values() for key in doc} - {"sha256"} <= gold_doc_keys
        for claim in data["claims"]:
            assert claim["kind"] in {c["kind"] for c in gold["claims"]}

    only_job = yaml.safe_load(api.get("/v1/review/corrections.yaml", params={"job_id": "nope"}).text)
    assert only_job["claims"] == [] and only_job["documents"] == {}


def test_service_functions_take_tenant_scoping(dsx_env: Settings) -> None:
    mine, _ = seed(tenant="default")
    theirs, _ = seed(tenant="acme")
    with session_scope() as session:
        stored, created = decisions.decide(session, theirs, ReviewDecisionRequest(decision="approve"),
                                           reviewer="ops", tenant="acme")
        assert created and stored.reviewer == "ops"
        assert decisions.list_decisions(session, tenant="default").total == 0
        assert decisions.list_decisions(session, tenant="acme").total == 1
        assert decisions.list_decisions(session, tenant=None).total == 1
        assert [i.extraction_id for i in decisions.review_queue(session, tenant=None, status="all").items] == [
            mine, theirs]


@pytest.fixture
def keyed_api(dsx_env: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """The API with API keys on, and keys for two tenants."""
    from app.auth.keys import create_key
    from app.config import reset_settings
    from app.main import create_app

    monkeypatch.setenv("DSX_AUTH_MODE", "keys")
    reset_settings()
    with session_scope() as session:
        keys = {
            "acme-reviewer": create_key(session, tenant="acme", roles=["reviewer"], name="rita@acme").key,
            "acme-submitter": create_key(session, tenant="acme", roles=["submitter"], name="sam@acme").key,
        }
    with TestClient(create_app()) as client:
        yield client, keys


def test_with_keys_the_queue_is_the_tenants_and_decisions_are_signed_by_the_key(
        keyed_api: tuple[TestClient, dict[str, str]]) -> None:
    api, keys = keyed_api
    ours, _ = seed(tenant="acme", parameter="Gain")
    theirs, _ = seed(tenant="default", parameter="Offset")
    reviewer = {"Authorization": f"Bearer {keys['acme-reviewer']}"}

    queue = api.get("/v1/review/queue", headers=reviewer).json()
    assert [i["extraction_id"] for i in queue["items"]] == [ours]

    stored = api.post(f"/v1/review/items/{ours}/decision", headers=reviewer,
                      json={"decision": "approve", "reviewer": "someone-else"})
    assert stored.status_code == 201 and stored.json()["reviewer"] == "rita@acme"
    assert api.post(f"/v1/review/items/{theirs}/decision", headers=reviewer,
                    json={"decision": "approve"}).status_code == 404
    assert [d["extraction_id"] for d in api.get("/v1/reviews", headers=reviewer).json()["items"]] == [ours]

    assert api.get("/v1/review/queue").status_code == 401
    submitter_only = api.get("/v1/review/queue", headers={"Authorization": f"Bearer {keys['acme-submitter']}"})
    assert submitter_only.status_code == 403
    assert api.get("/v1/review/corrections.yaml", headers={"X-API-Key": keys["acme-submitter"]}).status_code == 403
