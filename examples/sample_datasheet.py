"""Write ``examples/sample-datasheet.pdf``: a made-up part (the XLR330 low-dropout regulator of "Example
Semiconductor") that the project may redistribute, so the README's examples run from a fresh clone.

Four pages laid out as datasheets print them: a title page with a features list, absolute maximum ratings and
recommended operating conditions, a Min/Typ/Max electrical-characteristics table with sections and conditions,
and pin functions. The output is deterministic (no dates, no random ids), so re-running it changes nothing.

    python examples/sample_datasheet.py [OUT.pdf]
"""

from __future__ import annotations

import sys
from pathlib import Path

import pymupdf

DEFAULT_OUT = Path(__file__).resolve().parent / "sample-datasheet.pdf"
PART = "XLR330"
PAGE_W, PAGE_H = 595, 842
LEFT = 50

FEATURES = [
    "Input voltage range 2.5 V to 16 V",
    "Output current up to 300 mA",
    "Dropout voltage 180 mV typical at 300 mA",
    "Quiescent current 45 uA typical",
    "Output accuracy +/-1 % over temperature",
    "Thermal shutdown and current limit",
    "SOT-23-5 and DFN-6 packages",
]

ABS_MAX = [
    ("Parameter", "Symbol", "Min", "Max", "Unit"),
    ("Input voltage", "VIN", "-0.3", "18", "V"),
    ("Enable voltage", "VEN", "-0.3", "VIN + 0.3", "V"),
    ("Output voltage", "VOUT", "-0.3", "6", "V"),
    ("Junction temperature", "TJ", "", "150", "°C"),
    ("Storage temperature", "TSTG", "-65", "150", "°C"),
    ("ESD, human body model", "HBM", "", "2", "kV"),
]

RECOMMENDED = [
    ("Parameter", "Symbol", "Min", "Max", "Unit"),
    ("Input voltage", "VIN", "2.5", "16", "V"),
    ("Output current", "IOUT", "0", "300", "mA"),
    ("Operating temperature", "TA", "-40", "125", "°C"),
    ("Output capacitance", "COUT", "1", "", "µF"),
]

# (section title, rows); rows are parameter, symbol, conditions, min, typ, max, unit.
ELECTRICAL = [
    ("Output", [
        ("Output voltage accuracy", "VOUT(acc)", "IOUT = 1 mA", "-1", "", "1", "%"),
        ("Line regulation", "VLINE", "VIN = 3.8 V to 16 V", "", "0.02", "0.1", "%/V"),
        ("Load regulation", "VLOAD", "IOUT = 1 mA to 300 mA", "", "0.2", "0.6", "%"),
        ("Dropout voltage", "VDO", "IOUT = 300 mA", "", "180", "300", "mV"),
        ("Dropout voltage", "VDO", "IOUT = 100 mA", "", "60", "110", "mV"),
        ("Current limit", "ILIM", "VOUT = 90 % of nominal", "350", "500", "750", "mA"),
    ]),
    ("Supply", [
        ("Quiescent current", "IQ", "IOUT = 0 mA", "", "45", "70", "µA"),
        ("Shutdown current", "ISD", "VEN = 0 V", "", "0.1", "1", "µA"),
        ("Power supply rejection", "PSRR", "f = 1 kHz, IOUT = 10 mA", "", "65", "", "dB"),
    ]),
    ("Enable and protection", [
        ("Enable high threshold", "VEN(H)", "VIN = 2.5 V to 16 V", "1.2", "", "", "V"),
        ("Enable low threshold", "VEN(L)", "VIN = 2.5 V to 16 V", "", "", "0.4", "V"),
        ("Thermal shutdown", "TSD", "temperature rising", "", "165", "", "°C"),
        ("Output noise", "eN", "10 Hz to 100 kHz", "", "30", "", "µVRMS"),
    ]),
]

PINS = [
    ("Pin", "Name", "Function"),
    ("1", "VIN", "Input supply; bypass with 1 µF to GND"),
    ("2", "GND", "Ground"),
    ("3", "EN", "Enable input; high turns the regulator on"),
    ("4", "NC", "Not connected"),
    ("5", "VOUT", "Regulated output; 1 µF minimum to GND"),
]


def _footer(page: pymupdf.Page, number: int, total: int) -> None:
    page.draw_line((LEFT, PAGE_H - 50), (PAGE_W - LEFT, PAGE_H - 50), color=(0.6, 0.6, 0.6), width=0.5)
    page.insert_text((LEFT, PAGE_H - 36), f"{PART} sample datasheet · Example Semiconductor · not a real product",
                     fontsize=7, color=(0.4, 0.4, 0.4))
    page.insert_text((PAGE_W - LEFT - 40, PAGE_H - 36), f"{number} / {total}", fontsize=7, color=(0.4, 0.4, 0.4))


def _heading(page: pymupdf.Page, y: float, text: str, size: float = 12) -> float:
    page.insert_text((LEFT, y), text, fontsize=size, fontname="hebo")
    return y + size + 8


def _table(page: pymupdf.Page, y: float, rows: list[tuple[str, ...]], columns: tuple[float, ...],
           row_height: float = 16) -> float:
    """Cells placed at column positions with rules under the header and at the table's ends, as printed; a row
    with only its first cell is a section title inside the table."""
    right = PAGE_W - LEFT
    page.draw_line((LEFT - 4, y - 11), (right, y - 11), width=0.8)
    for index, row in enumerate(rows):
        bold = index == 0 or not any(row[1:])
        for x, cell in zip(columns, row, strict=True):
            if cell:
                page.insert_text((x, y), cell, fontsize=8.5, fontname="hebo" if bold else "helv")
        if index == 0:
            page.draw_line((LEFT - 4, y + 5), (right, y + 5), width=0.5)
        y += row_height
    page.draw_line((LEFT - 4, y - 11), (right, y - 11), width=0.8)
    return y + 8


def _title_page(doc: pymupdf.Document) -> None:
    page = doc.new_page(width=PAGE_W, height=PAGE_H)
    page.insert_text((LEFT, 70), PART, fontsize=26, fontname="hebo")
    page.insert_text((LEFT, 96), "300 mA Low-Dropout Linear Regulator with Enable", fontsize=14)
    y = _heading(page, 140, "1 Features")
    for feature in FEATURES:
        page.insert_text((LEFT + 8, y), f"• {feature}", fontsize=10)
        y += 15
    y = _heading(page, y + 14, "2 Applications")
    for line in ("Battery-powered sensors and wearables", "Post-regulation of switching supplies",
                 "Microcontroller and RF supplies"):
        page.insert_text((LEFT + 8, y), f"• {line}", fontsize=10)
        y += 15
    y = _heading(page, y + 14, "3 Description")
    description = (
        f"The {PART} is a low-dropout linear regulator that delivers up to 300 mA from an input of 2.5 V to 16 V. "
        "A PMOS pass element keeps the dropout voltage low and the quiescent current small and independent of "
        "the load. Fixed output voltages from 1.2 V to 5.0 V are available. The device is stable with a 1 µF "
        "ceramic output capacitor and includes current limit and thermal shutdown."
    )
    page.insert_textbox(pymupdf.Rect(LEFT, y - 10, PAGE_W - LEFT, y + 90), description, fontsize=10)
    _footer(page, 1, 4)


def _ratings_page(doc: pymupdf.Document) -> None:
    page = doc.new_page(width=PAGE_W, height=PAGE_H)
    y = _heading(page, 70, "4 Absolute Maximum Ratings")
    page.insert_text((LEFT, y), "Over operating free-air temperature range (unless otherwise noted)", fontsize=9)
    y = _table(page, y + 24, ABS_MAX, (LEFT, 250, 330, 400, 480))
    page.insert_textbox(pymupdf.Rect(LEFT, y - 4, PAGE_W - LEFT, y + 40),
                        "Stresses beyond those listed under Absolute Maximum Ratings may cause permanent damage to "
                        "the device. These are stress ratings only.", fontsize=8)
    y = _heading(page, y + 60, "5 Recommended Operating Conditions")
    _table(page, y + 10, RECOMMENDED, (LEFT, 250, 330, 400, 480))
    _footer(page, 2, 4)


def _electrical_page(doc: pymupdf.Document) -> None:
    page = doc.new_page(width=PAGE_W, height=PAGE_H)
    y = _heading(page, 70, "6 Electrical Characteristics")
    page.insert_text((LEFT, y), "VIN = VOUT(nom) + 1 V, IOUT = 1 mA, CIN = COUT = 1 µF, TA = 25 °C "
                     "(unless otherwise noted)", fontsize=9)
    columns = (LEFT, 185, 240, 385, 425, 465, 505)
    rows: list[tuple[str, ...]] = [("Parameter", "Symbol", "Test conditions", "Min", "Typ", "Max", "Unit")]
    for section, section_rows in ELECTRICAL:
        rows.append((section, "", "", "", "", "", ""))
        rows.extend(section_rows)
    _table(page, y + 24, rows, columns)
    _footer(page, 3, 4)


def _pins_page(doc: pymupdf.Document) -> None:
    page = doc.new_page(width=PAGE_W, height=PAGE_H)
    y = _heading(page, 70, "7 Pin Functions")
    y = _table(page, y + 10, PINS, (LEFT, 100, 160))
    y = _heading(page, y + 20, "8 Application Information")
    page.insert_textbox(pymupdf.Rect(LEFT, y - 10, PAGE_W - LEFT, y + 120),
                        "Place the input and output capacitors close to the device. The dropout voltage rises with "
                        "the output current; at 300 mA allow at least 300 mV between input and output over "
                        "temperature. Power dissipation is (VIN - VOUT) x IOUT; keep the junction below 125 °C.",
                        fontsize=10)
    _footer(page, 4, 4)


def build() -> bytes:
    doc = pymupdf.open()
    doc.set_metadata({"title": f"{PART} 300 mA low-dropout regulator (sample datasheet)",
                      "author": "Example Semiconductor", "creator": "examples/sample_datasheet.py",
                      "producer": "PyMuPDF", "creationDate": "", "modDate": ""})
    for page_maker in (_title_page, _ratings_page, _electrical_page, _pins_page):
        page_maker(doc)
    data = doc.tobytes(garbage=4, deflate=True, no_new_id=True)
    doc.close()
    return data


def main(argv: list[str]) -> None:
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    out.write_bytes(build())
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv)
