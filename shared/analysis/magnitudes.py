"""Magnitudes and units as formal requirements write them, and requirements left optional: the
tagging pair model's features (``shared.engine.offline.pairs``) and the tagger's extra conflict
cues (``shared.engine.offline.tagging``). The cue rules of ``shared.analysis.contradiction`` are
left as they are.

- ``magnitudes``: every number a text states, whatever the notation ("(2^16)-1", "65,535", "ten",
  "a single"); ``value_changes``: both texts state numbers and none in common;
- ``unit_mentions``: the units a text names, by family (time, data, frequency, length, ...);
  ``unit_changes``: a family both texts name with no unit in common;
- ``OPTIONAL``: "optional", "may", "not enforced", "need not": a requirement left to choice.
"""

from __future__ import annotations

import re

from shared.analysis.contradiction import _REASON, _WORD_NUM, _parse_number
from shared.text.language import clean
from shared.text.textio import short_text_cache

_POWER = re.compile(r"\(\s*(\d{1,3})\s*(?:\^|\*\*)\s*(\d{1,2})\s*\)\s*(?:-\s*(1)(?!\d))?")
_BARE_POWER = re.compile(r"(?<![\w.])(\d{1,3})\s*(?:\^|\*\*)\s*(\d{1,2})(?!\d)")
_DIGITS = re.compile(
    r"(?<![\w.,/-])(\d{1,3}(?:[, ]\d{3})+(?![\d.])|\d+(?:\.\d+)?)(?![.,/-]?\d)(?![a-z]*\d)", re.I
)
_ONE = re.compile(r"\b(?:a single|single|exactly one|only one|just one|one and only one)\b")
_WORD_NUMBER = re.compile(rf"\b(?:(?:{_WORD_NUM})\b[ -]?)+", re.I)


def magnitudes(text: str) -> set[float]:
    """Every number a text states, whatever the notation: "(2^16)-1" and "65,535", "10 000" and
    "10,000", "ten" and "10", "a single" and "exactly one" (a lone "one" is not counted: it is a
    pronoun more often than a number). Dates, versions and ids ("2026-11-27", "v1.2", "cES1014")
    are left out."""
    return set(_magnitudes(text))


@short_text_cache()
def _magnitudes(text: str) -> frozenset[float]:
    low = clean(text).lower()
    out: set[float] = set()

    def power(m: re.Match[str]) -> str:
        value = int(m.group(1)) ** int(m.group(2)) - (1 if m.lastindex == 3 and m.group(3) else 0)
        out.add(float(value))
        return " "

    low = _BARE_POWER.sub(power, _POWER.sub(power, low))
    for m in _DIGITS.finditer(low):
        out.add(float(re.sub(r"[, ]", "", m.group(1))))
    for m in _WORD_NUMBER.finditer(low):
        token = m.group(0).strip(" -")
        if token in {"one", "point", "half", "hundred", "thousand"}:
            continue
        value = _parse_number(token)
        if value is not None:
            out.add(value)
    if _ONE.search(low):
        out.add(1.0)
    return frozenset(out)


def value_changes(a: str, b: str) -> list[str]:
    """Both texts state numbers (``magnitudes``, reasons left out) and none in common: "at most
    8" against "up to 15", "(2^16)-1" against "255"."""
    ma = magnitudes(_REASON.sub(" ", clean(a).lower()))
    mb = magnitudes(_REASON.sub(" ", clean(b).lower()))
    if ma and mb and ma.isdisjoint(mb):
        return [f"values differ: {min(ma):g} vs {min(mb):g}"]
    return []


# unit words by what they measure; a family both texts name with no unit in common is a change of
# unit ("micro-seconds" / "milli-seconds", "bytes" / "kilobytes", "1 Hz" / "1 kHz", "in seconds" /
# "within two hours", "per hour" / "per day")
_UNIT_FAMILIES: dict[str, list[str]] = {
    "time": (
        "nanosecond ns microsecond µs usec millisecond ms msec second sec secs minute min mins "
        "hour hr hrs day week fortnight month quarter year decade"
    ).split(),
    "data": "bit byte kilobyte kb kib megabyte mb mib gigabyte gb gib terabyte tb".split(),
    "frequency": "hz hertz khz kilohertz mhz megahertz ghz gigahertz".split(),
    "length": (
        "nm nanometer micrometer µm mm millimeter millimetre cm centimeter centimetre meter "
        "metre km kilometer kilometre inch foot feet yard mile"
    ).split(),
    "mass": "mg milligram gram kg kilogram tonne ton lb".split(),
    "currency": "eur euro usd dollar gbp cent € $ £".split(),
    "temperature": "celsius fahrenheit kelvin".split(),
    "percent": "% percent percentage".split(),
}
_UNIT_FAMILY = {u: family for family, units in _UNIT_FAMILIES.items() for u in units}
# names of one unit: "EUR", "euro" and "€" are one currency, "ms" and "millisecond" one time unit;
# a unit is named by the first word of its group ("12.50 EUR" / "twelve point five Euros": no change)
_SAME_UNIT = {
    name: names.split()[0]
    for names in (
        "nanosecond ns",
        "microsecond µs usec",
        "millisecond ms msec",
        "second sec secs",
        "minute min mins",
        "hour hr hrs",
        "kilobyte kb kib",
        "megabyte mb mib",
        "gigabyte gb gib",
        "terabyte tb",
        "hz hertz",
        "khz kilohertz",
        "mhz megahertz",
        "ghz gigahertz",
        "nanometer nm",
        "micrometer µm",
        "millimeter mm millimetre",
        "centimeter cm centimetre",
        "meter metre",
        "kilometer km kilometre",
        "foot feet",
        "milligram mg",
        "kilogram kg",
        "euro eur €",
        "dollar usd $",
        "gbp £",
        "percent % percentage",
    )
    for name in names.split()
}
_UNIT_SPLIT = re.compile(r"(?<=\d)(?=[a-zµ%€$£])|(?<=[€$£])(?=\d)")
_UNIT_PREFIX = re.compile(r"\b(nano|micro|milli|kilo|mega|giga|tera)[- ](?=[a-z])")
_UNIT_TOKEN = re.compile(r"[a-zµ]+|[%€$£]")
# units that are also ordinary words count only right after a number ("5 min", "2 h")
_AFTER_NUMBER_ONLY = frozenset(
    "ns ms min mins sec secs hr hrs kb mb gb tb nm mm cm km lb h s m".split()
)


def _unit_word(token: str) -> str:
    if token in _UNIT_FAMILY:
        return token
    for suffix in ("es", "s"):
        if token.endswith(suffix) and token[: -len(suffix)] in _UNIT_FAMILY:
            return token[: -len(suffix)]
    return ""


def unit_mentions(text: str) -> dict[str, set[str]]:
    """The units a text names, by family ({"time": {"second"}, "data": {"byte"}}), with or
    without a number; reasons ("so that ...") left out."""
    return {family: set(units) for family, units in _unit_mentions(text)}


@short_text_cache()
def _unit_mentions(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    low = _REASON.sub(" ", clean(text).lower())
    low = _UNIT_PREFIX.sub(r"\1", _UNIT_SPLIT.sub(" ", low))
    low = low.replace("sub-second", "subsecond").replace("sub second", "subsecond")
    out: dict[str, set[str]] = {}
    previous = ""
    for m in _UNIT_TOKEN.finditer(low):
        token = m.group(0)
        unit = _unit_word(token)
        after_number = bool(re.search(r"\d\s*$", low[: m.start()]))
        if unit and (unit not in _AFTER_NUMBER_ONLY or after_number) and previous != "per cent":
            out.setdefault(_UNIT_FAMILY[unit], set()).add(_SAME_UNIT.get(unit, unit))
        previous = token
    return tuple((family, frozenset(units)) for family, units in out.items())


def unit_changes(a: str, b: str) -> list[str]:
    """Families of units both texts name with no unit in common."""
    ua, ub = unit_mentions(a), unit_mentions(b)
    return [
        f"units differ: {'/'.join(sorted(ua[f]))} vs {'/'.join(sorted(ub[f]))}"
        for f in sorted(set(ua) & set(ub))
        if ua[f].isdisjoint(ub[f])
    ]


# "optional", "may", "not enforced", "need not": a requirement that one text makes and the other
# leaves to choice. "may not" / "might not" forbid: they are not optional.
OPTIONAL = re.compile(
    r"\b(?:optional(?:ly)?|(?:may|might|could)(?! not\b| never\b)|nice to have|if (?:possible|desired)"
    r"|advisory|not (?:required|mandatory|enforced|obligatory|compulsory|necessary)"
    r"|need not|needn't|(?:does|do) not (?:have|need) to|at (?:the|their|his|her) \w* ?discretion"
    r"|can (?:be )?(?:skipped|omitted|left out)|may be (?:skipped|omitted|left out))\b"
)
