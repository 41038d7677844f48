"""Source grounding on synthetic PDFs and on the shared datasheets' text layers."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from app.detectors.grounding import Outcome, ground_value, normalised, number_occurs, numbers_in
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import text_pdf

pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    path = tmp_path_factory.mktemp("pdf") / "synthetic.pdf"
    text_pdf([
        "Features\nWide supply range: 2.7V to 5.5V\nLow quiescent current (2.5 uA typical)",
        "Electrical characteristics\nSupply Voltage VDD 2.7 - 5.5 V\nWiper resistance RW 75 160 Ohm VDD = 5.5 V\n"
        "Absolute maximum voltage: VMax=5,25V (open circuit)\nResolution .020 %\nThreshold +/-50 ppm/C max",
        "Ordering\nPart 10,000 Ohm model\nTemperature coefficient ........................ 100 ppm",
    ], path=path)
    return open_index(path)


def test_exact_quote_on_reported_page_is_grounded_with_boxes(synthetic: DatasheetIndex) -> None:
    result = ground_value(synthetic, 0, {"min": 2.7, "max": 5.5, "unit": "V"}, "Supply Voltage VDD 2.7 - 5.5 V", [2])
    assert result.outcome is Outcome.grounded
    assert (result.method, result.page) == ("exact", 2)
    page = synthetic.page(2)
    assert result.boxes and all(0 <= b[0] < b[2] <= page.width and 0 <= b[1] < b[3] <= page.height
                                for b in result.boxes)


def test_quote_found_elsewhere_is_grounded_other_page(synthetic: DatasheetIndex) -> None:
    result = ground_value(synthetic, 0, {"min": 2.7, "max": 5.5, "unit": "V"}, "Wide supply range: 2.7V to 5.5V", [2])
    assert result.outcome is Outcome.grounded_other_page
    assert result.page == 1


def test_reported_number_missing_from_located_text(synthetic: DatasheetIndex) -> None:
    result = ground_value(synthetic, 0, {"min": 1.8, "max": 5.5, "unit": "V"}, "Supply Voltage VDD 2.7 - 5.5 V", [2])
    assert result.outcome is Outcome.value_not_in_quote
    assert result.detail["missing_numbers"] == {"min": 1.8}


def test_fabricated_quote_is_not_found(synthetic: DatasheetIndex) -> None:
    result = ground_value(synthetic, 0, {"typical": 3.3, "unit": "V"}, "Nominal supply voltage is 3.3 V at 25 C", [2])
    assert result.outcome is Outcome.quote_not_found
    missing = ground_value(synthetic, 0, {"typical": 3.3, "unit": "V"}, None, [2])
    assert missing.outcome is Outcome.quote_not_found and missing.detail["reason"] == "no quote was reported"


@pytest.mark.parametrize("quote", [
    "supply voltage vdd 2.7 – 5.5 v",  # case and en dash
    "Supply  Voltage\nVDD 2.7 — 5.5 V",  # whitespace and em dash
])
def test_normalised_tier(synthetic: DatasheetIndex, quote: str) -> None:
    result = ground_value(synthetic, 0, {"min": 2.7, "max": 5.5, "unit": "V"}, quote, [2])
    assert (result.outcome, result.method) == (Outcome.grounded, "normalised")


def test_fuzzy_tier_accepts_a_close_paraphrase_but_not_a_different_sentence(synthetic: DatasheetIndex) -> None:
    # Respelt words: too few of them are the row's words for the row tier, close enough for the fuzzy one.
    close = ground_value(synthetic, 0, {"typical": 75, "max": 160, "unit": "ohm"},
                         "Wipper resistanse RWW 75 160 Ohm VDD=5.5V", [2])
    assert (close.outcome, close.method) == (Outcome.grounded, "fuzzy")
    assert close.score is not None and close.score >= 90
    # The same row with reworded units and spacing is the row itself.
    reworded = ground_value(synthetic, 0, {"typical": 75, "max": 160, "unit": "ohm"},
                            "Wiper resistance RW 75 160 Ohms VDD=5.5V", [2])
    assert (reworded.outcome, reworded.method, reworded.page) == (Outcome.grounded, "row", 2)
    different = ground_value(synthetic, 0, {"typical": 75, "unit": "ohm"}, "Wiper current limit 75 mA at 3 V", [2])
    assert different.outcome is Outcome.quote_not_found


def test_ellipsis_fragments_and_dot_leaders(synthetic: DatasheetIndex) -> None:
    elided = ground_value(synthetic, 0, {"typical": 75, "max": 160, "unit": "ohm"},
                          "Wiper resistance ... 75 160 Ohm", [2])
    assert elided.outcome is Outcome.grounded
    leader = ground_value(synthetic, 0, {"max": 100, "unit": "ppm"}, "Temperature coefficient ..... 100 ppm", [3])
    assert (leader.outcome, leader.method) == (Outcome.grounded, "normalised")


def test_numbers_compare_numerically(synthetic: DatasheetIndex) -> None:
    comma = ground_value(synthetic, 0, {"max": 5.25, "unit": "V"}, "VMax=5,25V", [2])
    assert comma.outcome is Outcome.grounded
    dot = ground_value(synthetic, 0, {"typical": 0.02, "unit": "%"}, "Resolution .020 %", [2])
    assert dot.outcome is Outcome.grounded
    scaled = ground_value(synthetic, 0, {"typical": 0.0025, "unit": "mA"}, "Low quiescent current (2.5 uA typical)",
                          [1])
    assert scaled.outcome is Outcome.grounded
    thousands = ground_value(synthetic, 0, {"typical": 10, "unit": "kohm"}, "Part 10,000 Ohm model", [3])
    assert thousands.outcome is Outcome.grounded
    plus_minus = ground_value(synthetic, 0, {"min": -50, "max": 50, "unit": "ppm/degC"}, "Threshold +/-50 ppm/C", [2])
    assert plus_minus.outcome is Outcome.grounded


def test_number_parsing() -> None:
    readings = [n.values for n in numbers_in("-0.6V to +7.0V, 250–10000 Hz, 10,000 .020 5,25V ±50 1.5E-3")]
    assert readings == [(-0.6,), (7.0,), (250.0,), (10000.0,), (10000.0, 10.0), (0.02,), (5.25,), (50.0,),
                        (0.0015,)]
    assert [n.unit for n in numbers_in("2.7V 5 µA 8 kΩ")] == ["V", "µA", "kΩ"]
    # A digit inside a part number is not a printed value.
    assert [n.values for n in numbers_in("17HS4401 T0H")] == [(17.0,)]
    assert number_occurs(2500.0, "nA", numbers_in("— 2.5 5 µA"))
    assert not number_occurs(2.6, "uA", numbers_in("— 2.5 5 µA"))


def test_normalisation_of_text_layer_defects() -> None:
    assert normalised("RL = 2 kW, Tmin £ Tamb") == normalised("RL = 2 kΩ, Tmin ≤ Tamb")
    assert normalised("Coefﬁ cient ±50 ppm/℃") == normalised("Coefficient +/-50 ppm/°C")
    assert normalised("5 µA") == normalised("5 μA") == normalised("5 uA")
    assert normalised("Range........ 200") == normalised("Range ... 200")


@pytest.fixture(scope="module")
def gold(datasheets_dir: Path, claims_file: Path) -> tuple[list[dict], dict[str, DatasheetIndex]]:
    data = yaml.safe_load(claims_file.read_text())
    indexes = {key: open_index(datasheets_dir / doc["file"]) for key, doc in data["documents"].items()}
    return data["claims"], indexes


def _value(claim: dict) -> dict:
    return {k: claim.get(k) for k in ("min", "typical", "max", "unit")}


def test_every_gold_claim_grounds_exactly_on_its_page(gold: tuple[list[dict], dict[str, DatasheetIndex]]) -> None:
    claims, indexes = gold
    failures = []
    for claim in claims:
        result = ground_value(indexes[claim["document"]], 0, _value(claim), claim["source_text"], [claim["page"]])
        if (result.outcome, result.method, result.page) != (Outcome.grounded, "exact", claim["page"]) \
                or not result.boxes:
            failures.append((claim["id"], result.outcome, result.method, result.detail))
    assert not failures


def test_gold_quotes_do_not_ground_in_other_datasheets(gold: tuple[list[dict], dict[str, DatasheetIndex]]) -> None:
    claims, indexes = gold
    pairs = [(claim, key, index) for claim in claims for key, index in indexes.items() if key != claim["document"]]
    results = [(claim["id"], key, ground_value(index, 0, _value(claim), claim["source_text"], [claim["page"]]))
               for claim, key, index in pairs]
    grounded_elsewhere = [(c, k, r.method) for c, k, r in results
                          if r.outcome in (Outcome.grounded, Outcome.grounded_other_page)]
    # Found as printed in another datasheet: never. Aligned to another datasheet's row (a short generic quote such
    # as an operating temperature range whose label and numbers that datasheet prints too): rarely.
    assert not [g for g in grounded_elsewhere if g[2] != "row"]
    assert len(grounded_elsewhere) <= 0.01 * len(pairs), grounded_elsewhere


def test_tool_output_provenance(synthetic: DatasheetIndex, tmp_path: Path) -> None:
    from app.detectors.grounding import output_fragments, provenance

    own = {"hits": [{"page": 2, "text": "Supply Voltage VDD 2.7 - 5.5 V", "section": "Made-up > Path",
                     "snippet": "Electrical characteristics / Wiper resistance RW 75 160 Ohm VDD = 5.5 V"}]}
    assert output_fragments(own) == ["Supply Voltage VDD 2.7 - 5.5 V", "Electrical characteristics",
                                     "Wiper resistance RW 75 160 Ohm VDD = 5.5 V"]
    assert provenance(synthetic, own).share == 1.0
    other = tmp_path / "other.pdf"
    text_pdf(["Fan speed 3000 rpm nominal\nAirflow 109.9 m3/h at full speed\nNoise level 43.5 dB(A)"], path=other)
    foreign = {"text": open_index(other).page(1).text}
    result = provenance(synthetic, foreign)
    assert result.total == 3 and result.found == 0
    table = {"tables": [{"markdown": "| Supply Voltage | VDD | 2.7 | 5.5 |\n|---|---|---|---|"}]}
    assert provenance(synthetic, table).share == 1.0
