"""Plugin specs: one immutable identity per configuration, with one parser, one canonical
label and one collision-free file slug.

A spec names a plugin and its parameters, ``name:key=value,key=value`` (a dataset spec
keeps its provider in the name: ``synthetic:two-balls:n=2000``). Values are parsed as
numbers, booleans, ``none`` or ``;``-separated lists. The canonical label sorts the
parameters and writes every value in one form, so ``squeak:eps=0.50,qbar=10`` and
``squeak:qbar=10,eps=0.5`` are one configuration. Every module that needs a label, a file
name or a seed part takes it from here.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

KINDS = ("dataset", "kernel", "sampler", "task")


def parse_value(text: str):
    """'3' → 3, '0.5' → 0.5, 'true' → True, 'none' → None, '1;2;3' → [1, 2, 3], else the text."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    if ";" in text:
        return [parse_value(part) for part in text.split(";") if part]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


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
    return str(value)


def _parse_params(text: str, spec: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"parameter {item!r} in {spec!r} must be key=value.")
        if key.strip() in params:
            raise ValueError(f"parameter {key.strip()!r} is given twice in {spec!r}.")
        params[key.strip()] = parse_value(value.strip())
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
        items = tuple(sorted((str(k), tuple(v) if isinstance(v, list) else v) for k, v in self.items))
        object.__setattr__(self, "items", items)

    @classmethod
    def parse(cls, text, kind: str) -> Spec:
        """Read ``name[:key=value,...]`` (``provider:name[:key=value,...]`` for datasets)."""
        if isinstance(text, Spec):
            return text
        text = str(text).strip()
        if kind == "dataset":
            if ":" not in text:
                raise ValueError(
                    f"dataset spec {text!r} must look like 'provider:name', e.g. 'synthetic:two-balls', "
                    "'sklearn:diabetes', 'openml:61' or 'file:data.csv'.")
            provider, rest = text.split(":", 1)
            head, sep, tail = rest.rpartition(":")
            name, params = (head, tail) if sep and "=" in tail else (rest, "")
            return cls(kind, f"{provider}:{name}", tuple(_parse_params(params, text).items()))
        name, _, params = text.partition(":")
        if not name.strip():
            raise ValueError(f"{kind} spec {text!r} has no name.")
        return cls(kind, name.strip(), tuple(_parse_params(params, text).items()))

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
        return f"{self.name}:{params}" if params else self.name

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


def split_specs(text: str) -> list[str]:
    """Split a comma list of specs; a piece with '=' but no ':' continues the previous spec
    (so ``squeak:qbar=20,eps=0.3,uniform`` is two samplers)."""
    items: list[str] = []
    for piece in (p.strip() for p in str(text).split(",")):
        if not piece:
            continue
        if items and "=" in piece and ":" not in piece and ":" in items[-1]:
            items[-1] += "," + piece
        else:
            items.append(piece)
    return items


__all__ = ["Spec", "format_value", "parse_value", "slug_of", "split_specs"]
