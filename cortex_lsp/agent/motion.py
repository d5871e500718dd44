"""Distance, time and speed stated in words, as a calculator expression, in English, German, French,
Spanish, Italian, Portuguese and Dutch:

* how far at a speed for a time: "how far do I get at 60 km/h in 2.5 hours" → 60 * 2.5;
* how long a distance takes at a speed: "how long to drive 300 km at 100 km/h" → 300 / 100 (hours;
  minutes when asked in minutes);
* the speed over a distance and a time: "5 km in 25 minutes, what's my average speed" → 5 / (25 / 60)
  (km/h for km, mph for miles, m/s for metres, or the speed unit the words ask for).

The words hold exactly these two amounts and ask the question ("how far", "wie lange", "vitesse", …):
"the limit is 50 km/h within 2 km of the school" asks nothing.
"""

from __future__ import annotations

import re

from cortex_lsp.agent.lazy_re import lazy
from cortex_lsp.agent.numtext import NUM, continental, fold, number, tidy
from cortex_lsp.agent.unit_names import BY_KEY, Unit
from cortex_lsp.agent.units import UNIT, factor_text, unit_named

# each speed unit as a length unit over a time unit
_PARTS = {"kmh": ("km", "h"), "mph": ("mi", "h"), "mps": ("m", "s"), "kn": ("nmi", "h"), "ftps": ("ft", "s")}
_SPEED_FOR = {"km": "kmh", "mi": "mph", "m": "mps", "nmi": "kn", "ft": "ftps"}
_QUANTITY = lazy(rf"{NUM}\s*({UNIT})", re.IGNORECASE)
_FAR = lazy(
    r"\b(?:how\s+far|distance|how\s+many\s+(?:km|kilomet\w+|miles|metres|meters)|wie\s+weit|welche\s+strecke|"
    r"strecke|entfernung|quelle\s+distance|distance|distancia|que\s+distancia|che\s+distanza|distanza|"
    r"quanta\s+strada|que\s+distancia|hoe\s+ver|afstand)\b",
    re.IGNORECASE,
)
_LONG = lazy(
    r"\b(?:how\s+long|how\s+much\s+time|how\s+many\s+(?:hours|minutes|seconds)|wie\s+lange?|wie\s+viel\s+zeit|"
    r"wie\s+viele\s+(?:stunden|minuten)|combien\s+de\s+(?:temps|minutes|heures)|cuanto\s+tiempo|"
    r"cuantas\s+horas|cuantos\s+minutos|quanto\s+tempo|quante\s+ore|quanti\s+minuti|quantas\s+horas|"
    r"quantos\s+minutos|hoe\s+lang|hoeveel\s+(?:tijd|uur|minuten))\b",
    re.IGNORECASE,
)
_FAST = lazy(
    r"\b(?:speed|fast|velocity|pace|geschwindigkeit|schnell|tempo|vitesse|vite|velocidad|rapido|velocita|veloce|"
    r"velocidade|snelheid|snel)\b",
    re.IGNORECASE,
)
_ASKED_UNIT = lazy(rf"\b(?:in|en|em|naar|to|into)\s+({UNIT})\s*[?.!]?\s*$|\bhow\s+many\s+({UNIT})",
                         re.IGNORECASE)


def _asked(text: str, measure: str) -> Unit | None:
    for match in _ASKED_UNIT.finditer(text):
        unit = unit_named(match.group(1) or match.group(2))
        if unit and unit.measure == measure:
            return unit
    return None


def _in(value: str, unit: Unit, target: Unit) -> str:
    factor = factor_text(unit.size / target.size)
    return f"{value}{factor}" if not factor else f"({value}{factor})"


def motion(words: str) -> str | None:
    """The distance, time or speed the words ask for; ``None`` unless exactly two amounts are given."""
    text = fold(words)
    if len(re.findall(NUM, text)) != 2:
        return None
    comma_decimal = continental(text)
    found: dict[str, tuple[str, Unit]] = {}
    for match in _QUANTITY.finditer(text):
        unit, value = unit_named(match.group(2)), number(match.group(1), comma_decimal)
        if unit is None or value is None or unit.measure not in ("speed", "time", "length"):
            return None
        found[unit.measure] = (value, unit)
    if len(found) != 2:
        return None
    if "speed" in found and found["speed"][1].key not in _PARTS:
        return None
    if set(found) == {"speed", "time"} and _FAR.search(text):
        (v, speed), (t, time) = found["speed"], found["time"]
        length, per = (BY_KEY[k] for k in _PARTS[speed.key])
        expression = f"{v} * {_in(t, time, per)}"
        asked = _asked(text, "length")
        if asked and asked.key != length.key:
            expression = f"{expression}{factor_text(length.size / asked.size)}"
        return tidy(expression)
    if set(found) == {"speed", "length"} and _LONG.search(text):
        (v, speed), (d, distance) = found["speed"], found["length"]
        length, per = (BY_KEY[k] for k in _PARTS[speed.key])
        expression = f"{_in(d, distance, length)} / {v}"
        asked = _asked(text, "time")
        if asked and asked.key != per.key:
            expression = f"{expression}{factor_text(per.size / asked.size)}"
        return tidy(expression)
    if set(found) == {"length", "time"} and (_FAST.search(text) or _asked(text, "speed")):
        (d, distance), (t, time) = found["length"], found["time"]
        target = _asked(text, "speed") or BY_KEY.get(_SPEED_FOR.get(distance.key, ""))
        if target is None:
            return None
        length, per = (BY_KEY[k] for k in _PARTS[target.key])
        return tidy(f"{_in(d, distance, length)} / {_in(t, time, per)}")
    return None

