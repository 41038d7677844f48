"""Units as datasheets print them: recognise the token, give it one ASCII spelling, and know its dimension.

Datasheets spell the same unit many ways (``µA``/``μA``/``uA``, ``Ω``/``Ω``/``ohm``, ``°C``/``℃``, ``KΩ``),
and a text layer may garble them further. The reader needs three things from a unit: a canonical ASCII
spelling to report, a dimension to tell a supply current from a supply voltage, and a factor to SI so two
readings can be compared. ``pint`` supplies dimension and factor for physical units; the few counted or
logarithmic units of datasheets (dB, %, taps, megapixels) are handled by name, because pint either
lacks them or treats them as offsets and logarithms that no datasheet table means.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# Printed variants -> ASCII, applied before lookup. Order matters: multi-character forms first.
_REPLACEMENTS: tuple[tuple[str, str], ...] = (
    ("\u2126", "ohm"),  # Ohm sign
    ("\u03a9", "ohm"),  # Greek capital omega
    ("\u00b5", "u"),  # micro sign
    ("\u03bc", "u"),  # Greek mu
    ("\u2103", "degC"),
    ("\u2109", "degF"),
    ("°C", "degC"),
    ("ºC", "degC"),  # masculine ordinal for the degree sign
    ("\u02daC", "degC"),  # ring above for the degree sign
    ("°F", "degF"),
    ("°", "deg"),
)

# Units that pint does not model the way datasheets mean them: canonical -> (dimension, factor to base). Durations
# spelled out ("sec", "hrs") carry pint's dimension, so they compare with the seconds pint parses.
_NAMED: dict[str, tuple[str, float]] = {
    "dB": ("level_db", 1.0),
    "dBm": ("level_dbm", 1.0),
    "dBA": ("level_dba", 1.0),
    "dB(A)": ("level_dba", 1.0),
    "%": ("ratio", 0.01),
    "ppm": ("ratio", 1e-6),
    "ppm/degC": ("tempco", 1e-6),
    "taps": ("count_taps", 1.0),
    "steps": ("count_taps", 1.0),
    "bit": ("count_bits", 1.0),
    "bits": ("count_bits", 1.0),
    "LSB": ("count_lsb", 1.0),
    "megapixels": ("count_pixels", 1e6),
    "pixels": ("count_pixels", 1.0),
    "rpm": ("speed_rpm", 1.0),
    "mcd": ("luminous", 1e-3),
    "cd": ("luminous", 1.0),
    "degC": ("temperature", 1.0),
    "degF": ("temperature_f", 1.0),
    "deg": ("angle", 1.0),
    "V/mV": ("gain_v_per_v", 1e3),
    "V/V": ("gain_v_per_v", 1.0),
    "bps": ("bitrate", 1.0),
    "kbps": ("bitrate", 1e3),
    "Kbps": ("bitrate", 1e3),
    "Mbps": ("bitrate", 1e6),
    "Gbps": ("bitrate", 1e9),
    "h": ("[time]", 3600.0),
    "hrs": ("[time]", 3600.0),
    "hours": ("[time]", 3600.0),
    "min": ("[time]", 60.0),
    "sec": ("[time]", 1.0),
    "years": ("[time]", 31_557_600.0),
    "revolutions": ("count_revolutions", 1.0),
    "cycles": ("count_cycles", 1.0),
    "dots": ("count_dots", 1.0),
    "shots": ("count_shots", 1.0),
    "fps": ("frame_rate", 1.0),
    "degC/W": ("thermal_resistance", 1.0),
    "K/W": ("thermal_resistance", 1.0),
    "m3/h": ("volume_flow", 1 / 3600),
    "mmH2O": ("pressure_mmh2o", 1.0),
    "B": ("bytes", 1.0),
    "bytes": ("bytes", 1.0),
    "kB": ("bytes", 1e3),
    "KB": ("bytes", 1e3),
    "Kbytes": ("bytes", 1e3),
    "kbytes": ("bytes", 1e3),
    "Mbytes": ("bytes", 1e6),
    "MB": ("bytes", 1e6),
    "GB": ("bytes", 1e9),
}

_PREFIX = "pnumkKMG"
_SI_BASES = ("V", "A", "W", "Hz", "ohm", "s", "F", "H", "m", "g", "N", "J", "Wh", "Ah", "Nm", "VA")

# Unit tokens as they follow a number in text, longest first so that "mA" wins over "m".
_TOKEN_ALTERNATIVES = sorted(
    [
        r"ppm\s?/\s?(?:°C|ºC|℃|K)", r"V\s?/\s?[µμu]s", r"V\s?/\s?mV", r"V\s?/\s?V", r"mV\s?/\s?(?:°C|℃)",
        r"[µμu]V\s?/\s?(?:°C|℃)", r"[np]A\s?/\s?(?:°C|℃)", r"°C\s?/\s?W", r"K\s?/\s?W", r"m³\s?/\s?h", r"mmH[2]?[0O]",
        r"dB\s?\(A\)", r"dBA", r"dBm", r"dB", r"°C", r"ºC", r"\u02daC", r"℃", r"°F", r"℉", r"%", r"ppm",
        r"[pnuµμmkKMG]?(?:Ω|Ω|ohms?|Ohms?)", r"[pnuµμmkKMG]?Hz", r"[pnuµμmkKMG]?V(?:pp|rms|RMS|DC|AC)?",
        r"[pnuµμmkKMG]?A", r"[pnuµμmkKMG]?W", r"[pnuµμm]?F", r"[pnuµμm]?H", r"[pnuµμm]s", r"sec", r"s",
        r"[KkMG]?bps", r"[kKMG]?bit/s", r"megapixels?", r"pixels?", r"[Tt]aps", r"[Ss]teps", r"bits?", r"LSB",
        r"RPM", r"rpm", r"mcd", r"cd", r"nm", r"[mc]m", r"k?g", r"mNm", r"N\.?cm", r"hrs", r"h", r"min", r"deg",
        r"dots", r"fps", r"[kKMG]B", r"[kK]?bytes", r"[kKMG]\sbytes",
        r"N-cm", r"[kKM]\s(?:[Oo]hms?|Ω)", r"m3\s?/\s?h", r"(?:kil|meg)ohms?", r"watts?",
        r"volts?", r"amps?", r"hours?", r"years?", r"revolutions?", r"cycles?", r"milliseconds?",
        r"microseconds?", r"seconds?",
    ],
    key=len,
    reverse=True,
)
UNIT_TOKEN_RE = "(?:" + "|".join(_TOKEN_ALTERNATIVES) + ")"


# Units written out as words (dot-leader spec lists: "2 watts", "1,000 megohms", "0.1 millisecond").
_WORD_UNITS: dict[str, str] = {
    "kilohm": "kohm", "kilohms": "kohm", "megohm": "Mohm", "megohms": "Mohm", "watt": "W", "watts": "W",
    "volt": "V", "volts": "V", "amp": "A", "amps": "A", "millisecond": "ms", "milliseconds": "ms",
    "microsecond": "us", "microseconds": "us", "second": "s", "seconds": "s", "n-cm": "N.cm", "ncm": "N.cm",
}


_PLURAL_WORDS = {w: p for p in ("years", "revolutions", "cycles", "hours", "pixels") for w in (p, p[:-1])}


@dataclass(frozen=True)
class Unit:
    """A recognised unit: ``canonical`` ASCII spelling, ``dimension`` key, ``factor`` to SI base."""

    canonical: str
    dimension: str
    factor: float


def canonical_spelling(token: str) -> str:
    """The ASCII spelling of a printed unit token (``µA`` -> ``uA``, ``KΩ`` -> ``kohm``, ``℃`` -> ``degC``)."""
    text = re.sub(r"\s+", "", token.strip())
    for old, new in _REPLACEMENTS:
        text = text.replace(old, new)
    text = re.sub(r"(?i)^([pnumkKMG]?)ohms?$", lambda m: m.group(1) + "ohm", text)
    text = _WORD_UNITS.get(text.lower(), text)
    text = text.replace("³", "3")
    if re.fullmatch(r"mmH2?[0O]", text):
        text = "mmH2O"  # water column, often printed with a zero
    if text.startswith("Kohm"):
        text = "k" + text[1:]
    if text.lower() in ("megapixel", "megapixels"):
        return "megapixels"
    if text.lower() in ("tap", "taps"):
        return "taps"
    # Counts and durations written as words: one spelling whatever the number ("1 year", "6 years").
    plural = _PLURAL_WORDS.get(text.lower())
    if plural:
        return plural
    if text in ("Vpp", "Vrms", "VRMS", "VDC", "VAC"):
        return "V"
    if re.fullmatch(r"[pnumk]v", text):
        return text[0] + "V"  # "40 mv": the volt printed in lower case after a prefix ("v" alone is no unit)
    if text.endswith("Hz") and text[:-2] == "K":
        return "kHz"
    if text in ("kbit/s", "Kbit/s"):
        return "kbps"
    return text


# Count-like units datasheets print that pint does not define (or, depending on its version, does).
_EXTRA_DEFINITIONS = ("count = [] = counts", "tap = [] = taps", "step = [] = steps", "LSB = [] = lsb",
                      "sample = [] = samples", "bps = bit / second", "permille = 0.001 = ‰")


@lru_cache(maxsize=1)
def unit_registry() -> Any:
    """The process's one pint registry (building one costs about half a second, so every reader shares it):
    offset units convert through their base unit, and the count units above are defined."""
    import pint

    registry = pint.UnitRegistry(autoconvert_offset_to_baseunit=True, cache_folder=":auto:")
    for definition in _EXTRA_DEFINITIONS:
        if definition.split("=", 1)[0].strip() in registry:
            continue  # this pint version already defines it
        with contextlib.suppress(Exception):
            registry.define(definition)
    return registry


def one_unit_repeated(printed: str) -> str:
    """A unit cell shared by several rows and filled into each ("°C C": the block's unit and the next row's, whose
    degree sign the text layer lost) names one unit: its first word, when every other word repeats it."""
    words = printed.split()
    if len(words) > 1 and all(word in (words[0], words[0].lstrip("°º˚")) for word in words[1:]):
        return words[0]
    return printed


@lru_cache(maxsize=512)
def parse_unit(token: str | None) -> Unit | None:
    """The unit a printed token names, or None when it is not a unit this reader knows."""
    if not token or not token.strip():
        return None
    canonical = canonical_spelling(one_unit_repeated(token))
    canonical = _HERTZ_IN_CAPITALS.get(canonical, canonical)
    if canonical in _NAMED:
        dimension, factor = _NAMED[canonical]
        return Unit(canonical, dimension, factor)
    if canonical.lower() in _NAMED:
        dimension, factor = _NAMED[canonical.lower()]
        return Unit(canonical.lower(), dimension, factor)
    if not _looks_physical(canonical):
        return None
    pint_name = canonical.replace("kohm", "kiloohm").replace("Mohm", "megaohm")
    if pint_name.startswith("K") and pint_name[1:] in _SI_BASES:
        pint_name = "k" + pint_name[1:]
    try:
        quantity = unit_registry().Quantity(1.0, pint_name).to_base_units()
    except Exception:  # noqa: BLE001 - pint raises several unrelated types for unknown names
        return None
    dimension = str(quantity.dimensionality)
    return Unit(canonical if not canonical.startswith("K") else "k" + canonical[1:], dimension,
                float(quantity.magnitude))


# Frequencies printed in capitals ("KHZ", "MHZ"): unambiguous, since no datasheet prints millihertz that way.
_HERTZ_IN_CAPITALS = {"HZ": "Hz", "KHZ": "kHz", "MHZ": "MHz", "GHZ": "GHz"}


def _looks_physical(canonical: str) -> bool:
    if "/" in canonical:
        return all(_looks_physical(part) for part in canonical.split("/"))
    for base in _SI_BASES:
        if canonical == base or (len(canonical) == len(base) + 1 and canonical.endswith(base)
                                 and canonical[0] in _PREFIX + "u"):
            return True
    return canonical in ("mm", "cm", "nm", "um", "kg", "mNm", "N.cm", "Ncm")


# Printed glyphs -> the ASCII spelling claim files use. Longer forms first.
_CLAIM_GLYPHS: tuple[tuple[str, str], ...] = (
    ("\u2126", "ohm"), ("\u03a9", "ohm"), ("\u00b5", "u"), ("\u03bc", "u"), ("\u2103", "degC"),
    ("°C", "degC"), ("ºC", "degC"), ("\u02daC", "degC"), ("°F", "degF"), ("\u2109", "degF"), ("°", "deg"),
)


def claim_spelling(unit: str | None) -> str:
    """A unit as claim files spell it: ``µA``→``uA``, ``kΩ``→``kohm``, ``°C``→``degC``, whitespace removed."""
    if not unit:
        return ""
    text = unit.strip()
    for glyph, ascii_form in _CLAIM_GLYPHS:
        text = text.replace(glyph, ascii_form)
    return re.sub(r"\s+", "", text)
