"""How the dashboard words values, attributions and highlights."""

from __future__ import annotations

from types import SimpleNamespace

from app.dashboard.legend import ATTRIBUTIONS, attribution_text, attribution_title
from app.dashboard.views import _highlight_boxes, _value_text
from app.detectors.attribution import CATEGORIES, CHARGED_TO


def test_one_sided_values_read_as_limits_not_ranges_to_infinity() -> None:
    assert _value_text({"min": 1.0, "unit": "ohm"}) == "≥ 1 Ω"
    assert _value_text({"max": 5.0, "unit": "V"}) == "≤ 5 V"
    assert _value_text({"min": 2.7, "typical": 3.3, "max": 5.5, "unit": "V"}) == "2.7 … 5.5 (typ 3.3) V"
    assert _value_text({"typical": 45.0, "unit": "kohm"}) == "45 kΩ"
    assert _value_text({"min": 1.0, "typical": 2.0}) == "≥ 1 (typ 2)"


def test_every_attribution_category_has_words_and_an_explanation() -> None:
    assert set(ATTRIBUTIONS) == set(CATEGORIES)
    for category in CATEGORIES:
        text = attribution_text({"category": category, "charged_to": CHARGED_TO[category]})
        assert "_" not in text and "→" not in text and text
        assert attribution_title({"category": category, "charged_to": CHARGED_TO[category]})
    assert attribution_text({"category": "ok", "charged_to": "none"}) == "no fault"
    assert attribution_text({"category": "unclassified", "charged_to": "unknown"}) == "unexplained · cause unknown"


def test_highlight_prefers_the_value_own_boxes_and_falls_back_to_the_passage() -> None:
    passage = [[10.0, 10.0, 200.0, 20.0]]
    value = [[150.0, 10.0, 170.0, 20.0]]
    assert _highlight_boxes(SimpleNamespace(boxes=passage, detail={"value_boxes": value})) == value
    assert _highlight_boxes(SimpleNamespace(boxes=passage, detail={})) == passage
    assert _highlight_boxes(SimpleNamespace(boxes=passage, detail=None)) == passage
