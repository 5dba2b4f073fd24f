"""Plugin parameters, declared once on the plugin's class.

A kernel, sampler or task lists its constructor's parameters in ``parameters`` (a dataset
provider answers :meth:`~kbench.plugin.DatasetProvider.parameters` for each of its datasets): each
a :class:`Param` with its type, its range or choices, what ``none`` stands for, and a
one-line meaning, in the spirit of scikit-learn's ``_parameter_constraints``. The default
stays where Python keeps it, in the signature. :class:`Declared` checks every constructor
call against the declaration with one message shape (a sweep setting's, the ``Bound`` one),
and ``kbench list --json``, docs/parameters.md and the conformance kit (which tries the
invalid values :meth:`Param.invalid` generates) read the same declarations.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

from kbench._validation import Bound, got, listed_value, python_hint, python_value, suggest
from kbench.errors import ContractViolation
from kbench.spec import FLOAT, WORDS, format_value

_KINDS = (bool, int, float, str)


@dataclass(frozen=True)
class Param:
    """One plugin parameter: ``kind`` (bool, int, float or str) and ``meaning``, a line.

    A number lies in [``low``, ``high``] (``low_open`` and ``high_open`` exclude the ends,
    ``why`` says where a limit comes from), or is one of ``choices`` when no range is given;
    text is one of ``choices`` when they are given. A number may also take the text
    ``choices`` (σ's ``median``). ``none`` says what leaving it unset (``none``) means; empty,
    the parameter cannot be unset. ``many`` also takes a non-empty list of such values.
    """

    kind: type
    meaning: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    none: str = ""
    many: bool = False
    why: str = ""

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise TypeError(f"Param kind must be one of bool, int, float, str, got {self.kind!r}.")
        if not isinstance(self.meaning, str) or not self.meaning.strip() or "\n" in self.meaning:
            raise TypeError("a Param's meaning is one non-empty line.")
        ends = [end for end in (self.low, self.high) if end is not None]
        if ends and not self.numeric:
            raise TypeError(f"a {self.kind.__name__} Param has no range: low and high are for int "
                            "and float.")
        if not all(isinstance(end, numbers.Real) and not isinstance(end, bool)
                   and math.isfinite(end) for end in ends):
            raise TypeError(f"a Param's low and high are finite numbers, got {self.low!r} and "
                            f"{self.high!r}.")
        if len(ends) == 2 and (self.low > self.high
                               or (self.low == self.high and (self.low_open or self.high_open))):
            raise TypeError(f"a Param's range [{self.low}, {self.high}] holds no value.")
        if any(not isinstance(c, str | numbers.Real) or isinstance(c, bool)
               for c in self.choices) or (
                self.kind is str and not all(isinstance(c, str) for c in self.choices)):
            raise TypeError(f"a {self.kind.__name__} Param's choices are text (and numbers, for a "
                            f"number), got {self.choices!r}.")
        unwritable = [c for c in self.choices if isinstance(c, str)
                      and (c.lower() in WORDS or FLOAT.match(c))]
        if unwritable:  # a spec reads 'none' as unset, 'true' as a flag, 'nan' as a number
            raise TypeError(f"a Param's text choice {unwritable[0]!r} reads as "
                            f"{'a number' if FLOAT.match(unwritable[0]) else 'a flag or unset'} in "
                            "a spec, so no spec can choose it; name it otherwise (e.g. "
                            "'no-centering').")

    @property
    def numeric(self) -> bool:
        return self.kind in (int, float)

    @property
    def bound(self) -> Bound | None:
        """The numeric range, checked (and worded) the way a sweep setting's is."""
        if not self.numeric or (self.low is None and self.high is None):
            return None
        return Bound("", self.kind is int, -math.inf if self.low is None else self.low, self.high,
                     self.low_open, self.why, high_open=self.high_open)

    @property
    def types(self) -> tuple[type, ...]:
        """The Python types a spec's value may be read as (kbench._validation.coerce_params)."""
        extra = ((str,) if any(isinstance(c, str) for c in self.choices) and self.kind is not str
                 else ())
        return (self.kind, *extra, *((list,) if self.many else ()),
                *((type(None),) if self.none else ()))

    @property
    def allowed(self) -> str:
        """What a value may be: 'an integer in [1, 1000]', "'copies' or 'prob'", …"""
        words = {bool: "true or false", int: "an integer", float: "a finite number", str: "text"}
        texts = [repr(c) for c in self.choices if isinstance(c, str)]
        numbers_ = [format_value(c) for c in self.choices if not isinstance(c, str)]
        bound = self.bound
        first = ([bound.allowed] if bound is not None else numbers_ if numbers_
                 else [] if texts and self.kind is str else [words[self.kind]])
        parts = [*first, *texts]
        text = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"
        if self.many:
            text += " (or a ';'-separated list of such values)"
        return text + ("" if not self.none else ", or none" if self.none == "none"
                       else f", or none ({self.none})")

    def check(self, value, name: str, owner: str):
        """``value`` converted (an integer to a float, 0/1 to a bool), or a one-line
        ValueError: '<owner>: <name> must be <allowed>, got <value>.'"""
        value = python_value(value)
        if value is None and self.none:
            return None
        value = listed_value(value, name, owner) if self.many else value
        if self.many and isinstance(value, list | tuple) and value:
            checked = [self._one(item, name, owner) for item in value]
            if len(set(map(repr, checked))) < len(checked):
                raise ValueError(f"{owner}: {name} lists a value more than once "
                                 f"({format_value(checked)}); give each once.")
            return checked
        return self._one(value, name, owner)

    def _one(self, value, name: str, owner: str):
        value = python_value(value)
        if isinstance(value, str):
            if value in self.choices or (self.kind is str and not self.choices):
                return value
        elif (self.kind is str and not self.choices and isinstance(value, numbers.Real)
              and not isinstance(value, bool)):
            return format_value(value)  # a column named 3
        elif self.kind is bool:
            if isinstance(value, bool) or (isinstance(value, numbers.Integral) and value in (0, 1)):
                return bool(value)
        elif self.numeric and isinstance(value, numbers.Real) and not isinstance(value, bool):
            if self.bound is not None:
                try:
                    return self.bound.check(value)
                except ValueError:
                    pass
            elif value in [c for c in self.choices if not isinstance(c, str)]:
                return self.kind(value)
        texts = [c for c in self.choices if isinstance(c, str)]
        hint = (python_hint(value, self.many, bool(self.none))
                or suggest(value, texts)) if isinstance(value, str) else ""
        raise ValueError(f"{owner}: {name} must be {self.allowed}, got "
                         f"{got(value, integer=self.kind is int)}{hint}.")

    def valid(self) -> list:
        """A few values this declaration takes (its ends, a choice, the other boolean), for
        the conformance kit to check that a plugin keeps what it is given."""
        if self.kind is bool:
            return [True, False]
        values: list[Any] = [c for c in self.choices][:2]
        if self.numeric and self.bound is not None:
            low, high = self.low, self.high
            if low is not None and not self.low_open:
                values.append(low)
            if high is not None and not self.high_open:
                values.append(high)
            if low is not None and high is not None:
                values.append((low + high) / 2 if self.kind is float
                              else (int(low) + int(high)) // 2)
            elif low is not None:
                values.append(low + 1 if self.kind is int else low * 2 + 1)
        values = [value for value in values if self._takes(value)]
        return [[value] if self.many else value for value in values[:3]]

    def _takes(self, value) -> bool:
        try:
            self.check(value, "-", "-")
        except ValueError:
            return False
        return True

    def invalid(self) -> list:
        """Values this declaration refuses, for the conformance kit to try."""
        values: list[Any] = [[] if self.many else ["x"], *(() if self.none else (None,))]
        if self.kind is not str or self.choices:
            values.append("kbench-not-a-choice")
        values += {bool: [2, 0.5], int: [math.nan, True, 1.5], float: [math.nan, True],
                   str: [True]}[self.kind]
        numeric_choices = [c for c in self.choices if not isinstance(c, str)]
        bound = self.bound
        if bound is None and numeric_choices:
            values.append(max(numeric_choices) + 1)
        if bound is not None:
            if self.low is not None:
                values.append(self.low if self.low_open else self.low - max(1, abs(self.low)))
            if self.high is not None:
                values.append(self.high if self.high_open else self.high + max(1, abs(self.high)))
        return values

    def as_dict(self, default=inspect.Parameter.empty) -> dict:
        """The declaration as JSON (``kbench list --json``)."""
        out = {"type": self.kind.__name__, "allowed": self.allowed, "meaning": self.meaning,
               "low": self.low, "high": self.high, "low_open": self.low_open,
               "high_open": self.high_open,
               "choices": list(self.choices), "none": self.none or None, "many": self.many}
        if default is not inspect.Parameter.empty:
            out["default"] = default
        return out


def defaults(function) -> dict[str, Any]:
    """Parameter name → its default in ``function``'s signature (a class: its constructor)."""
    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty}


def undeclared(function, parameters: dict[str, Param], skip: tuple[str, ...] = ()) -> list[str]:
    """The keyword parameters of ``function`` that ``parameters`` does not declare."""
    return [name for name, p in inspect.signature(function).parameters.items()
            if name not in parameters and name not in ("self", *skip)
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def declarations(parameters: dict[str, Param], function) -> dict[str, dict]:
    """Each declared parameter as JSON, with its default in ``function``'s signature."""
    given = defaults(function)
    return {name: param.as_dict(given.get(name, inspect.Parameter.empty))
            for name, param in parameters.items()}


def check_params(parameters: dict[str, Param], values: dict, owner: str) -> dict:
    """``values`` with each declared one checked and converted (:meth:`Param.check`)."""
    return {name: parameters[name].check(value, name, owner) if name in parameters else value
            for name, value in values.items()}


def _checked(init):
    """``init`` with its arguments checked against the class's declarations first (a value
    converted as declared), whichever class of the instance's calls it."""
    signature = inspect.signature(init)

    @functools.wraps(init)
    def checked(self, *args, **kw) -> None:
        bound = signature.bind(self, *args, **kw)
        owner = f"{type(self).kind} {type(self).name!r}"
        given = check_params(type(self).parameters, dict(list(bound.arguments.items())[1:]), owner)
        bound.arguments.update(given)
        init(*bound.args, **bound.kwargs)
        _kept(self, {name: value for name, value in given.items() if name in type(self).parameters},
              owner)

    checked._checks_parameters = True  # type: ignore[attr-defined]
    return checked


def _kept(plugin, given: dict, owner: str) -> None:
    """A ContractViolation when the constructor stored another value than the one given for a
    declared (single-valued) parameter: cells are labelled with the value given."""
    for name, value in given.items():
        kept = getattr(plugin, name, value)
        if not isinstance(value, list | tuple) and not isinstance(kept, list | tuple) and not (
                kept == value or (kept != kept and value != value)):  # (NaN kept as NaN)
            raise ContractViolation(f"{owner}: made with {name}={value!r}, it keeps "
                                    f"{name}={kept!r}: a plugin keeps a declared parameter as "
                                    "given (its cells are labelled with it); declare the values it "
                                    "takes instead.")


def _check_declaration(cls: type) -> None:
    """When a plugin class that declares its parameters is made: each is one its constructor
    takes, with a default the declaration allows (a spec that leaves it out gets the default).
    A subclass that inherits its declarations may take them as it likes (a test's spy kernel
    with a required σ)."""
    if "parameters" not in cls.__dict__:
        return
    declared = cls.__dict__["parameters"]
    if not isinstance(declared, dict) or not all(isinstance(p, Param) for p in declared.values()):
        raise TypeError(f"{cls.__qualname__}.parameters must be a dict of name → "
                        f"kbench.plugin.Param, got {declared!r}.")
    signature = inspect.signature(cls).parameters
    for name, param in declared.items():
        if name not in signature:
            raise TypeError(f"{cls.__qualname__} declares the parameter {name!r}, which its "
                            "constructor does not take.")
        if signature[name].default is inspect.Parameter.empty:
            raise TypeError(f"{cls.__qualname__}: the parameter {name!r} has no default in the "
                            "constructor's signature (a spec that leaves it out needs one).")
        try:
            param.check(signature[name].default, name, cls.__qualname__)
        except ValueError as exc:
            raise TypeError(f"the default of {name!r} breaks its declaration: {exc}") from None


class Declared:
    """A plugin class whose constructor arguments are checked against its ``parameters``
    before its ``__init__`` runs, whoever calls it (a spec, the Python API, a subclass)."""

    #: what the plugin is ("kernel", "sampler", "task"): the start of its error messages
    kind: ClassVar[str] = "plugin"
    name: ClassVar[str] = ""
    #: the constructor's parameters: name → declaration
    parameters: ClassVar[dict[str, Param]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "_checks_parameters", False):
            cls.__init__ = _checked(init)  # type: ignore[method-assign]
        _check_declaration(cls)

    def get_params(self) -> dict:
        """The constructor's parameters, read back from attributes of the same name."""
        names = [name for name, p in inspect.signature(type(self)).parameters.items()
                 if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        missing = [name for name in names if not hasattr(self, name)]
        if missing:
            raise ContractViolation(f"{type(self).kind} {type(self).name!r}: get_params reads the "
                                    f"parameter {missing[0]!r} from self.{missing[0]}: store each "
                                    "constructor parameter under its own name (or override "
                                    "get_params).")
        return {name: getattr(self, name) for name in names}
