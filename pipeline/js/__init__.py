"""JavaScript semantics pi relies on, reproduced once for the whole package.

pi is written in TypeScript: lengths are UTF-16 code units, ``\\s`` and ``trim()`` use
JavaScript's whitespace set, ``sort()`` compares UTF-16 units, ``JSON.stringify``
formats numbers its own way, conditions, template literals and ``Number(v)`` convert
values by JavaScript's rules, ``new Date(s).getTime()`` reads timestamps and pi's YAML
parser follows YAML 1.2's core schema. Every module that must match pi byte for byte
uses these helpers instead of the Python built-ins, through this package's surface.

Modules, bottom up: :mod:`.strings` (whitespace, UTF-16), :mod:`.numbers`
(``Number::toString``), :mod:`.values` (``undefined``, truthiness, ``String(v)``,
``Number(v)``, reading object keys), :mod:`.stringify` (``JSON.stringify``),
:mod:`.dates` (``Date``), :mod:`.yaml` (YAML as pi's parser reads it). Nothing here
imports another part of the project but :mod:`pipeline.gcpause`.
"""

from pipeline.js.dates import date_ms, iso_timestamp
from pipeline.js.numbers import js_number
from pipeline.js.stringify import JS_JSON_MAX_DEPTH, js_json
from pipeline.js.strings import JS_WHITESPACE, JS_WS_RE, js_sorted, js_trim, js_trim_end, u16len, u16slice
from pipeline.js.values import MISSING, js_get, js_nullish, js_object, js_string, js_to_number, js_truthy, num_at, str_at
from pipeline.js.yaml import js_key, load_yaml, yaml_string

__all__ = [
    "JS_JSON_MAX_DEPTH", "JS_WHITESPACE", "JS_WS_RE", "MISSING", "date_ms", "iso_timestamp", "js_get", "js_json",
    "js_key", "js_nullish", "js_number", "js_object", "js_sorted", "js_string", "js_to_number", "js_trim",
    "js_trim_end", "js_truthy", "load_yaml", "num_at", "str_at", "u16len", "u16slice", "yaml_string",
]
