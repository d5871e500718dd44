"""Units of measure by name, for converting amounts stated in words: what each unit measures, its size
in that measure's base unit (exact, as written in the standards), and how it is written in English,
German, French, Spanish, Italian, Portuguese and Dutch (accents folded away, see ``numtext.fold``).

Only units with one accepted size are here. Left out on purpose: cups, tablespoons, pints, quarts,
fluid ounces and plain "gallons" (US and imperial sizes differ; "US gallon" and "imperial gallon" are
here), short/long "tons", months and years (their lengths vary), the German "Pfund" and Dutch "pond"
and "ons" (500 g and 100 g, not the avoirdupois pound and ounce), and "Mb"/"Gb" (bits or bytes?).
Data sizes follow SI: a kilobyte is 1000 bytes, a kibibyte (KiB) 1024.
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple


class Unit(NamedTuple):
    key: str
    measure: str  # time, length, mass, volume, area, data, speed, temperature
    size: Fraction  # in the measure's base unit (s, m, g, l, m², byte, m/s); temperature: unused


# key, measure, size, words (any case, folded; "|" between spellings), abbreviations (exact case)
_TABLE: tuple[tuple[str, str, str, str, str], ...] = (
    ("ms", "time", "0.001", "millisecond|milliseconds|millisekunde|millisekunden|milliseconde|millisecondes|"
     "milisegundo|milisegundos|millisecondo|millisecondi|milissegundo|milissegundos|milliseconden", "ms"),
    ("s", "time", "1", "second|seconds|secs|sekunde|sekunden|seconde|secondes|secondi|secondo|segundo|segundos|"
     "seconden", "s|sec|Sek|sek|seg"),
    ("min", "time", "60", "minute|minutes|minuten|minuto|minutos|minuti|minuut|mins", "min|Min"),
    ("h", "time", "3600", "hour|hours|hrs|stunde|stunden|heure|heures|hora|horas|ora|ore|uur|uren", "h|hr|Std|std"),
    ("day", "time", "86400", "day|days|tag|tage|tagen|jour|jours|journee|journees|dia|dias|giorno|giorni|dag|dagen",
     "d"),
    ("week", "time", "604800", "week|weeks|woche|wochen|semaine|semaines|semana|semanas|settimana|settimane|weken",
     "wk"),
    ("mm", "length", "0.001", "millimetre|millimetres|millimeter|millimeters|millimetro|millimetri|milimetro|"
     "milimetros", "mm"),
    ("cm", "length", "0.01", "centimetre|centimetres|centimeter|centimeters|zentimeter|centimetro|centimetros|"
     "centimetri", "cm|Cm|CM"),
    ("m", "length", "1", "metre|metres|meter|meters|metern|metro|metros|metri", "m"),
    ("km", "length", "1000", "kilometre|kilometres|kilometer|kilometers|kilometern|kilometro|kilometros|"
     "chilometro|chilometri|quilometro|quilometros", "km|Km|KM"),
    ("in", "length", "0.0254", "inch|inches|zoll|pouce|pouces|pulgada|pulgadas|pollice|pollici|polegada|polegadas|"
     "duim", ""),
    ("ft", "length", "0.3048", "foot|feet|fuss|fuß|pied|pieds|pie|pies|piede|piedi|pe|pes|voet", "ft"),
    ("yd", "length", "0.9144", "yard|yards|yarda|yardas|iarda|iarde|jarda|jardas", "yd|yds"),
    ("mi", "length", "1609.344", "mile|miles|meile|meilen|milla|millas|miglio|miglia|milha|milhas|mijl|mijlen",
     "mi"),
    ("nmi", "length", "1852", "nautical mile|nautical miles|seemeile|seemeilen", "nmi"),
    ("mg", "mass", "0.001", "milligram|milligrams|milligramme|milligrammes|milligramm|miligramo|miligramos|"
     "milligrammo|milligrammi|miligrama|miligramas", "mg"),
    ("g", "mass", "1", "gram|grams|gramme|grammes|gramm|gramo|gramos|grammo|grammi|grama|gramas", "g|gr"),
    ("kg", "mass", "1000", "kilogram|kilograms|kilogramme|kilogrammes|kilogramm|kilo|kilos|kilogramo|kilogramos|"
     "chilogrammo|chilogrammi|chilo|chili|quilograma|quilogramas|quilo|quilos", "kg|Kg|KG|kgs"),
    ("t", "mass", "1000000", "tonne|tonnes|metric ton|metric tons|tonnen|tonelada|toneladas|tonnellata|"
     "tonnellate", ""),
    ("lb", "mass", "453.59237", "pound|pounds|libra|libras|libbra|libbre", "lb|lbs|Lb|Lbs"),
    ("oz", "mass", "28.349523125", "ounce|ounces|unze|unzen|onza|onzas|oncia|onca|oncas", "oz"),
    ("st", "mass", "6350.29318", "stone|stones", ""),
    ("ml", "volume", "0.001", "millilitre|millilitres|milliliter|milliliters|mililitro|mililitros|millilitro|"
     "millilitri|cubic centimetre|cubic centimetres|cubic centimeter|cubic centimeters", "ml|mL|ML|cc|cm³|cm3"),
    ("cl", "volume", "0.01", "centilitre|centilitres|centiliter|centiliters|centilitro|centilitros|centilitri", "cl"),
    ("dl", "volume", "0.1", "decilitre|decilitres|deciliter|deciliters|decilitro|decilitros|decilitri", "dl"),
    ("l", "volume", "1", "litre|litres|liter|liters|litern|litro|litros|litri", "l|L|lt|ltr"),
    ("m3", "volume", "1000", "cubic metre|cubic metres|cubic meter|cubic meters|kubikmeter|metre cube|metres cubes|"
     "metro cubico|metros cubicos|metri cubi|kubieke meter", "m³|m3"),
    ("usgal", "volume", "3.785411784", "us gallon|us gallons|u.s. gallon|u.s. gallons", ""),
    ("impgal", "volume", "4.54609", "imperial gallon|imperial gallons|uk gallon|uk gallons", ""),
    ("m2", "area", "1", "square metre|square metres|square meter|square meters|quadratmeter|metre carre|"
     "metres carres|metro cuadrado|metros cuadrados|metri quadri|metri quadrati|metro quadrato|metro quadrado|"
     "metros quadrados|vierkante meter", "m²|m2|sqm|qm"),
    ("cm2", "area", "0.0001", "square centimetre|square centimetres|square centimeter|square centimeters|"
     "quadratzentimeter", "cm²|cm2"),
    ("km2", "area", "1000000", "square kilometre|square kilometres|square kilometer|square kilometers|"
     "quadratkilometer|kilometre carre|kilometres carres|kilometro cuadrado|kilometros cuadrados|"
     "chilometri quadrati|quilometros quadrados|vierkante kilometer", "km²|km2"),
    ("ha", "area", "10000", "hectare|hectares|hektar|hectarea|hectareas|ettaro|ettari", "ha"),
    ("acre", "area", "4046.8564224", "acre|acres|acri", ""),
    ("ft2", "area", "0.09290304", "square foot|square feet", "ft²|ft2|sq ft|sqft"),
    ("in2", "area", "0.00064516", "square inch|square inches", "in²|sq in"),
    ("mi2", "area", "2589988.110336", "square mile|square miles", "mi²|sq mi"),
    ("bit", "data", "0.125", "bit|bits", ""),
    ("B", "data", "1", "byte|bytes|octet|octets", "B"),
    ("kB", "data", "1000", "kilobyte|kilobytes|kilooctet|kilooctets", "kB|KB|kb|Ko|ko"),
    ("MB", "data", "1000000", "megabyte|megabytes|megaoctet|megaoctets", "MB|mb|Mo"),
    ("GB", "data", "1000000000", "gigabyte|gigabytes|gigaoctet|gigaoctets", "GB|gb|Go"),
    ("TB", "data", "1000000000000", "terabyte|terabytes|teraoctet|teraoctets", "TB|tb|To"),
    ("PB", "data", "1000000000000000", "petabyte|petabytes", "PB"),
    ("KiB", "data", "1024", "kibibyte|kibibytes", "KiB"),
    ("MiB", "data", "1048576", "mebibyte|mebibytes", "MiB"),
    ("GiB", "data", "1073741824", "gibibyte|gibibytes", "GiB"),
    ("TiB", "data", "1099511627776", "tebibyte|tebibytes", "TiB"),
    ("kbit", "data", "125", "kilobit|kilobits", "kbit|Kbit"),
    ("Mbit", "data", "125000", "megabit|megabits", "Mbit"),
    ("Gbit", "data", "125000000", "gigabit|gigabits", "Gbit"),
    ("mps", "speed", "1", "metre per second|metres per second|meter per second|meters per second|"
     "metres a second|meters a second|meter pro sekunde|metre par seconde|metres par seconde|metro por segundo|"
     "metros por segundo|metri al secondo|metro al secondo|meter per seconde", "m/s"),
    ("kmh", "speed", "5/18", "kilometre per hour|kilometres per hour|kilometer per hour|kilometers per hour|"
     "kilometres an hour|kilometers an hour|kilometer pro stunde|stundenkilometer|kilometre par heure|"
     "kilometres par heure|kilometro por hora|kilometros por hora|chilometri orari|chilometri all'ora|"
     "quilometros por hora|quilometro por hora|kilometer per uur", "km/h|kmh|kph|km/hr|Km/h|KM/H|km/u"),
    ("mph", "speed", "0.44704", "mile per hour|miles per hour|miles an hour|meilen pro stunde|millas por hora|"
     "miglia orarie|milhas por hora|mijl per uur", "mph|MPH|mi/h"),
    ("kn", "speed", "463/900", "knot|knots|knoten|noeud|noeuds|nudo|nudos|nodo|nodi|knoop|knopen", "kn|kt"),
    ("ftps", "speed", "0.3048", "foot per second|feet per second", "ft/s"),
    ("C", "temperature", "1", "celsius|centigrade|centigrados|centigradi", "C|°C|° C|°c"),
    ("F", "temperature", "1", "fahrenheit", "F|°F|° F|°f"),
    ("K", "temperature", "1", "kelvin|kelvins", "K"),
)

WORDS: dict[str, Unit] = {}
ABBREVIATIONS: dict[str, Unit] = {}
for _key, _measure, _size, _words, _abbrevs in _TABLE:
    _unit = Unit(_key, _measure, Fraction(_size))
    for _w in _words.split("|"):
        WORDS[_w] = _unit
    for _a in filter(None, _abbrevs.split("|")):
        ABBREVIATIONS[_a] = _unit

BY_KEY: dict[str, Unit] = {u.key: u for u in (*WORDS.values(), *ABBREVIATIONS.values())}

# "degrees" before a temperature unit, in the seven languages
DEGREES = r"(?:degrees?|deg|grad|grade|degres?|grados?|gradi|grado|graus?|graden)"
