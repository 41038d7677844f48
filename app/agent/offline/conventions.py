"""The datasheet conventions the offline reader reads, as data: each with a made-up example and what it yields.

This table is the reader's specification. Every entry names one convention that electronics datasheets share,
shows it on an invented page (tables drawn with rules, prose lines), and states the answer a request must get
from that page, or that the reader must decline and why. The tests draw each example as a PDF and run it
through the real document index, table tool and reader, so a convention listed here is a convention the reader
keeps. A rule that only one datasheet needs does not belong here, nor in the reader.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Rows = tuple[tuple[str, ...], ...]

_HEADER = ("Characteristics", "Symbol", "Test Conditions", "Min.", "Typ.", "Max.", "Units")


@dataclass(frozen=True)
class Expected:
    """The answer a convention yields: fields as the datasheet states them, unit as printed (ASCII)."""

    min: float | None = None
    typical: float | None = None
    max: float | None = None
    unit: str | None = None


@dataclass(frozen=True)
class Page:
    """An invented datasheet page, top to bottom: prose lines, then tables (each drawn as its own ruled grid,
    optionally with a title line above it)."""

    prose: tuple[str, ...] = ()
    tables: tuple[Rows, ...] = ()
    titles: tuple[str, ...] = ()  # the line above each table ("" for none)


@dataclass(frozen=True)
class Convention:
    """One convention: its name, what the reader does with it, an example page, a request and its outcome.

    ``expected`` is None exactly when the reader must decline; ``decline_mentions`` is then a phrase the reason
    must contain."""

    name: str
    reading: str
    page: Page
    request: str
    conditions: tuple[str, ...] = ()
    unit: str | None = None
    expected: Expected | None = None
    decline_mentions: str = ""
    tags: tuple[str, ...] = field(default=())


CONVENTIONS: tuple[Convention, ...] = (
    Convention(
        name="header inherited by a later section",
        reading="a section printed under the header row of the table above (no header of its own, perhaps a "
                "column fewer) takes that header's column roles: its first number is the minimum, not a typical "
                "value",
        page=Page(tables=(
            (_HEADER, ("Power Stage", "", "", "", "", "", ""),
             ("Bias rail voltage", "VBR", "Operating", "1.20", "–", "1.80", "V")),
            # No condition in this section: the table tool drops the empty column, the roles still fit.
            (("Wake-up threshold", "VWK", "0.91", "1.00", "1.09", "V"),
             ("Hold-off delay", "tHO", "2.5", "–", "7.5", "ms")),
        ), titles=("Electrical Characteristics", "Logic Interface")),
        request="Hold-off delay", unit="ms", expected=Expected(min=2.5, max=7.5, unit="ms"),
    ),
    Convention(
        name="dash and n/a cells are not specified",
        reading="'–', '—', '-', 'n/a' and blank cells in Min/Typ/Max columns are limits the datasheet does not "
                "give, never values",
        page=Page(tables=((
            ("Parameter", "Symbol", "Min", "Typ", "Max", "Unit"),
            ("Settling interval", "tSET", "—", "4.6", "n/a", "ms"),
            ("Loop bandwidth", "fLB", "-", "-", "38", "kHz"),
        ),)),
        request="Loop bandwidth", unit="kHz", expected=Expected(max=38, unit="kHz"),
    ),
    Convention(
        name="± in a Typ or Max column is a pair of limits",
        reading="'±X', '+/-X' or '+ / - X' for a quantity that is a limit (accuracy, error, offset, tolerance, "
                "ripple) is min −X / max +X in the unit column's unit",
        page=Page(tables=((
            ("Parameter", "Symbol", "Conditions", "Min.", "Typ.", "Max.", "Unit"),
            ("Scale error", "ESC", "Full range", "", "", "+/-0.35", "%"),
            ("Zero offset", "VZO", "No load", "", "±4", "", "mV"),
        ),)),
        request="Scale error", unit="%", expected=Expected(min=-0.35, max=0.35, unit="%"),
    ),
    Convention(
        name="sub-rows of a multi-row cell picked by mode",
        reading="a parameter printed once over several rows, one per mode or condition, gives each row its "
                "name; the requested mode picks its row",
        page=Page(tables=((
            ("Parameter", "Mode", "Min", "Typ", "Max", "Unit"),
            ("Acoustic floor", "Economy", "", "1.40", "", "PaRMS"),
            ("", "Balanced", "", "0.60", "", "PaRMS"),
            ("", "Fine", "", "0.25", "", "PaRMS"),
            ("Readout period", "Fine", "", "40", "55", "ms"),
        ),)),
        request="Acoustic floor", conditions=("Balanced mode",), expected=Expected(typical=0.60, unit="PaRMS"),
    ),
    Convention(
        name="unit column with a compound unit",
        reading="the unit column's unit, compound ones included ('ADC counts/(W/m2)', 'mVpp'), is carried with "
                "every value of its row, as printed",
        page=Page(tables=((
            ("Parameter", "Symbol", "Min", "Typ", "Max", "Unit"),
            ("Irradiance response", "RIR", "180", "210", "240", "ADC counts/(W/m2)"),
            ("Carrier residue", "VCR", "", "", "35", "mVpp"),
        ),)),
        request="Irradiance response", expected=Expected(180, 210, 240, "ADC counts/(W/m2)"),
    ),
    Convention(
        name="layout without a header: three value columns before the unit",
        reading="a table with no header anywhere, laid out name, symbol, three value columns, unit, reads its "
                "value columns as Min, Typ, Max",
        page=Page(tables=((
            ("Drift compensation range", "DCR", "12", "16", "20", "ms"),
            ("Pulse recovery time", "tPR", "3.5", "5.0", "6.5", "ms"),
        ),)),
        request="Pulse recovery time", unit="ms", expected=Expected(3.5, 5.0, 6.5, "ms"),
    ),
    Convention(
        name="prose range with a dash",
        reading="in a specification list or feature bullet ('Span: 300 – 1200 hPa') a dash between two numbers "
                "is a range and the unit after the second number is the unit of both",
        page=Page(prose=("QZ-17 barometric cell", "Key figures", "Measuring span: 300 – 1200 hPa",
                         "Interface clock: up to 3.4 MHz")),
        request="Measuring span", expected=Expected(min=300, max=1200, unit="hPa"),
    ),
    Convention(
        name="a limit word wrapped onto the value's line",
        reading="'Adjustable Trickle Output Current Up' / 'to 750mA' (a feature bullet wrapped between 'Up' and "
                "'to'): the name and the limit words read across the break, the value is a maximum",
        page=Page(prose=("Features", "Adjustable Trickle Output Current Up", "to 750mA", "Soft-Start Control")),
        request="Maximum trickle output current", unit="mA", expected=Expected(max=750, unit="mA"),
    ),
    Convention(
        name="merged limit header: one number per limit named",
        reading="a header cell naming two limits ('Min Typ', 'MIN MAX': the text layer merged two columns) holds "
                "one number per limit, in the order named",
        page=Page(tables=((
            ("Parameter", "Symbol", "Min Typ", "Max", "Unit"),
            ("Wake current", "IWK", "4.1 5.0", "6.2", "uA"),
            ("Sleep current", "ISL", "0.8", "1.5", "uA"),
        ),)),
        request="Wake current", unit="uA", expected=Expected(4.1, 5.0, 6.2, "uA"),
    ),
    Convention(
        name="merged limit header with fewer numbers than limits is ambiguous",
        reading="one number in a cell under a merged 'Min Typ' header may be either limit: the reader declines "
                "and says so rather than pick one",
        page=Page(tables=((
            ("Parameter", "Symbol", "Min Typ", "Max", "Unit"),
            ("Wake current", "IWK", "4.1 5.0", "6.2", "uA"),
            ("Sleep current", "ISL", "0.8", "1.5", "uA"),
        ),)),
        request="Sleep current", unit="uA", decline_mentions="merged header",
    ),
    Convention(
        name="sub-row of another condition is never the answer",
        reading="a sub-row that sets a requested quantity to another value ('VO = 0.4 V' for a requested "
                "'VO = 0.9 V') measures under other conditions; only the sub-row with the requested value answers",
        page=Page(tables=((
            ("Parameter", "Symbol", "Conditions", "Min", "Typ", "Max", "Unit"),
            ("Sink current", "ISK", "TA = 25 °C, VO = 0.4 V", "2.0", "3.1", "", "mA"),
            ("", "", "VO = 0.9 V", "4.5", "6.0", "", "mA"),
        ),)),
        request="Sink current", conditions=("TA = 25 °C", "VO = 0.9 V"), unit="mA",
        expected=Expected(min=4.5, typical=6.0, unit="mA"),
    ),
    Convention(
        name="per-part rows named by the part opening the conditions cell",
        reading="rows of one parameter whose conditions cells open with the part they are for ('QX100-1.8 VIN = "
                "3.2V', 'QX100-5.0 VIN = 6.5V') give each part its values; a requested part is answered from its own "
                "row only, never from the row of a part whose name differs by a grade letter ('QX100I-5.0')",
        page=Page(tables=((
            ("Symbol", "Parameter", "Conditions", "Min", "Typ", "Max", "Units"),
            ("dVO", "Line shift", "QX100I-1.8 VIN = 3.2V", "", "2", "12", "mV"),
            ("dVO", "Line shift", "QX100I-5.0 VIN = 6.5V", "", "2", "24", "mV"),
        ),), titles=("QX100I Electrical Characteristics",)),
        request="Line shift, QX100-5.0", conditions=("QX100-5.0",), unit="mV", decline_mentions="too weakly",
    ),
    Convention(
        name="a dash glued to a part number starts its suffix",
        reading="'QX540-16' names a grade of the part: the '-16' is no negative value, so the figures after it "
                "are the grade's",
        page=Page(prose=("QX540 series switching transistors", "Current gain grade QX540-16: 100 to 250",
                         "Transition frequency: 180 MHz")),
        request="Current gain grade", expected=Expected(min=100, max=250),
    ),
    Convention(
        name="a value printed without its unit is not guessed into one",
        reading="a row that names the parameter but prints no unit (no unit column, none in the header or the "
                "cell) does not say which unit its number is in when a dimensioned value was asked for: the "
                "reader declines and says so",
        page=Page(tables=((
            ("Parameter", "Symbol", "Conditions", "Min", "Typ", "Max"),
            ("Latch hold current", "ILH", "Gate open", "", "12", "30"),
        ),)),
        request="Latch hold current", unit="mA", decline_mentions="no unit",
    ),
    Convention(
        name="per-part rows picked by the requested part, grade suffix included",
        reading="rows of one symbol naming different parts give each part its values; a requested part "
                "('QR72') is answered from its own row, never from a row of another grade of it ('QR72A')",
        page=Page(tables=((
            ("Parameter", "Symbol", "Conditions", "Min", "Typ", "Max", "Unit"),
            ("Leakage current QR71A, QR72A", "IL", "VR = 5 V", "", "2", "10", "nA"),
            ("Leakage current QR71, QR72", "IL", "VR = 5 V", "", "2", "30", "nA"),
        ),)),
        request="Leakage current", conditions=("QR72",), unit="nA", expected=Expected(typical=2, max=30, unit="nA"),
    ),
    Convention(
        name="two rows that match the request equally well are not guessed between",
        reading="two rows of the same name with different values and nothing in the request to tell them apart "
                "(other symbols, so not variants of one parameter): the reader declines and names both",
        page=Page(tables=((
            ("Parameter", "Symbol", "Min", "Typ", "Max", "Unit"),
            ("Sense threshold", "VSA", "", "1.20", "", "V"),
            ("Sense threshold", "VSB", "", "2.40", "", "V"),
        ),)),
        request="Sense threshold", unit="V", decline_mentions="equally well",
    ),
    Convention(
        name="a sub-row at the same condition as its row is not told apart by it",
        reading="an unnamed row under a parameter printing the same condition as the parameter's own conditions "
                "cell ('TJ = 25°C' twice, another value each; a name printed lower may own the second): the "
                "requested condition names both rows, so neither is chosen by it and the reader declines",
        page=Page(tables=((
            ("Parameter", "Symbol", "Test Conditions", "Min", "Typ", "Max", "Unit"),
            ("Drift window hysteresis", "dVDW", "TJ = 25°C", "", "14", "", "mV"),
            ("", "", "TJ = 25°C", "", "27", "", "mV"),
            ("", "", "TJ = -40°C to 125°C", "3", "", "45", "mV"),
        ),), titles=("Electrical Characteristics",)),
        request="Drift window hysteresis", conditions=("TJ = 25°C",), unit="mV", decline_mentions="equally well",
    ),
    Convention(
        name="limits out of order were read from the wrong columns",
        reading="min <= typ <= max (negative limits may be printed by magnitude: -5, -12, -20); a reading whose "
                "minimum exceeds its typical value came from cells the text layer shifted into other columns: "
                "the reader declines and says so",
        page=Page(tables=((
            ("Parameter", "Symbol", "Min", "Typ", "Max", "Unit"),
            ("Common-mode rejection", "CMRR", "70", "60", "85", "dB"),
        ),)),
        request="Common-mode rejection", unit="dB", decline_mentions="out of order",
    ),
    Convention(
        name="a minimum the part needs, its typical below the limit",
        reading="'Minimum Strobe Width | Typ 9 | Limit 16' (the limit a minimum, as the name says): the typical part "
                "needs a narrower strobe than the guaranteed minimum, so a typical below that minimum is in order, "
                "not a sign of shifted columns",
        page=Page(tables=((
            ("Symbol", "Parameter", "Conditions", "Typ", "Limit", "Units"),
            ("tSW", "Minimum Strobe Width", "", "9", "16", "ns"),
            ("tSD", "Maximum Strobe Delay", "", "12", "19", "ns"),
        ),), titles=("AC Electrical Characteristics",)),
        request="Minimum strobe width", unit="ns", expected=Expected(min=16, typical=9, unit="ns"),
    ),
    Convention(
        name="a recommended-operation section ends the ratings above it",
        reading="'Recommended operation conditions' (or '... operating conditions') is a section of its own: a "
                "table under it holds operating limits, not absolute maximum ratings, even when the ratings "
                "table and its stress note sit right above it",
        page=Page(
            prose=("Stresses beyond the absolute maximum ratings may cause permanent damage to the device.",),
            tables=(
                (("Parameter", "Symbol", "Value", "Unit"),
                 ("Port supply voltage", "VPS", "-0.3 ~ 7", "V")),
                (("Parameter", "Symbol", "MIN", "Typical", "MAX", "Unit"),
                 ("Supply voltage", "VPS", "4.5", "5", "5.5", "V")),
            ), titles=("Absolute maximum ratings", "Recommended operation conditions")),
        request="Absolute maximum supply voltage", unit="V", expected=Expected(min=-0.3, max=7, unit="V"),
    ),
    Convention(
        name="a note calling a rating's figures typical makes them typical",
        reading="a row among the absolute maximum ratings whose footnote mark leads to a note saying its figures "
                "are typical values (a thermal resistance per package, say) states typical values, not limits; "
                "the note may be printed inside the table as its number on one line and its text on the next",
        page=Page(
            prose=("Absolute maximum ratings", "3.", "Heat flow figures depend on the board. Rth are typical values."),
            tables=((
                ("Symbol", "Parameter", "Value", "Unit"),
                ("Tj", "Junction temperature", "150", "°C"),
                ("Rthja", "Thermal resistance junction to ambient (3)", "135", "°C/W"),
            ),), titles=("Absolute maximum ratings",)),
        request="Thermal resistance junction to ambient", unit="degC/W",
        expected=Expected(typical=135, unit="degC/W"),
    ),
    Convention(
        name="two unlabelled value columns are ambiguous",
        reading="with no header anywhere and two value columns before the unit, which is min, typical or max "
                "is not printed: the reader declines and says so",
        page=Page(tables=((
            ("Idle draw", "IID", "1.5", "3.0", "uA"),
            ("Burst draw", "IBD", "110", "160", "uA"),
        ),)),
        request="Idle draw", unit="uA", decline_mentions="value columns",
    ),
    Convention(
        name="a unit printed with look-alike letters",
        reading="a text layer may print a unit with Cyrillic or Greek capitals that look like Latin ones ('°С' with a "
                "Cyrillic Es): the unit is the one the letters show",
        page=Page(tables=((
            ("Parameter", "Symbol", "Min", "Max", "Unit"),
            ("Case temperature", "TC", "-25", "+95", "°\u0421"),
            ("Lead temperature", "TL", "", "240", "°\u0421"),
        ),)),
        request="Case temperature", unit="degC", expected=Expected(min=-25, max=95, unit="degC"),
    ),
    Convention(
        name="a first column headed 'Rating' names the rows",
        reading="in a ratings table laid out 'Rating | Symbol | Value | Unit' (or 'Condition | Symbol | Min | Max') "
                "the first column's header reads like a value or conditions column, but its cells are the rows' names",
        page=Page(tables=((
            ("Rating", "Symbol", "Value", "Unit"),
            ("Bias pin voltage", "VB", "18", "V"),
            ("Clamp Current Range, Continuous", "ICL", "-30 to +60", "mA"),
            ("Sense Input Current Range, Continuous", "ISN", "-0.2 to +4", "mA"),
        ),), titles=("Maximum ratings",)),
        request="Continuous clamp current range", unit="mA", expected=Expected(min=-30, max=60, unit="mA"),
    ),
    Convention(
        name="a row naming only other parts continues the name above",
        reading="a row whose name cell lists part numbers alone ('QXR210C, QXR210AC'), under a row of the same symbol "
                "that names the parameter for other parts, gives that parameter for the parts it lists",
        page=Page(tables=((
            ("Rating", "Symbol", "Value", "Unit"),
            ("Operating Ambient Temperature Range QXR210I, QXR210AI", "TA", "-40 to +85", "°C"),
            ("QXR210C, QXR210AC", "TA", "0 to +70", "°C"),
            ("Storage Temperature Range", "Tstg", "-55 to +150", "°C"),
        ),), titles=("Maximum ratings",)),
        request="Operating ambient temperature range", conditions=("QXR210C",), unit="degC",
        expected=Expected(min=0, max=70, unit="degC"),
    ),
    Convention(
        name="a unit run into the conditions cell",
        reading="a row whose unit cell is empty while its conditions cell starts with a unit ('mV/°C VDS = VGS, ...'): "
                "the text layer ran the unit into the next column, and the leading unit is the row's",
        page=Page(tables=((
            ("Parameter", "Symbol", "Min", "Typ", "Max", "Unit", "Conditions"),
            ("Trip Voltage", "VTR", "2.1", "2.6", "3.1", "V", "ID = 1 mA"),
            ("Trip Voltage temp. coefficient", "dVTR/dT", "", "-4.3", "", "", "mV/°C VDS = VGS, ID = 1 mA"),
        ),)),
        request="Trip voltage temperature coefficient", unit="mV/degC",
        expected=Expected(typical=-4.3, unit="mV/degC"),
    ),
    Convention(
        name="a requested quantity picks the row that prints it",
        reading="a condition stated as a number with its unit ('0 dBm') is met only by a row printing that quantity, "
                "not by one whose other numbers happen to share its digits ('-8 dBm | 10.0 mA')",
        page=Page(tables=((
            ("Register setting", "Transmit level", "Supply draw"),
            ("3", "0 dBm", "14.2 mA"),
            ("2", "-8 dBm", "10.0 mA"),
            ("1", "-16 dBm", "8.5 mA"),
        ),), titles=("Transmit level adjustment",)),
        request="Supply draw", conditions=("0 dBm transmit level",), unit="mA",
        expected=Expected(typical=14.2, unit="mA"),
    ),
    Convention(
        name="a number ending a heading names a group",
        reading="'Current gain selection -40:' titles what follows (a figure, a grade's curves): the number before the "
                "colon names the group, it is no value of the parameter",
        page=Page(prose=("QX88 switching transistors", "Current gain selection -40:", "Current gain selection -25:")),
        request="Current gain selection", decline_mentions="no table row or text line",
    ),
    Convention(
        name="a requested condition printed as an assignment is no answer",
        reading="'IC = 150 mA; VCE = 2 V' beside the parameter's name states the conditions the request holds fixed; "
                "its numbers are those conditions, not the parameter's value",
        page=Page(prose=("QX88 switching transistors", "IC = 150 mA; VCE = 2 V current gain")),
        request="Current gain", conditions=("IC = 150 mA; VCE = 2 V",), decline_mentions="no table row or text line",
    ),
    Convention(
        name="a maximum asked for may be the absolute maximum rating",
        reading="'Maximum emitter current' asks for the largest emitter current the part takes: the absolute maximum "
                "rating of that name answers it, not a characteristic that only shares its words",
        page=Page(tables=(
            (("Parameter", "Symbol", "Value", "Unit"),
             ("Emitter current", "IE", "6", "A"),
             ("Emitter-base voltage", "VEBO", "5", "V")),
            (("Parameter", "Symbol", "Conditions", "Min", "Typ", "Max", "Unit"),
             ("Emitter cut-off current", "IEBO", "VEB = 5 V", "", "", "0.2", "mA"),
             ("Emitter-base saturation voltage", "VBEsat", "IE = 2 A", "", "", "1.3", "V")),
        ), titles=("Absolute maximum ratings", "Electrical characteristics")),
        request="Maximum emitter current", unit="A", expected=Expected(max=6, unit="A"),
    ),
    Convention(
        name="a terminal's polarity picks the row",
        reading="rows told apart by the polarity of terminals ('T2(+), G(-)', a thyristor's quadrants) measure "
                "different operating points: the requested polarity picks its row, another polarity never answers",
        page=Page(tables=((
            ("Parameter", "Symbol", "Conditions", "Min", "Typ", "Max", "Unit"),
            ("Gate trigger current", "IGT", "T2(+), G(+)", "", "", "4.0", "mA"),
            ("Gate trigger current", "IGT", "T2(+), G(-)", "", "", "4.5", "mA"),
            ("Gate trigger current", "IGT", "T2(-), G(-)", "", "", "6.5", "mA"),
        ),)),
        request="Gate trigger current", conditions=("T2(-), G(-)",), unit="mA", expected=Expected(max=6.5, unit="mA"),
    ),
    Convention(
        name="a table titled by the quantity names it for every row",
        reading="under a title naming a quantity ('Thermal resistance ratings'), rows say only which one "
                "('Maximum Junction-to-Case RthJC', the name and symbol in one merged first column): the title and "
                "the row together name the parameter",
        page=Page(tables=((
            ("PARAMETER SYMBOL", "TYP.", "MAX.", "UNIT"),
            ("Maximum Junction-to-Ambient RthJA", "-", "62", "°C/W"),
            ("Case-to-Sink, Greased Surface RthCS", "0.35", "-", "°C/W"),
            ("Maximum Junction-to-Case (Drain) RthJC", "-", "1.7", "°C/W"),
        ),), titles=("THERMAL RESISTANCE RATINGS",)),
        request="Junction-to-case thermal resistance", unit="degC/W", expected=Expected(max=1.7, unit="degC/W"),
    ),
    Convention(
        name="a section row names what the rows under it are about",
        reading="a row holding only a heading ('COMPARATOR') opens a section whose rows name only the quantity "
                "('Gain'): the heading and the row together name the parameter ('Comparator gain')",
        page=Page(tables=((
            ("Parameter", "Conditions", "Min", "Typ", "Max", "Units"),
            ("COMPARATOR", "", "", "", "", ""),
            ("Offset Voltage", "IREF = 1 mA", "", "4", "12", "mV"),
            ("Gain (dIO/dVIN)", "IREF = 1 mA, IO = 5 mA", "2", "6", "", "mA/mV"),
            ("OUTPUT STAGE", "", "", "", "", ""),
            ("Leakage Current", "VO = 10 V", "", "0.2", "9", "uA"),
        ),), titles=("Electrical characteristics",)),
        request="Comparator gain", unit="mA/mV", expected=Expected(min=2, typical=6, unit="mA/mV"),
    ),
    Convention(
        name="a Definition column names the rows and a Figure column holds no value",
        reading="'Symbol | Definition | Figure | Min. | Typ. | Max.': the Definition column names each row, and the "
                "Figure column beside it holds the number of the plot that shows the parameter, never a limit",
        page=Page(tables=((
            ("Symbol", "Definition", "Figure", "Min.", "Typ.", "Max.", "Units"),
            ("tWK", "Wake-up propagation delay", "7", "—", "85", "130", "ns"),
            ("tRL", "Release propagation delay", "8", "—", "64", "95", "ns"),
        ),)),
        request="Release propagation delay", unit="ns", expected=Expected(typical=64, max=95, unit="ns"),
    ),
    Convention(
        name="a unit cell merged over a block of rows",
        reading="a unit printed once in the unit column for a block of rows (a merged cell, printed on one row of "
                "the block) is the unit of the block's rows whose unit cell is empty; between blocks of two "
                "units, the requested dimension picks the block",
        page=Page(tables=((
            ("Symbol", "Definition", "Min.", "Typ.", "Max.", "Units"),
            ("VWK", "Wake-up threshold voltage", "1.1", "1.3", "1.5", ""),
            ("VRL", "Release threshold voltage", "0.8", "1.0", "1.2", "V"),
            ("IWK", "Wake-up sink current", "0.6", "1.1", "", ""),
            ("IRL", "Release sink current", "0.4", "0.9", "", "mA"),
        ),)),
        request="Wake-up sink current", unit="mA", expected=Expected(min=0.6, typical=1.1, unit="mA"),
    ),
    Convention(
        name="a block unit is taken only for a dimension the request names",
        reading="a row whose unit cell is empty takes a neighbouring block's unit only when the request says which "
                "dimension the value has; a request without one gets no unit the row does not print, and two "
                "blocks of the requested dimension leave the reader declining",
        page=Page(tables=((
            ("Symbol", "Definition", "Min.", "Typ.", "Max.", "Units"),
            ("IQ1", "Standby drain current", "", "4", "9", "uA"),
            ("IQ2", "Active drain current", "", "1.8", "2.6", ""),
            ("IQ3", "Burst drain current", "", "6", "11", "mA"),
        ),)),
        request="Active drain current", unit="mA", decline_mentions="match the request equally well",
    ),
    Convention(
        name="a unit column printing a look-alike degree sign",
        reading="'ºC' (an ordinal sign) or '˚C' (a ring above) in the unit column is degrees Celsius, the unit of "
                "its row",
        page=Page(tables=((
            ("Symbol", "Name", "Minimum", "Maximum", "Unit"),
            ("TOP", "Working temperature", "-20", "70", "ºC"),
            ("TST", "Storage temperature", "-40", "125", "\u02daC"),
        ),)),
        request="Storage temperature", unit="degC", expected=Expected(min=-40, max=125, unit="degC"),
    ),
    Convention(
        name="one table per part of a family",
        reading="a family datasheet prints one characteristics table per part, each under its part number: a "
                "request naming the part is answered from that part's table only, and of its sub-rows the first "
                "printed answers when the part is the only condition named",
        page=Page(tables=(
            (("Symbol", "Parameter", "Conditions", "Min", "Typ", "Max", "Units"),
             ("VO", "Output voltage", "", "4.8", "5.0", "5.2", "V"),
             ("VO", "Output voltage", "IO = 1 mA to 40 mA", "4.75", "", "5.25", "V"),
             ("IQ", "Quiescent current", "", "", "3.1", "5.0", "mA")),
            (("Symbol", "Parameter", "Conditions", "Min", "Typ", "Max", "Units"),
             ("VO", "Output voltage", "", "5.75", "6.0", "6.25", "V"),
             ("VO", "Output voltage", "IO = 1 mA to 40 mA", "5.7", "", "6.3", "V"),
             ("IQ", "Quiescent current", "", "", "2.9", "5.5", "mA")),
        ), titles=("QX7805", "QX7806")),
        request="Output voltage", conditions=("QX7805",), unit="V", expected=Expected(4.8, 5.0, 5.2, "V"),
    ),
    Convention(
        name="a header merging the symbol and parameter titles",
        reading="'| | Symbol Parameter (condition) | Notes | Min. | Typ. | Max. |': the text layer ran the symbol "
                "column's title into the parameter column's; the names are under it, the symbols in the unheaded "
                "column beside it, and the Notes column holds note numbers, never a limit",
        page=Page(tables=((
            ("", "Symbol Parameter (condition)", "Notes", "Min.", "Typ.", "Max.", "Units"),
            ("PTX", "Peak transmit power", "6", "", "2", "+5", "dBm"),
            ("PTA", "Transmit power accuracy", "", "", "", "±3", "dB"),
        ),)),
        request="Transmit power accuracy", unit="dB", expected=Expected(min=-3, max=3, unit="dB"),
    ),
    Convention(
        name="a Limit column beside a Typ column",
        reading="'Typ | Limit' (logic families' guaranteed limits): the Limit column holds a maximum when the name "
                "starts 'Maximum', a minimum when it starts 'Minimum', and is never a second typical value",
        page=Page(tables=((
            ("Symbol", "Parameter", "Conditions", "Typ", "Limit", "Units"),
            ("tPD", "Maximum Latch Propagation Delay", "", "18", "29", "ns"),
            ("tSU", "Minimum Latch Setup Time", "", "6", "11", "ns"),
        ),)),
        request="Latch propagation delay", unit="ns", expected=Expected(typical=18, max=29, unit="ns"),
    ),
    Convention(
        name="a Limit column without a limit word in the name",
        reading="a Limit column beside a Typ column, for a name that does not say whether its limit is a minimum or "
                "a maximum, leaves the row undecided: the reader declines",
        page=Page(tables=((
            ("Symbol", "Parameter", "Conditions", "Typ", "Limit", "Units"),
            ("tPD", "Latch propagation delay", "", "18", "29", "ns"),
        ),)),
        request="Latch propagation delay", unit="ns", decline_mentions="does not say whether",
    ),
    Convention(
        name="a caption setting the conditions of every row",
        reading="a caption that sets quantities ('VCC = 5V, TA = 25°C') states the conditions of every row of its "
                "table: a request at another value of one of them is never answered from that table",
        page=Page(tables=(
            (("Symbol", "Parameter", "Min", "Typ", "Max", "Units"),
             ("tLT", "Latch transfer delay", "", "22", "33", "ns"),
             ("tLR", "Latch release delay", "", "25", "41", "ns")),
        ), titles=("VCC = 5V, TA = 25°C",)),
        request="Latch transfer delay", conditions=("VCC = 3.3V",), unit="ns",
        decline_mentions="matches the request too weakly",
    ),
    Convention(
        name="part numbers heading value columns",
        reading="'QX410 QX411 | Value QX420 QX421 | QX430' over the value columns: one value per part (or pair of "
                "parts), never min / typical / max; "
                "the part the request names picks its column (a rating: its maximum), the others are reported "
                "beside it, and a value printed once across the columns holds for every part",
        page=Page(tables=((
            ("Symbol", "Parameter NPN PNP", "QX410 QX411", "Value QX420 QX421", "QX430", "Unit"),
            ("VRM", "Reverse standoff voltage", "40", "60", "80", "V"),
            ("IFM", "Forward surge current", "", "12", "", "A"),
        ),), titles=("Absolute maximum ratings",)),
        request="Reverse standoff voltage", conditions=("QX420",), unit="V", expected=Expected(max=60, unit="V"),
    ),
    Convention(
        name="part numbers heading value columns, no part requested",
        reading="a request naming none of the parts that head the value columns is declined, naming the parts: "
                "each column is one part's value, and which part is meant is not said",
        page=Page(tables=((
            ("Symbol", "Parameter NPN PNP", "QX410 QX411", "Value QX420 QX421", "QX430", "Unit"),
            ("VRM", "Reverse standoff voltage", "40", "60", "80", "V"),
        ),), titles=("Absolute maximum ratings",)),
        request="Reverse standoff voltage", unit="V", decline_mentions="variants (QX410 QX411; QX420 QX421; QX430)",
    ),
    Convention(
        name="Min / Typ / Max printed once per part",
        reading="'Min | QZ77A Typ | Max | Min | QZ77B Typ | Max' (each part's name over its own group of limit "
                "columns): each group is that part's limits, the part the request names picks its group, and a "
                "request naming neither part is declined rather than read from the last group",
        page=Page(tables=((
            ("Characteristic", "Symbol", "Min", "QZ77A Typ", "Max", "Min", "QZ77B Typ", "Max", "Unit"),
            ("Trim drift over range", "dVtr", "–", "4.5", "21", "–", "2.5", "13", "mV"),
        ),), titles=("Electrical Characteristics",)),
        request="Trim drift over range", conditions=("QZ77A",), unit="mV",
        expected=Expected(typical=4.5, max=21, unit="mV"),
    ),
    Convention(
        name="Min / Typ / Max printed once per part, no part requested",
        reading="a request naming none of the parts heading the groups of limit columns is declined, naming them",
        page=Page(tables=((
            ("Characteristic", "Symbol", "Min", "QZ77A Typ", "Max", "Min", "QZ77B Typ", "Max", "Unit"),
            ("Trim drift over range", "dVtr", "–", "4.5", "21", "–", "2.5", "13", "mV"),
        ),), titles=("Electrical Characteristics",)),
        request="Trim drift over range", unit="mV", decline_mentions="variants (QZ77A; QZ77B)",
    ),
    Convention(
        name="guaranteed limits per temperature",
        reading="'25°C Typ | 25°C Limit | 85°C Limit | 125°C Limit' (or 'TA = -40 to 85°C' under 'Guaranteed "
                "Limits'): one limit per temperature, a maximum (a minimum when the name starts 'Minimum'), never "
                "min / typical / max; the requested temperature picks its column",
        page=Page(tables=((
            ("Sym", "Parameter", "VCC", "25°C Typ", "25°C Limit", "85°C Limit", "125°C Limit", "Units"),
            ("IQS", "Maximum Standby Current", "6.0V", "2", "6.0", "60", "120", "uA"),
            ("VTH", "Minimum Release Level", "4.5V", "3.4", "3.2", "3.1", "3.0", "V"),
        ),)),
        request="Standby current", conditions=("VCC = 6.0V", "TA = 85°C"), unit="uA",
        expected=Expected(max=60, unit="uA"),
    ),
    Convention(
        name="guaranteed limits per temperature, no temperature requested",
        reading="a request naming no temperature reads the 25 °C column of per-temperature guaranteed limits, with "
                "the typical value printed for 25 °C",
        page=Page(tables=((
            ("Sym", "Parameter", "VCC", "25°C Typ", "25°C Limit", "85°C Limit", "125°C Limit", "Units"),
            ("IQS", "Maximum Standby Current", "6.0V", "2", "6.0", "60", "120", "uA"),
            ("VTH", "Minimum Release Level", "4.5V", "3.4", "3.2", "3.1", "3.0", "V"),
        ),)),
        request="Release level", conditions=("VCC = 4.5V",), unit="V",
        expected=Expected(min=3.2, typical=3.4, unit="V"),
    ),
    Convention(
        name="conditions and unit merged over a block of rows",
        reading="a row printing neither conditions nor a unit next to a row printing both (the cells merged over "
                "the block, printed on one row of it) is measured under those conditions, in that unit",
        page=Page(tables=((
            ("Parameter", "Symbol", "Test Conditions", "Min.", "Typ.", "Max.", "Unit"),
            ("Total switch charge", "QSW", "", "-", "-", "88", ""),
            ("Switch-source charge", "QSS", "ID = 9 A, VGS = 10 V", "-", "-", "14", "nC"),
            ("Switch-drain charge", "QSD", "", "-", "-", "41", ""),
        ),)),
        request="Total switch charge", conditions=("VGS = 10 V",), unit="nC", expected=Expected(max=88, unit="nC"),
    ),
    Convention(
        name="a ratings title with a remark after it",
        reading="'MAXIMUM RATINGS (Full operating ambient temperature range applies, unless otherwise noted.)' is "
                "the ratings' title though the line is long: a single value under it is the rating, a maximum, "
                "and 'Maximum cathode voltage' asks for it rather than the top of the recommended range",
        page=Page(tables=(
            (("Rating", "Symbol", "Value", "Unit"),
             ("Cathode voltage", "VKA", "37", "V"),
             ("Cathode current", "IK", "150", "mA")),
            (("Condition", "Symbol", "Min", "Max", "Unit"),
             ("Cathode voltage", "VKA", "3", "36", "V"),
             ("Cathode current", "IK", "1", "100", "mA")),
        ), titles=("MAXIMUM RATINGS (Full operating ambient temperature range applies, unless otherwise noted.)",
                   "RECOMMENDED OPERATING CONDITIONS")),
        request="Maximum cathode voltage", unit="V", expected=Expected(max=37, unit="V"),
    ),
    Convention(
        name="a sentence naming a section does not end the ratings",
        reading="a line of prose under the ratings' title that happens to say 'specifications' or 'characteristics' "
                "is no section title: the ratings below it are still ratings, and their single values maxima",
        page=Page(prose=(
            "Absolute Maximum Ratings", "Please contact the sales office for availability and specifications.",
            "Input Voltage 35V", "ESD Susceptibility 1kV", "Electrical Characteristics",
        )),
        request="ESD susceptibility", unit="kV", expected=Expected(max=1, unit="kV"),
    ),
    Convention(
        name="an absolute maximum request names the quantity",
        reading="'Absolute maximum supply voltage' asks for the supply voltage among the absolute maximum ratings: "
                "the qualifier words are not part of the name, so the row naming the supply voltage and the "
                "requested reference answers, even where the page prints the ratings under no title",
        page=Page(prose=("Stresses beyond these limits may irreversibly damage the chip.",), tables=(
            (("Symbol", "Name", "Minimum", "Maximum", "Unit"),
             ("VCC", "Supply rail voltage, reference to GND pin", "-0.5", "6.5", "V"),
             ("TA", "Ambient temperature while operating", "-40", "85", "°C")),
            (("Symbol", "Name", "Minimum", "Typical", "Maximum", "Unit"),
             ("VCC", "Supply rail voltage", "4.5", "5", "5.5", "V"),
             ("ICC", "Supply current", "", "12", "30", "mA")),
        ), titles=("", "DC characteristics")),
        request="Absolute maximum supply voltage", conditions=("reference to GND pin",), unit="V",
        expected=Expected(min=-0.5, max=6.5, unit="V"),
    ),
    Convention(
        name="a rating's parts listed between its name and its value",
        reading="'Maximum Input Voltage (VIN to GND)' over lines that only list part numbers ('QX100-ADJ, "
                "QX100-1.8,') and then the value: the parts say which parts the rating applies to, the name is "
                "the line above them; 'Operating Ratings' starts another section",
        page=Page(prose=(
            "Absolute Maximum Ratings", "Maximum Input Voltage (VIN to GND)", "QX100-ADJ, QX100-1.8,",
            "QX100-3.3, QX100-5.0,", "QX100I-ADJ", "20V", "Operating Ratings", "Input Voltage (VIN to GND)",
            "QX100-ADJ, QX100-1.8,", "QX100-3.3, QX100-5.0,", "QX100I-ADJ", "15V",
        )),
        request="Absolute maximum input voltage", unit="V", expected=Expected(max=20, unit="V"),
    ),
    Convention(
        name="a rating printed per group of parts",
        reading="'Input Voltage (VIN to GND)' over a list of parts and its value, then another list of parts and "
                "its own value: each value holds for the parts listed just above it, under the one name; a "
                "request naming a part reads only a value whose list names it, and a single figure among the "
                "'Operating Ratings' is the most the part may be run at, a maximum",
        page=Page(prose=(
            "Absolute Maximum Ratings", "Maximum Input Voltage (VIN to GND)", "QX100-ADJ, QX100-1.8,",
            "QX100-5.0", "20V", "Operating Ratings", "Input Voltage (VIN to GND)", "QX100-ADJ, QX100-1.8,",
            "QX100-5.0", "15V", "QX100-2.5", "9V", "Junction Temperature Range", "0°C to 125°C",
        )),
        request="Maximum operating input voltage, QX100-2.5", conditions=("QX100-2.5",), unit="V",
        expected=Expected(max=9, unit="V"),
    ),
    Convention(
        name="a limit printed relative to another pin is no open bound",
        reading="'Bias rail voltage | -0.5 | VREF + 18' among the ratings: the maximum is printed relative to another "
                "pin's voltage, so the row gives no number for it; reporting the minimum alone would read as a "
                "range open above, and the reader declines and says why",
        page=Page(tables=((
            ("Symbol", "Definition", "Min.", "Max.", "Units"),
            ("VQ", "Bias rail voltage", "-0.5", "VREF + 18", "V"),
            ("VR", "Reference rail voltage", "-0.5", "22", "V"),
        ),), titles=("Absolute Maximum Ratings",)),
        request="Bias rail voltage", unit="V", decline_mentions="relative to another quantity",
    ),
    Convention(
        name="a dot-leader rating with signs apart from the numbers",
        reading="'VDD.........- 0.3V to + 3.6V' under 'Supply voltages' among the absolute maximum ratings: the "
                "signs printed apart belong to the numbers, the range is the rating's minimum and maximum",
        page=Page(prose=(
            "ABSOLUTE MAXIMUM RATINGS", "Supply voltages", "VDD............................- 0.3V to + 3.6V",
            "Input voltage", "VI.................................. - 0.3V to 5.25V",
        )),
        request="Absolute maximum supply voltage", unit="V", expected=Expected(min=-0.3, max=3.6, unit="V"),
    ),
    Convention(
        name="a rating list with ellipsis leaders and full-width signs",
        reading="'Peak Die Temperature…...135℃' and 'Bias Pin Voltage……………－0.5V to 7.5V' (two ratings per line, "
                "leaders of ellipsis characters, a full-width minus): the leader joins each name to its value and the "
                "full-width minus is the value's sign",
        page=Page(prose=(
            "Absolute Maximum Ratings",
            "Bias Pin Voltage……………－0.5V to 7.5V         Peak Die Temperature…...135℃",
        )),
        request="Peak die temperature", unit="°C", expected=Expected(max=135, unit="degC"),
    ),
    Convention(
        name="an ESD rating per model",
        reading="'ESD rating, human body model' names the quantity rated (ESD) and which model: the row of the ESD "
                "ratings table for the human body model (HBM) answers, its value a maximum",
        page=Page(tables=((
            ("", "", "", "MAX", "UNIT"),
            ("V(ESD)", "Electrostatic discharge", "Human body model (HBM), per JS-001", "2500", "V"),
            ("V(ESD)", "Electrostatic discharge", "Charged device model (CDM), per JS-002", "1000", "V"),
        ),), titles=("ESD Ratings",)),
        request="ESD rating, human body model", conditions=("HBM",), unit="V", expected=Expected(max=2500, unit="V"),
    ),
    Convention(
        name="an ESD rating printed as the level withstood",
        reading="'ESD Rating | HBM | >3000 | V' among the maximum ratings: '>' says the part withstands more than "
                "that level, and the ratings give an ESD rating as a maximum like the other ratings, not a minimum",
        page=Page(tables=((
            ("Rating", "Symbol", "Value", "Unit"),
            ("Anode Voltage", "VAK", "28", "V"),
            ("ESD Rating", "HBM", ">3000", "V"),
            ("ESD Rating", "MM", ">300", "V"),
        ),), titles=("MAXIMUM RATINGS",)),
        request="ESD rating, human body model", conditions=("HBM",), unit="V", expected=Expected(max=3000, unit="V"),
    ),
    Convention(
        name="a thermal resistance among the ratings",
        reading="a thermal resistance listed among the absolute maximum ratings with no Min / Typ / Max column "
                "('Thermal resistance, junction-to-ambient | θJA | 118 | °C/W') describes the package, not a limit "
                "on its use: a typical figure, while the ratings beside it are maxima",
        page=Page(tables=((
            ("Rating", "Symbol", "Value", "Unit"),
            ("Supply voltage", "VDD", "6.5", "V"),
            ("Junction temperature", "TJ", "150", "°C"),
            ("Thermal resistance, junction-to-ambient", "θJA", "118", "°C/W"),
        ),), titles=("Absolute maximum ratings",)),
        request="Junction-to-ambient thermal resistance", unit="°C/W", expected=Expected(typical=118, unit="degC/W"),
    ),
    Convention(
        name="a junction temperature in a thermal data table is its maximum",
        reading="'Junction temperature | Tj | 175 | °C' in the single Value column of a thermal table (outside the "
                "absolute maximum ratings): one figure for the junction temperature is the most the junction may "
                "reach, a maximum, while the thermal resistance beside it stays a typical figure",
        page=Page(tables=((
            ("Parameter", "Test condition", "Symbol", "Value", "Unit"),
            ("Thermal resistance junction to ambient air", "", "RthJA", "410", "K/W"),
            ("Junction temperature", "", "Tj", "175", "°C"),
        ),), titles=("Thermal characteristics",)),
        request="Maximum junction temperature", unit="°C", expected=Expected(max=175, unit="degC"),
    ),
    Convention(
        name="a timing list with the limit word in the unit cell",
        reading="a timing list printed one cell per line — symbol, limit, unit with its limit word ('ns min'), "
                "then the description — gives the description's row that limit",
        page=Page(prose=("Timing specifications", "Parameter", "Limit", "Unit", "Comments",
                         "t1", "8", "ns min", "Strobe to clock setup time",
                         "t2", "30", "ns min", "Clock high pulse width",
                         "t3", "40", "ns max", "Clock low pulse width")),
        request="Clock high pulse width", unit="ns", expected=Expected(min=30, unit="ns"),
    ),
    Convention(
        name="a limit named as a parameter of its own",
        reading="in a table with Min / Typ / Max columns, a row whose name starts with a limit word ('Minimum "
                "holding voltage') is another parameter than the row that names the quantity alone ('Holding "
                "voltage'): a request without the limit word reads the latter, even when the other row's name "
                "comes out of the text layer more cleanly",
        page=Page(tables=((
            ("Parameter", "Symbol", "Test Conditions", "Min", "Typ", "Max", "Unit"),
            ("Holding oltage Holding voltage", "VHLD", "Grade K", "2.4", "", "6.0", "V"),
            ("Minimum holding voltage", "VHLD(min)", "Grade K", "", "", "1.3", "V"),
        ),), titles=("Electrical Characteristics",)),
        request="Holding supply voltage", conditions=("Grade K",), unit="V",
        expected=Expected(min=2.4, max=6.0, unit="V"),
    ),
    Convention(
        name="an operating point the name states, printed nowhere with the value",
        reading="a request whose name ends with the point it is measured at ('Standby current at 3.3 V') is not "
                "answered by a value printed without that point (a feature line's general figure, a row measured "
                "at another supply): the reader declines rather than report the figure of another point",
        page=Page(prose=("Features", "Standby current of 2 µA", "Wide supply range"), tables=((
            ("Parameter", "Symbol", "Test Conditions", "Min", "Typ", "Max", "Unit"),
            ("Active current", "IACT", "VDD = 5 V", "", "1.4", "2.0", "mA"),
        ),), titles=("Electrical Characteristics",)),
        request="Standby current at 3.3 V", unit="µA", decline_mentions="too weakly",
    ),
    Convention(
        name="a nominal with its tolerance in a product list cell",
        reading="'3.90±0.025' alone in a cell (a product list giving each part's thresholds in columns) is the "
                "nominal with the band it may deviate by: min 3.875, typical 3.90, max 3.925, as a Min / Typ / Max "
                "table reads the same cell, not a typical value rivalled by a separate ±0.025",
        page=Page(tables=((
            ("Model", "Trip voltage (V)", "Release voltage (V)", "Sense threshold (mV)"),
            ("QX-40", "3.90±0.025", "3.70±0.050", "120±20"),
        ),), titles=("Product list",)),
        request="Trip voltage", unit="V", expected=Expected(min=3.875, typical=3.9, max=3.925, unit="V"),
    ),
    Convention(
        name="the edge of a threshold named positive-going or negative-going",
        reading="'positive-going' is the rising edge of a threshold and 'negative-going' the falling one (UVLO and "
                "Schmitt-trigger rows): a request for the falling threshold reads the negative-going row, and the "
                "row of the other edge is never its answer",
        page=Page(tables=((
            ("Parameter", "Symbol", "Min", "Typ", "Max", "Unit"),
            ("Bias supply undervoltage positive going threshold", "VBUV+", "3.9", "4.2", "4.5", "V"),
            ("Bias supply undervoltage negative going threshold", "VBUV-", "3.6", "3.9", "4.2", "V"),
        ),), titles=("Electrical Characteristics",)),
        request="Bias supply undervoltage threshold, falling", unit="V",
        expected=Expected(min=3.6, typical=3.9, max=4.2, unit="V"),
    ),
    Convention(
        name="one column per package, named by the column header alone",
        reading="a table with one value column per package ('Characteristic | Symbol | D, LK Suffix Package | K "
                "Suffix Package | Unit') gives each value its own column's package only: the other columns' "
                "headers are no condition of it, and 'K suffix package' is not met by 'LK Suffix Package'",
        page=Page(tables=((
            ("Characteristic", "Symbol", "D, LK Suffix Package", "K Suffix Package", "Unit"),
            ("Thermal Resistance, Junction-to-Ambient", "RθJA", "186", "121", "°C/W"),
            ("Thermal Resistance, Junction-to-Case", "RθJC", "77", "45", "°C/W"),
        ),), titles=("Thermal Characteristics",)),
        request="Junction-to-ambient thermal resistance, K suffix", conditions=("K suffix package",), unit="°C/W",
        expected=Expected(typical=121, unit="degC/W"),
    ),
    Convention(
        name="part sub-rows under a name, the symbol cell merged over them",
        reading="a rating named once with a part number at its end, over rows that print only another part number "
                "(the symbol cell merged over them), gives one value per part: the requested part picks its row",
        page=Page(tables=((
            ("Rating", "Symbol", "Value", "Unit"),
            ("Peak blocking voltage (Gate open) QT58B2", "VBK", "150", "V"),
            ("QT58B5", "", "350", "V"),
            ("QT58B9", "", "550", "V"),
            ("Peak gate current", "IGP", "0.8", "A"),
        ),), titles=("Maximum ratings",)),
        request="Peak blocking voltage", conditions=("QT58B5",), unit="V", expected=Expected(max=350, unit="V"),
    ),
    Convention(
        name="a surge current named by its conventional symbol",
        reading="ITSM (on-state) and IFSM (forward) are the symbols of a one-cycle surge current: a row naming the "
                "surge with its waveform ('Peak surge current, one full cycle, 60 Hz | ITSM') answers a request for "
                "the non-repetitive surge on-state current, a rating's maximum",
        page=Page(tables=((
            ("Rating", "Symbol", "Value", "Unit"),
            ("On-state RMS current, full cycle sine wave (TC = 70 °C)", "IT(RMS)", "1.4", "A"),
            ("Peak Surge Current, One Full Cycle, Sine Wave 60 Hz (TC = 95 °C)", "ITSM", "17", "A"),
        ),), titles=("Maximum ratings",)),
        request="Non-repetitive surge on-state current", unit="A", expected=Expected(max=17, unit="A"),
    ),
    Convention(
        name="features listed part by part",
        reading="a feature list split under lines that name one part each ('QM4410 Processor', 'QM12U4') gives "
                "each line to the part above it: a request naming a part reads that part's lines only",
        page=Page(prose=("Features", "QM4410 Processor", "Up to 20 MIPS throughput", "64k bytes program memory",
                         "2k bytes data memory", "QM12U4", "Up to 8 MIPS throughput", "8k bytes program memory",
                         "1k bytes data memory")),
        request="Data memory", conditions=("QM12U4",), unit="kB", expected=Expected(typical=1, unit="kbytes"),
    ),
    Convention(
        name="features listed part by part, no part requested",
        reading="the same data memory listed under two parts, and a request naming neither: the reader declines",
        page=Page(prose=("Features", "QM4410 Processor", "Up to 20 MIPS throughput", "64k bytes program memory",
                         "2k bytes data memory", "QM12U4", "Up to 8 MIPS throughput", "8k bytes program memory",
                         "1k bytes data memory")),
        request="Data memory", unit="kB", decline_mentions="equally well",
    ),
    Convention(
        name="a memory's size given in bytes",
        reading="a figure in bytes is a memory's size: 'SRAM size' in kB is read from '4k bytes SRAM', though the "
                "page does not say 'size'",
        page=Page(prose=("Features", "Up to 20 MIPS throughput", "128k bytes Flash", "4k bytes SRAM")),
        request="SRAM size", unit="kB", expected=Expected(typical=4, unit="kbytes"),
    ),
    Convention(
        name="a condition range picks its row by both ends",
        reading="rows of one parameter measured over temperature ranges that start alike ('TJ = -20°C to +70°C', "
                "'TJ = -20°C to +105°C') are told apart by the whole requested range, not by its first number",
        page=Page(tables=((
            ("Parameter", "Symbol", "Min", "Typ", "Max", "Units", "Conditions"),
            ("Gain drift", "ΔG/ΔT", "", "35", "", "ppm/°C", "TJ = -20°C to +70°C"),
            ("", "ΔG/ΔT", "", "60", "", "ppm/°C", "TJ = -20°C to +105°C"),
        ),), titles=("Electrical Characteristics",)),
        request="Gain drift", conditions=("TJ = -20°C to +70°C",), unit="ppm/degC",
        expected=Expected(typical=35, unit="ppm/degC"),
    ),
    Convention(
        name="a size printed as a product of lengths",
        reading="'480mm x 960mm' is a size, sides multiplied: neither factor is a length the request names (which "
                "side is the thickness is not said), so a length is read from a value printed alone",
        page=Page(prose=("Film data", "THICKNESS", "480mm x 960mm", "0.21mm")),
        request="Thickness", unit="mm", expected=Expected(typical=0.21, unit="mm"),
    ),
    Convention(
        name="typical at 25 °C, limits over the temperature range",
        reading="a parameter printed as two rows, the typical at TJ = 25°C and the limits over the range, its name "
                "cell split between them: one reading, typical from the first row and limits from the second",
        page=Page(tables=((
            ("Parameter", "Test Conditions", "", "Min", "Typ", "Max", "Unit"),
            ("EN Input Low", "VOUT = VIN - 0.5 V", "TJ = 25°C", "", "1.3", "", "V"),
            ("VEN(IL) Threshold Voltage", "VOUT = VIN - 0.5 V, EN Falling", "TJ = –40°C to 125°C", "1.05", "", "",
             "V"),
            ("EN Pin Pulldown Current", "VEN = 4 V", "TJ = 25°C", "", "6", "", "µA"),
            ("EN Pin Pulldown Current", "VEN = 4 V", "TJ = –40°C to 125°C", "4", "", "9", "µA"),
        ),), titles=("Electrical Characteristics",)),
        request="EN input low threshold voltage", unit="V", expected=Expected(min=1.05, typical=1.3, unit="V"),
    ),
    Convention(
        name="typical at 25 °C and limits over the range, rows under one name",
        reading="the same pair printed with the name repeated on both rows: min and max from the range row, the "
                "typical from the 25 °C row",
        page=Page(tables=((
            ("Parameter", "Test Conditions", "", "Min", "Typ", "Max", "Unit"),
            ("EN Pin Pulldown Current", "VEN = 4 V", "TJ = 25°C", "", "6", "", "µA"),
            ("EN Pin Pulldown Current", "VEN = 4 V", "TJ = –40°C to 125°C", "4", "", "9", "µA"),
            ("EN Pin Pulldown Current", "VEN = 5 V", "TJ = 25°C", "", "8", "", "µA"),
        ),), titles=("Electrical Characteristics",)),
        request="EN pin pulldown current", conditions=("VEN = 4 V",), unit="uA",
        expected=Expected(min=4, typical=6, max=9, unit="uA"),
    ),
    Convention(
        name="limits listed side by side, each with its word",
        reading="a feature line listing the figures of one quantity with the word of each limit ('8 µA typ, 14 µA "
                "max', 'typ 0.4 mV / max 1.5 mV') is one reading of those limits, not its first figure alone",
        page=Page(prose=("Features", "Low quiescent current: 8 µA typ, 14 µA max", "Offset: typ 0.4 mV / max 1.5 mV")),
        request="Quiescent current", unit="uA", expected=Expected(typical=8, max=14, unit="uA"),
    ),
    Convention(
        name="limits under a header that joins them with a slash",
        reading="a column headed 'Typ./Max.' holds both limits in one cell, joined the same way ('2.5/4'): the "
                "first number is the typical, the second the maximum",
        page=Page(tables=((
            ("Parameter", "Symbol", "Typ./Max.", "Unit"),
            ("Supply current", "ICC", "2.5/4", "mA"),
            ("Output leakage", "ILK", "0.1/1", "µA"),
        ),), titles=("Electrical Characteristics",)),
        request="Supply current", unit="mA", expected=Expected(typical=2.5, max=4, unit="mA"),
    ),
    Convention(
        name="limits with their words in one value cell",
        reading="a Value column cell listing two limits with their words ('40 typ, 65 max') is one reading, in the "
                "unit column's unit",
        page=Page(tables=((
            ("Parameter", "Symbol", "Value", "Unit"),
            ("Standby current", "ISB", "40 typ, 65 max", "µA"),
            ("Supply voltage", "VS", "2.7 to 5.5", "V"),
        ),), titles=("Electrical Characteristics",)),
        request="Standby current", unit="uA", expected=Expected(typical=40, max=65, unit="uA"),
    ),
)
