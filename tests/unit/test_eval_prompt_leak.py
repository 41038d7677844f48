"""No gold ever reaches a model: every prompt builder, fed only through the evaluation's request chokepoint.

Two complementary checks. A sentinel claim whose every gold field is a unique marker must leave no trace in the
messages. And for every real claim of the gold set, whatever of its value, page, quote, needles or notes appears
in the messages must also appear in what is allowed to be there (the allow-listed request fields and the fixed
prompt text); the document itself is the datasheet, so it is left out of the comparison.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.agent import prompts
from app.agent.phases import extraction_phase
from evaluation.claims import Claim, load_claims, request_for
from evaluation.units import canonical_number

SENTINEL = Claim.model_validate({
    "id": "zz-sentinel", "document": "zz", "parameter": "Supply voltage", "symbol": "ZQSYMBOL", "kind": "range",
    "min": -987654.25, "typical": 13579.125, "max": 24680.5, "unit": "V", "conditions": ["VDD = 5 V"],
    "page": 7777, "source_text": "ZQ-QUOTE verbatim span", "needles": ["ZQ-NEEDLE"], "notes": "ZQ-NOTE other rows",
    "tolerance": 0.123456,
})

DOCUMENT = prompts.document_block(["Supply voltage 2.7 to 5.5 V", "Operating temperature -40 to 85 °C"])


def builders() -> dict[str, Callable[[Any], list[dict[str, Any]]]]:
    """Every builder in app.agent.prompts that puts a request into messages (found by name, so a new one
    is covered or fails this test until it is)."""
    found = {name: getattr(prompts, name) for name in dir(prompts) if name.endswith("_messages")}
    assert {"agentic_messages", "single_pass_messages"} <= set(found)
    return {
        name: (lambda request, f=builder: f(request, DOCUMENT)) if name == "single_pass_messages"
        else (lambda request, f=builder: f(request))
        for name, builder in found.items()
    }


def _text(messages: list[dict[str, Any]]) -> str:
    """Everything sent, the document block cut out (it is the datasheet, not the job)."""
    text = json.dumps(messages, ensure_ascii=False)
    return text.replace(json.dumps(DOCUMENT, ensure_ascii=False)[1:-1], " ")


def _gold_strings(claim: Claim) -> list[str]:
    strings = [canonical_number(v) for v in claim.stated_fields.values()]
    strings += [claim.source_text or "", claim.notes or "", *claim.needles]
    if claim.page is not None:
        strings.append(f"page {claim.page}")
    if claim.tolerance is not None:
        strings.append(canonical_number(claim.tolerance))
    return [s for s in strings if s.strip()]


@pytest.mark.parametrize("name", sorted(builders()))
def test_a_sentinel_claim_leaves_no_trace(name: str) -> None:
    build = builders()[name]
    sent = _text(build(request_for(SENTINEL)))
    assert "Supply voltage" in sent  # the request itself did arrive
    for marker in ("ZQ", "987654", "13579", "24680", "7777", "0.123456"):
        assert marker not in sent, f"{name} leaked {marker!r}"


@pytest.mark.parametrize("name", sorted(builders()))
def test_no_gold_field_of_any_claim_reaches_the_model(name: str, claims_file: Path) -> None:
    build = builders()[name]
    fixed = _text(build({"name": "", "unit": None, "conditions": [], "notes": None})).casefold()
    for claim in load_claims(claims_file).claims:
        request = request_for(claim)
        sent = _text(build(request))
        blocks = re.findall(r"<parameter_request>(.*?)</parameter_request>", sent)
        assert len(blocks) == 1, claim.id
        decoded = json.loads(json.loads(f'"{blocks[0]}"'))
        # What an engineer would type about the claim, and nothing else (its notes describe other values).
        expected = {"name": claim.parameter, "unit": claim.unit, "conditions": claim.conditions, "notes": None}
        assert decoded == expected, claim.id
        typed = [claim.parameter, claim.unit or "", *claim.conditions]
        allowed = " ".join([fixed, json.dumps(expected, ensure_ascii=False), *typed]).casefold()
        for gold in _gold_strings(claim):
            if gold.casefold() in sent.casefold():
                assert gold.casefold() in allowed, f"{name}: {claim.id} leaked {gold!r}"


def test_the_nudge_and_phase_openings_carry_no_job_data() -> None:
    phase = extraction_phase()
    for message in (prompts.nudge(phase), prompts.phase_opening(phase, phase)):
        assert "parameter_request" not in message["content"] and "ZQ" not in message["content"]
