"""Parameter-name vocabulary: how datasheets name, abbreviate and measure the quantities engineers ask for.

An engineer types "Supply voltage"; the table says "Operating Supply Voltage", "Power supply voltage" or just
"VDD". Each concept below lists the phrasings and the conventional symbols manufacturers use, plus the
dimension its values must have (a supply *current* row is never the answer to a supply *voltage* question).
The list is general datasheet convention, meant to grow; nothing in it is specific to one document.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from app.agent.offline.model_units import requested_unit
from app.units import Unit, parse_unit

VOLTAGE = "[mass] * [length] ** 2 / [time] ** 3 / [current]"
CURRENT = "[current]"
POWER = "[mass] * [length] ** 2 / [time] ** 3"
RESISTANCE = "[mass] * [length] ** 2 / [time] ** 3 / [current] ** 2"
FREQUENCY = "1 / [time]"
TIME = "[time]"
TEMPERATURE = "temperature"
CAPACITANCE = "[current] ** 2 * [time] ** 4 / [mass] / [length] ** 2"
INDUCTANCE = "[mass] * [length] ** 2 / [time] ** 2 / [current] ** 2"


@dataclass(frozen=True)
class Concept:
    key: str
    phrases: tuple[str, ...]
    symbols: tuple[str, ...] = ()
    dimensions: tuple[str, ...] = ()


CONCEPTS: tuple[Concept, ...] = (
    Concept("supply_voltage", ("supply voltage", "power supply voltage", "operating supply voltage",
                               "operating voltage", "supply voltage range", "input supply voltage",
                               "nominal voltage", "rated voltage"),
            ("VDD", "VCC", "VS", "VSUP", "VBAT", "V+"), (VOLTAGE,)),
    Concept("input_voltage", ("input voltage", "input voltage range"), ("VIN", "VI"), (VOLTAGE,)),
    Concept("supply_current", ("supply current", "quiescent current", "operating current", "current consumption",
                               "standby current", "no load current", "power supply current"),
            ("IDD", "ICC", "IQ", "IS", "ISUP"), (CURRENT,)),
    Concept("operating_temperature", ("operating temperature", "operating temperature range",
                                      "ambient temperature", "operating free air temperature range",
                                      "operating junction temperature", "ambient operating temperature"),
            ("TA", "TOP", "TOPR", "TOPER", "TOPT", "TAMB"), (TEMPERATURE,)),
    Concept("storage_temperature", ("storage temperature", "storage temperature range"), ("TSTG", "TS"),
            (TEMPERATURE,)),
    Concept("junction_temperature", ("junction temperature", "maximum junction temperature"), ("TJ",),
            (TEMPERATURE,)),
    Concept("clock_frequency", ("clock frequency", "operating frequency", "frequency", "clock speed"),
            ("FCLK", "FSCK", "FOSC", "F"), (FREQUENCY,)),
    Concept("gain_bandwidth", ("gain bandwidth product", "gain bandwidth", "unity gain bandwidth",
                               "bandwidth unity gain"), ("GBP", "GBW", "GB"), (FREQUENCY,)),
    Concept("bandwidth", ("bandwidth", "-3 db bandwidth", "frequency response"), ("BW", "F3DB"), (FREQUENCY,)),
    Concept("slew_rate", ("slew rate",), ("SR",), ("[mass] * [length] ** 2 / [time] ** 4 / [current]",)),
    Concept("voltage_gain", ("voltage gain", "gain", "large signal voltage gain", "dc voltage gain",
                             "open loop gain"), ("GV", "AV", "AVD", "AVOL", "AOL"), ("level_db", "gain_v_per_v")),
    Concept("output_power", ("output power", "power output", "rated power"), ("POUT", "PO"), (POWER,)),
    Concept("power_dissipation", ("power dissipation", "total power dissipation", "total dissipation"), ("PD", "PTOT"),
            (POWER,)),
    Concept("input_power", ("input power", "power consumption", "power input"), ("PIN",), (POWER,)),
    Concept("input_low_voltage", ("low level input voltage", "input low voltage", "low-level input voltage",
                                  "input low-level voltage", "logic low voltage", "voltage for logic low",
                                  "low voltage input"), ("VIL",), (VOLTAGE,)),
    Concept("input_high_voltage", ("high level input voltage", "input high voltage", "high-level input voltage",
                                   "input high-level voltage", "logic high voltage", "voltage for logic high",
                                   "high voltage input"), ("VIH",), (VOLTAGE,)),
    Concept("forward_voltage", ("forward voltage",), ("VF",), (VOLTAGE,)),
    Concept("forward_current", ("forward current", "dc forward current"), ("IF",), (CURRENT,)),
    Concept("resistance", ("resistance", "nominal resistance", "total resistance", "end to end resistance"),
            ("R", "RAB", "RT"), (RESISTANCE,)),
    Concept("input_impedance", ("input impedance", "input resistance"), ("RIN", "ZIN"), (RESISTANCE,)),
    Concept("output_impedance", ("output impedance", "output resistance"), ("ROUT", "ZOUT"), (RESISTANCE,)),
    Concept("wiper_resistance", ("wiper resistance",), ("RW", "RWB"), (RESISTANCE,)),
    Concept("temperature_coefficient", ("temperature coefficient", "tempco", "temp co"), ("TC", "TCR"),
            ("tempco",)),
    Concept("resolution", ("resolution", "number of taps", "steps"), ("N",), ()),
    Concept("data_rate", ("data rate", "data transfer rate", "transmission rate", "baud rate", "speed",
                          "send data at speeds"), (), ("bitrate",)),
    Concept("output_current", ("output current", "output source current", "output sink current",
                               "output current source", "output current sink", "source current", "sink current"),
            ("IO", "IOUT", "ISOURCE", "ISINK"), (CURRENT,)),
    Concept("rated_current", ("rated current", "nominal current", "current per phase", "phase current"),
            ("IN", "IR"), (CURRENT,)),
    Concept("delay_time", ("delay time", "propagation delay", "transmission delay time"), ("TPD", "TPLZ", "TD"),
            (TIME,)),
    Concept("psrr", ("power supply rejection ratio", "supply voltage rejection ratio", "supply rejection ratio",
                     "ripple rejection"), ("PSRR", "SVR", "KSVR"), ("level_db",)),
    Concept("cmrr", ("common mode rejection ratio", "common mode rejection"), ("CMRR", "CMR"), ("level_db",)),
    Concept("offset_voltage", ("input offset voltage", "offset voltage"), ("VIO", "VOS"), (VOLTAGE,)),
    Concept("bias_current", ("input bias current", "bias current"), ("IIB", "IB", "IBIAS"), (CURRENT,)),
    Concept("leakage_current", ("leakage current", "off state leakage current", "reverse current"),
            ("ILK", "IL", "IR", "ILEAK"), (CURRENT,)),
    Concept("short_circuit_current", ("short circuit current", "output short circuit current"), ("ISC", "IOS"),
            (CURRENT,)),
    # A thyristor's or diode's one-cycle surge: ITSM (on-state) and IFSM (forward) are its JEDEC symbols.
    Concept("surge_current", ("surge current", "peak surge current", "non repetitive surge current",
                              "surge on state current", "non repetitive surge on state current",
                              "peak non repetitive surge current", "forward surge current"),
            ("ITSM", "IFSM"), (CURRENT,)),
    Concept("rise_time", ("rise time",), ("TR",), (TIME,)),
    Concept("fall_time", ("fall time",), ("TF",), (TIME,)),
    Concept("switching_frequency", ("switching frequency", "oscillator frequency"), ("FSW", "FOSC"), (FREQUENCY,)),
    Concept("sample_rate", ("sample rate", "sampling rate", "conversion rate", "output data rate"), ("FS",), ()),
    Concept("thd", ("total harmonic distortion", "thd+n", "distortion"), ("THD",), ("ratio", "level_db")),
    Concept("thermal_resistance", ("thermal resistance", "thermal resistance junction to ambient"),
            ("RTHJA", "THETAJA", "ΘJA", "RΘJA"), ("thermal_resistance",)),
    Concept("capacitance", ("input capacitance", "capacitance", "pin capacitance"), ("CIN", "CI", "C"),
            ("[current] ** 2 * [time] ** 4 / [mass] / [length] ** 2",)),
    Concept("diode_capacitance", ("junction capacitance", "diode capacitance", "total capacitance"),
            ("CJ", "CD", "CT"), ("[current] ** 2 * [time] ** 4 / [mass] / [length] ** 2",)),
    Concept("efficiency", ("efficiency", "conversion efficiency", "max efficiency"), ("ETA", "Η"), ("ratio",)),
    # A receiver's sensitivity is printed as "Sensitivity" in its receiver section; a sensor's sensitivity has
    # other units, so the concept says no dimension.
    Concept("receiver_sensitivity", ("receiver sensitivity", "rx sensitivity", "sensitivity"), ("RXSENS",), ()),
    Concept("luminous_intensity", ("luminous intensity",), ("IV",), ("luminous",)),
    Concept("wavelength", ("dominant wavelength", "peak wavelength", "wavelength"), ("ΛD", "ΛP", "ΛPEAK"),
            ("[length]",)),
    Concept("weight", ("weight", "mass", "net weight"), (), ("[mass]",)),
    Concept("pixels", ("number of pixels", "effective pixels", "resolution"), (), ("count_pixels",)),
)

STOPWORDS = frozenset({
    "a", "an", "the", "of", "for", "and", "or", "in", "at", "on", "to", "with", "per", "by", "from", "all", "its",
    "is", "are", "as", "be", "any", "each", "that", "this", "which", "option", "version", "part", "device",
    "devices", "model", "type", "value", "values"
})

# Qualifiers that are not conditions but say which reading is wanted.
ABS_MAX_WORDS = re.compile(r"absolute\s+max(?:imum)?|abs\.?\s*max|max(?:imum)?\s+rating|"
                           r"^\s*max(?:imum)?\b.*\bratings?\s*$", re.IGNORECASE)
# The words that say so, as a phrase of the name ("Absolute maximum supply voltage", "Supply voltage, abs. max.
# rating"): the quantity the request names is the rest.
_ABS_MAX_PHRASE = re.compile(r"\b(?:absolute\s+max(?:imum)?\.?|abs\.?\s*max\.?|max(?:imum)?\.?)(?:\s+ratings?\b)?",
                             re.IGNORECASE)
FIELD_WORDS = {
    "max": re.compile(r"^\s*(?:max|maximum|upper limit)\s*$", re.IGNORECASE),
    "min": re.compile(r"^\s*(?:min|minimum|lower limit)\s*$", re.IGNORECASE),
    "typical": re.compile(r"^\s*(?:typ|typical|nominal)\s*$", re.IGNORECASE),
}


def fold(text: str) -> str:
    """Compatibility-folded, lower-case text with ligatures split back into letters."""
    text = unicodedata.normalize("NFKC", text)
    return text.casefold().replace("\u00b5", "u").replace("\u03bc", "u")


@lru_cache(maxsize=100_000)
def compact(text: str) -> str:
    """Folded text without spaces, with comparison signs and garbled symbol-font forms unified."""
    text = fold(text)
    for old, new in (("≤", "<="), ("£", "<="), ("≥", ">="), ("ω", "ohm"), ("Ω".casefold(), "ohm"), ("℃", "°c"),
                     ("−", "-"), ("–", "-"), ("—", "-")):
        text = text.replace(old, new)
    return re.sub(r"\s+", "", text)


_HYPHENATED_WORDS = re.compile(r"[a-z]{2,}(?:-[a-z]{2,})+")


# Words datasheets print as one word, two words or hyphenated ("under-voltage lock-out", "undervoltage lockout").
_COMPOUNDS = {("under", "voltage"): "undervoltage", ("over", "voltage"): "overvoltage",
              ("over", "current"): "overcurrent", ("lock", "out"): "lockout", ("shut", "down"): "shutdown",
              ("start", "up"): "startup", ("wake", "up"): "wakeup", ("pull", "up"): "pullup",
              ("pull", "down"): "pulldown"}
# Acronyms of protection and supervision functions, printed as often as the words they stand for.
_ACRONYMS = {"uvlo": ("undervoltage", "lockout"), "ovlo": ("overvoltage", "lockout"),
             "ovp": ("overvoltage", "protection"), "ocp": ("overcurrent", "protection"),
             "tsd": ("thermal", "shutdown"), "esr": ("equivalent", "series", "resistance")}


@lru_cache(maxsize=100_000)
def _tokens(text: str) -> tuple[str, ...]:
    found: list[str] = []
    for t in re.split(r"[^0-9a-z+\-]+", fold(text)):
        if not t or t in ("-", "+"):
            continue
        # "duty-cycle" is the words "duty cycle"; signs and part numbers ("-40", "vcc-", "mil-std-202") stay whole.
        found.extend(t.split("-") if _HYPHENATED_WORDS.fullmatch(t) else [t])
    return _spelled_words(found)


def _spelled_words(found: list[str]) -> tuple[str, ...]:
    """Compound words joined and acronyms spelled out, so each spelling of a name has the same tokens; a word an
    acronym spells out is kept once ("UVLO Undervoltage lockout threshold" names the lockout once)."""
    joined: list[str] = []
    for t in found:
        if joined and (joined[-1], t) in _COMPOUNDS:
            joined[-1] = _COMPOUNDS[(joined[-1], t)]
        else:
            joined.append(t)
    if not any(t in _ACRONYMS for t in joined):
        return tuple(joined)
    spelled: list[str] = []
    expanded: set[str] = set()
    for t in joined:
        if t in _ACRONYMS:
            spelled.extend(w for w in _ACRONYMS[t] if w not in spelled)
            expanded.update(_ACRONYMS[t])
        elif t not in expanded or t not in spelled:
            spelled.append(t)
    return tuple(spelled)


def tokens(text: str) -> list[str]:
    return list(_tokens(text))


def content_tokens(text: str) -> list[str]:
    return [t for t in _tokens(text) if t not in STOPWORDS]


def looks_like_symbol(text: str) -> bool:
    """'VDD', 'RAB', 'tPLZ', 'GBP': short, no spaces, an upper-case letter, not a unit or a number."""
    token = text.strip()
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9+_]{0,7}", token):
        return False
    if parse_unit(token) is not None or token.lower() in STOPWORDS or sum(c.isdigit() for c in token) >= 3:
        return False
    return any(c.isupper() for c in token) and not token.isalpha() or (token.isupper() and len(token) <= 6)


# "ESD rating", "Current ratings": the word that says the value is a rating, after the quantity rated.
_RATING_WORD = re.compile(r"\s+ratings?\s*$", re.IGNORECASE)

# What a full match of a phrasing other than the typed name is worth, and of a concept's bare phrasing when the
# concept is only part of the typed name.
SYNONYM_WEIGHT = 0.9
PARTIAL_SYNONYM_WEIGHT = 0.75


@dataclass
class Query:
    """What the request asks for, split into the parts the reader scores separately."""

    name: str
    core: str
    core_tokens: list[str]
    symbols: list[str]
    qualifiers: list[str]
    conditions: list[str]
    unit: Unit | None
    unit_text: str | None
    concepts: list[Concept] = field(default_factory=list)
    wants_abs_max: bool = False
    wants_field: str | None = None
    counted: str | None = None  # "Number of analog inputs": the noun printed right after the value
    operating_point: str | None = None  # "Shutdown current at 3.3 V": the condition phrase the name ends with

    @property
    def key(self) -> tuple[object, ...]:
        """Everything scoring depends on, for caching scores across turns."""
        return (self.name, self.unit_text, tuple(self.conditions))

    @property
    def dimensions(self) -> set[str]:
        if self.unit is not None:
            return {self.unit.dimension}
        return set(named_dimensions(self.core, tuple(self.concepts)))

    @cached_property
    def phrases(self) -> list[str]:
        return [phrase for phrase, _ in self.weighted_phrases]

    @cached_property
    def weighted_phrases(self) -> list[tuple[str, float]]:
        """The name as typed, then the concepts' phrasings, each with the weight a full match of it is worth.
        A concept found inside a longer name ("thermal resistance" in "Thermal resistance junction to case")
        rephrases the words it matched while the rest of the name still has to be found; its bare phrasings
        count for less, or "junction to ambient" would read as well as "junction to case"."""
        seen: dict[str, float] = {self.core: 1.0}
        rated = _RATING_WORD.sub("", self.core).strip(" -:,")
        if rated != self.core and content_tokens(rated):
            # "ESD rating" names the quantity rated: a row says "Electrostatic discharge (ESD) | HBM | 2000 V".
            seen.setdefault(rated, SYNONYM_WEIGHT)
        if self.counted:
            seen.setdefault(self.counted, SYNONYM_WEIGHT)
        if self.unit is not None and self.unit.dimension == "bytes":
            # "SRAM size" in kB: a memory's figure in bytes is its size, which the page does not say ("8k bytes SRAM").
            bare = _SIZE_WORDS.sub(" ", self.core)
            if bare != self.core and content_tokens(bare):
                seen.setdefault(" ".join(bare.split()), SYNONYM_WEIGHT)
        folded = " ".join(tokens(self.core))
        for concept in self.concepts:
            span = _concept_span(concept, folded)
            whole = span is None or span == folded
            for phrase in concept.phrases:
                if not whole:
                    variant = f" {folded} ".replace(f" {span} ", f" {' '.join(tokens(phrase))} ", 1).strip()
                    if variant != folded:
                        seen.setdefault(variant, SYNONYM_WEIGHT)
                seen.setdefault(phrase, SYNONYM_WEIGHT if whole else PARTIAL_SYNONYM_WEIGHT)
        for phrase, weight in list(seen.items()):
            for variant in _qualifier_variants(phrase):
                seen.setdefault(variant, weight * SYNONYM_WEIGHT)
        return list(seen.items())

    @property
    def all_symbols(self) -> list[str]:
        found = list(self.symbols)
        for concept in self.concepts:
            for symbol in concept.symbols:
                if symbol not in found and len(symbol) > 1:
                    found.append(symbol)
        return found

    def broad_terms(self) -> list[str]:
        """Symbols and the single words of the name: a wider net when the phrases found nothing."""
        terms = self.all_symbols + [t for t in self.core_tokens if len(t) >= 4]
        return list(dict.fromkeys(terms))[:8] or [self.core]

    def search_terms(self) -> list[str]:
        """Phrases and symbols to search for, most specific first."""
        terms = [self.core] + list(self.phrases[1:4]) + self.symbols
        if self.wants_abs_max:
            terms.append("Absolute maximum ratings")
        unique: dict[str, str] = {}
        for term in terms:
            if term and term.casefold() not in unique:
                unique[term.casefold()] = term
        return list(unique.values())


_SIZE_WORDS = re.compile(r"\b(?:size|capacity)\b", re.IGNORECASE)


# Words datasheets use for one another in a parameter's name: a pin is a terminal ("ADJUST terminal current").
_WORD_VARIANTS = {"pin": "terminal", "terminal": "pin"}
# "High-side PMOS on-resistance", "High/low side delay matching": which switch or driver side a parameter belongs
# to, often printed only in the section or the part's description ("PMOS on resistance", "Delay matching").
_SIDE_QUALIFIER = re.compile(r"\b(?:high|low)(?:\s*/\s*(?:high|low))?[\s-]+side\b\s*", re.IGNORECASE)


def _qualifier_variants(phrase: str) -> list[str]:
    """The phrase with a word said the other usual way, and without a switch-side qualifier."""
    found = []
    words = phrase.split()
    for i, word in enumerate(words):
        other = _WORD_VARIANTS.get(word.casefold())
        if other:
            found.append(" ".join([*words[:i], other, *words[i + 1:]]))
    bare = _SIDE_QUALIFIER.sub("", phrase).strip()
    if bare != phrase.strip() and content_tokens(bare):
        found.append(bare)
    return found


# "Maximum airflow", "Max. static pressure": a limit word leading the name says which field is wanted.
_LEADING_LIMIT = re.compile(r"^(max(?:imum)?|min(?:imum)?)\b\.?\s+(?=\w)", re.IGNORECASE)
_COUNT_OF = re.compile(r"^(?:number|no\.?|count|quantity)\s+of\s+(.*)$", re.IGNORECASE)
# Abbreviations engineers type that datasheets spell out (and vice versa the phrases still match the symbol).
_ABBREVIATION_WORDS = {"i/o": "input/output", "temp": "temperature", "freq": "frequency", "res": "resistance"}
_ABBREVIATIONS = re.compile(r"(?<![\w/])(?:i/o|temp|freq|res)(?![\w/])", re.IGNORECASE)


def _spelled_out(text: str) -> str:
    return _ABBREVIATIONS.sub(lambda m: _ABBREVIATION_WORDS[m.group(0).casefold()], text)


# "SCK high time at VDD 1.8 V to 2.7 V", "Output current @ 5 V", "Sleep current in 3.3 V operation": a trailing
# phrase that states a measured condition (it holds a number) says which row or column, not what the parameter is
# called.
_CONDITION_PHRASE = re.compile(r"\s*(?:\s(?:at|for|with|under|when|in|over)\s|@)\s*(?P<condition>[^@]*\d[^@]*)$",
                               re.IGNORECASE)


def split_condition_phrase(core: str) -> tuple[str, str | None]:
    """The name without a trailing condition phrase, and that phrase (None when there is none)."""
    match = _CONDITION_PHRASE.search(core)
    if match is None or len(content_tokens(core[:match.start()])) < 1:
        return core, None
    return core[:match.start()].strip(" -:,"), match.group("condition").strip()


def parse_request(name: str, unit: str | None = None, conditions: list[str] | None = None,
                  notes: str | None = None) -> Query:
    """Split 'Supply voltage (absolute maximum)' or 'Resistance (RAB), 10 kΩ option' into core name,
    symbols and qualifiers, and attach the concepts the core name belongs to."""
    qualifiers: list[str] = []
    symbols: list[str] = []
    core = name
    for inner in re.findall(r"\(([^)]*)\)", name):
        for part in re.split(r"[,/;]", inner):
            part = part.strip()
            if not part:
                continue
            (symbols if looks_like_symbol(part) else qualifiers).append(part)
    core = re.sub(r"\([^)]*\)", " ", core)
    if "," in core:
        head, *rest = core.split(",")
        core = head
        qualifiers.extend(r.strip() for r in rest if r.strip())
    core = re.sub(r"\s+", " ", core).strip(" -:")
    core, condition_phrase = split_condition_phrase(core)
    if condition_phrase:
        qualifiers.append(condition_phrase)
    counted = _COUNT_OF.match(core)
    core = _spelled_out(core)
    wants_abs_max = bool(ABS_MAX_WORDS.search(name))
    if wants_abs_max:
        quantity = _ABS_MAX_PHRASE.sub(" ", core)
        quantity = re.sub(r"^\s*(?:of|for)\b|\bratings?\s*$", " ", quantity, flags=re.IGNORECASE)
        quantity = re.sub(r"\s+", " ", quantity).strip(" -:,")
        if content_tokens(quantity):
            core = quantity
    wants_field = None
    kept: list[str] = []
    for qualifier in qualifiers:
        if ABS_MAX_WORDS.search(qualifier):
            continue
        matched = [f for f, pattern in FIELD_WORDS.items() if pattern.match(qualifier)]
        if matched:
            wants_field = matched[0]
            continue
        kept.append(qualifier)
    leading_limit = _LEADING_LIMIT.match(core)
    if leading_limit and wants_field is None and not wants_abs_max:
        wants_field = "max" if leading_limit.group(1).lower().startswith("max") else "min"
    parsed_unit = requested_unit(unit) if unit else None
    counted_noun = _spelled_out(counted.group(1)).strip() if counted else ""
    query = Query(
        name=name, core=core, core_tokens=content_tokens(core), symbols=symbols, qualifiers=kept,
        conditions=[c for c in (conditions or []) if c and c.strip()], unit=parsed_unit, unit_text=unit,
        wants_abs_max=wants_abs_max, wants_field=wants_field,
        counted=counted_noun or None, operating_point=condition_phrase,
    )
    query.concepts = concepts_for(core, parsed_unit)
    return query


# The quantity a name's head noun (its last word) says it is: "Clamp diode current" is a current, whatever the
# words before it name, and "Power dissipation capacitance" a capacitance though it contains "power dissipation".
_HEAD_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "voltage": (VOLTAGE,), "current": (CURRENT,), "resistance": (RESISTANCE,), "impedance": (RESISTANCE,),
    "capacitance": (CAPACITANCE,), "inductance": (INDUCTANCE,), "power": (POWER, "level_dbm"),
    "frequency": (FREQUENCY,), "temperature": (TEMPERATURE,), "time": (TIME,), "delay": (TIME,),
    "tempco": ("tempco",), "bandwidth": (FREQUENCY,), "weight": ("[mass]",), "mass": ("[mass]",),
}
# Words after the head noun that say nothing of the quantity ("Supply voltage range", "Power rating").
_HEAD_TRAILERS = frozenset({"range", "rating", "ratings", "level", "limit", "limits", "value", "values", "nominal",
                            "max", "maximum", "min", "minimum", "typ", "typical", "rated", "spec"})

_POSTMODIFYING = re.compile(r"\s(?:of|over|at|for|in|to|from|between|versus|vs\.?|with|across|during|under|per|"
                            r"into|by|including|excluding|without|when|while|after|before)\s", re.IGNORECASE)


@lru_cache(maxsize=20_000)
def named_dimensions(core: str, concepts: tuple[Concept, ...]) -> frozenset[str]:
    """The dimensions a value of the named quantity may have: those of the concepts whose phrasing holds the name's
    head noun (none, when such a concept says no dimension), else the head noun's own (a concept found inside the
    name that does not reach its head names another quantity the parameter is a property of), else those of every
    concept found."""
    # "Ratio of change in reference voltage", "Output voltage tolerance over temperature": the words after the
    # first preposition qualify the head noun before it ("Gate-to-emitter", "Power-on" are words of the name).
    head_phrase = _POSTMODIFYING.split(core, maxsplit=1)[0]
    words = [w for w in tokens(head_phrase) if not w.isdigit()]
    while words and words[-1] in _HEAD_TRAILERS:
        words.pop()
    head = words[-1] if words else ""
    folded = " ".join(tokens(core))
    holding = [c for c in concepts if head in (_concept_span(c, folded) or folded).split()]
    if holding:
        return frozenset(d for c in holding for d in c.dimensions)
    if head in _HEAD_DIMENSIONS:
        return frozenset(_HEAD_DIMENSIONS[head])
    return frozenset(d for c in concepts for d in c.dimensions)


def _concept_span(concept: Concept, folded_core: str) -> str | None:
    """The phrasing of ``concept`` the (folded) name contains as whole words, longest first."""
    spans = [" ".join(tokens(p)) for p in concept.phrases]
    inside = [p for p in spans if p and f" {p} " in f" {folded_core} "]
    return max(inside, key=len) if inside else None


def concepts_for(core: str, unit: Unit | None) -> list[Concept]:
    """Concepts whose phrasing matches the core name (exactly, or as a full-token containment)."""
    folded = " ".join(tokens(core))
    found: list[Concept] = []
    for concept in CONCEPTS:
        for phrase in concept.phrases:
            phrase_folded = " ".join(tokens(phrase))
            if folded == phrase_folded or (len(folded.split()) >= 2 and f" {phrase_folded} " in f" {folded} "
                                           and len(phrase_folded.split()) >= 2):
                if unit is None or not concept.dimensions or unit.dimension in concept.dimensions:
                    found.append(concept)
                break
    return found
