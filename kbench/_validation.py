"""Every parameter check of kbench, and its did-you-mean.

Arrays, ranks and λ (kernels, samplers, feature maps); plugin parameters against the types
their signatures declare (the spec parser, the registry, dataset providers); names against
the known ones. Every check raises a ValueError that names the argument and says how to fix it.
"""

from __future__ import annotations

import difflib
import inspect
import math
import numbers
import re
import types
import typing
from collections import Counter
from collections.abc import Iterator, Set
from dataclasses import dataclass
from typing import Any

import numpy as np

from kbench.spec import format_value, parse_number, shown

#: the integers a result column, a seed or a NumPy index can hold (int64)
INT64_MAX = 2**63 - 1


def suggest(name: str, known) -> str:
    """' (did you mean 'x'?)' for the closest of ``known`` (the same name in another case
    first), or ''."""
    known = [str(k) for k in known]
    close = [k for k in known if k.lower() == str(name).lower()] or difflib.get_close_matches(
        str(name).lower(), [k.lower() for k in known], n=1, cutoff=0.5)
    close = [next(k for k in known if k.lower() == close[0].lower())] if close else []
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_features(X, name: str = "X", n_features: int | None = None) -> np.ndarray:
    """Return ``X`` as a C-contiguous float64 (n, d) array, or raise a clear ValueError."""
    if np.iscomplexobj(X):
        raise ValueError(
            f"{name} is complex; kernels take real features: pass X.real, or the real and "
            "imaginary parts as separate columns."
        )
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} must be a numeric array of shape (n_samples, n_features); "
            f"converting it to float64 failed: {exc}"
        ) from None
    if arr.ndim != 2:
        hint = " Use X.reshape(-1, 1) for a single feature." if arr.ndim == 1 else ""
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features), got an array of shape {arr.shape}.{hint}"
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); pass at least one row and column.")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(
            f"{name} has {arr.shape[1]} features but {n_features} were expected (the number of "
            "columns of the data the approximation was fitted on); pass data with the same columns."
        )
    if not np.isfinite(arr).all():
        bad = ~np.isfinite(arr)
        rows = np.flatnonzero(bad.any(axis=1))
        cols = np.flatnonzero(bad.any(axis=0))
        raise ValueError(
            f"{name} contains NaN or infinite values ({int(bad.sum())} entries, rows "
            f"{rows[:5].tolist()}{'...' if len(rows) > 5 else ''}, columns "
            f"{cols[:5].tolist()}{'...' if len(cols) > 5 else ''}); drop or impute them first."
        )
    return np.ascontiguousarray(arr)


def check_landmarks(landmarks, n: int) -> np.ndarray:
    """Landmark indices: a non-empty 1-D array of distinct integers in [0, n) (no negative
    index counting from the end, no float that happens to be whole), as an int64 array."""
    array = np.asarray(landmarks)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu":
        raise ValueError(f"landmarks must be a non-empty 1-D array of integer row indices, got "
                         f"{array.dtype} of shape {array.shape}.")
    if array.min() < 0 or array.max() >= n:
        raise ValueError(f"landmarks must index rows 0..{n - 1} of X, got indices from "
                         f"{array.min()} to {array.max()}.")
    if len(np.unique(array)) != array.size:
        raise ValueError("landmarks repeat an index; pass each row once (K_mm would be singular).")
    return array.astype(np.int64)


def check_rank(rank) -> int:
    """A rank is an integer >= 1."""
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or rank < 1:
        raise ValueError(f"rank must be an integer >= 1 (the number of features), got {rank!r}.")
    return int(rank)


def check_lam(lam, owner: str) -> float:
    """λ is the per-sample ridge (docs/conventions.md): a finite float > 0."""
    if lam is None:
        raise ValueError(
            f"{owner} needs lam, the per-sample ridge λ > 0 (the ridge added to K is n·λ); "
            "pass lam=1e-3, for example."
        )
    if isinstance(lam, bool) or not isinstance(lam,
                                               numbers.Real) or not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be a finite number > 0 (the per-sample ridge λ), got {lam!r}.")
    return float(lam)


def python_value(value):
    """A NumPy scalar or 0-d array as the Python number or bool it holds (a float32 as the
    number it prints: 1e-3, not 0.0010000000474974513); anything else as it is."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.floating) and value.dtype.itemsize < 8:
        return float(str(value))
    return value.item() if isinstance(value, np.generic) else value


def got(value, integer: bool = False) -> str:
    """``value`` as an error message shows what was given: a text that reads as a number is
    named as text (a percent-escaped value stays text: ``sigma=%31`` is the text '1'), and a
    whole float where an integer is wanted as the float it was read as (``1e1`` is 10.0); a
    value of another type than Python's own with its type."""
    if isinstance(value, list | tuple) and not value:
        return "an empty list"
    if type(value) not in (int, float, str, bool, list, tuple, type(None)):
        return f"{shown(value)} (a {type(value).__module__}.{type(value).__qualname__})"
    if isinstance(value, str) and parse_number(value) is not None:
        return (f"the text {shown(value)} (pass the number itself, not text; in a spec, a "
                "percent-escaped value stays text: write it unescaped)")
    if integer and isinstance(value, float) and value.is_integer():
        return (f"{format_value(value)} (a number with a point or an exponent is a float; write it "
                f"as digits, e.g. {int(value)})")
    return shown(value) if isinstance(value, str) else shown(format_value(value)).strip("'")


@dataclass(frozen=True)
class Bound:
    """The type and range of one numeric parameter, declared once and read by every edge
    that takes it (scikit-learn's ``Interval``): the Python API, the command line and the
    workflow's config check parse and check it here, with one message shape.

    ``integer`` values are ASCII decimal integers (``5``, not ``5.0`` or ``５``); floats are
    finite. ``low_open`` excludes ``low`` and ``high_open`` excludes ``high``; ``why`` says
    where a limit comes from; ``most`` bounds the length of a list of them (:meth:`check_list`).
    """

    name: str
    integer: bool
    low: float
    high: float | None = None
    low_open: bool = False
    why: str = ""
    most: int | None = None
    high_open: bool = False

    @property
    def allowed(self) -> str:
        """'an integer in [1, 1000]', 'a finite number in (0, 1e+08]', 'a finite number > 0'."""
        what = "an integer" if self.integer else "a finite number"
        low, high = (f"{v:d}" if self.integer else f"{v:g}" for v in (self.low, self.high or 0))
        span = (f"{'>' if self.low_open else '>='} {low}" if self.high is None else
                f"in {'(' if self.low_open else '['}{low}, {high}{')' if self.high_open else ']'}")
        return f"{what} {span}" + (f" ({self.why})" if self.why else "")

    def check(self, value, name: str | None = None) -> int | float:
        """``value`` as an int or a float, or a ValueError naming the parameter and its range."""
        kind = numbers.Integral if self.integer else numbers.Real
        number, value = None, python_value(value)  # (a float32 1e-3 means 1e-3, not 0.00100000005)
        if isinstance(value, kind) and not isinstance(value, bool):
            try:
                number = int(value) if self.integer else float(value)
            except OverflowError:  # an integer past float64
                pass
        inside = (number is not None and (self.integer or math.isfinite(number))
                  and (self.low < number if self.low_open else self.low <= number)
                  and (self.high is None
                       or (number < self.high if self.high_open else number <= self.high)))
        if not inside:
            raise ValueError(f"{name or self.name} must be {self.allowed}, got {shown(value)}.")
        return number

    def parse(self, text: str, name: str | None = None) -> int | float:
        """Read ``text`` (a command-line value) strictly, then :meth:`check` it."""
        value = parse_number(str(text).strip())
        if value is None or (self.integer and not isinstance(value, int)):
            raise ValueError(f"{name or self.name} must be {self.allowed}, got {shown(str(text))}.")
        if value == 0 and re.search(r"[1-9]", str(text).split("e")[0].split("E")[0]):
            raise ValueError(f"{name or self.name} must be {self.allowed}, got "
                             f"{shown(str(text).strip())}, which underflows to 0 in a float64 (the "
                             "smallest is about 5e-324).")
        return self.check(value, name)

    def parse_list(self, text: str, name: str | None = None) -> list[int | float]:
        """A comma list of values (``10,50,100``): no empty item, no repeat, each checked."""
        name = name or self.name
        items = [item.strip() for item in str(text).split(",")]
        if not all(items) or any(";" in item for item in items):
            flaw = "an empty item" if not all(items) else "';' between values"
            raise ValueError(f"{name} {text!r} has {flaw}; pass values separated by single commas, "
                             f"e.g. {'10,50,100' if self.integer else '1e-4,1e-3'}.")
        return self.check_list([self.parse(item, name) for item in items], name)

    def check_list(self, values, name: str | None = None) -> list[int | float]:
        """A non-empty list of at most ``most`` values without repeats, each :meth:`check`-ed."""
        name = name or self.name
        values = [values] if np.isscalar(values) else list(values)
        if not values:
            raise ValueError(f"{name} is empty: pass at least one value, {self.allowed}.")
        if self.most is not None and len(values) > self.most:
            raise ValueError(f"{name} lists {len(values)} values; a sweep takes at most "
                             f"{self.most}.")
        checked = [self.check(v, name) for v in values]
        repeated = sorted(v for v, count in Counter(checked).items() if count > 1)
        if repeated:
            raise ValueError(f"{name} lists {', '.join(map(format_value, repeated))} more than "
                             "once; pass each value once.")
        return checked


#: λ, the per-sample ridge (docs/conventions.md): of a sweep, and of every task's λ path
LAMS = Bound("lams", False, 0, low_open=True, why="the per-sample ridge λ", most=200)


def check_lam_path(lams) -> np.ndarray:
    """A non-empty list of finite λ > 0 without repeats (:data:`LAMS`), as an array."""
    values = [lams] if np.isscalar(lams) else np.asarray(lams, dtype=object).ravel().tolist() \
        if isinstance(lams, np.ndarray) else lams
    try:
        return np.asarray(LAMS.check_list(values), dtype=float)
    except TypeError:  # not a list
        raise ValueError(f"lams must be {LAMS.allowed}, or a list of them, got {lams!r}.") from None


# ---------------------------------------------------------------------------------------
# Plugin parameters against their declared types
# ---------------------------------------------------------------------------------------
_TYPE_NAMES = {bool: "true or false (or 1/0)", int: "an integer", float: "a finite number",
               str: "text", list: "a ';'-separated list", type(None): "none"}


def declared_types(obj) -> dict[str, tuple[type, ...] | None]:
    """Parameter name → the types ``obj``'s signature declares for it: its annotation (a
    union gives several), else the type of its default (an ``int`` default also allows a
    float); None when neither says. ``obj`` is a function or a class (its ``__init__``)."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable annotations: fall back to the defaults
        hints = {}
    declared: dict[str, tuple[type, ...] | None] = {}
    for name, parameter in inspect.signature(obj).parameters.items():
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if name in hints:
            declared[name] = _flatten(hints[name])
        elif parameter.default is None or parameter.default is inspect.Parameter.empty:
            declared[name] = None
        else:
            default_type = type(parameter.default)
            declared[name] = {bool: (bool,), int: (int, float), float: (float,), str: (str,),
                              list: (list,), tuple: (list,)}.get(default_type)
    return declared


def _flatten(hint) -> tuple[type, ...] | None:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        members = [_flatten(arg) for arg in typing.get_args(hint)]
        return None if any(m is None for m in members) else tuple(t for m in members for t in m)
    if hint is None or hint is type(None):
        return (type(None),)
    base = origin or hint
    if base in (list, tuple) or (isinstance(base, type) and issubclass(base, (list, tuple))):
        return (list,)
    if base in (bool, int, float, str):
        return (base,)
    return None  # Any, Literal, a class: the plugin checks the value itself


def coerce_params(params: dict[str, Any], declared: dict[str, tuple[type, ...] | None],
                  owner: str) -> dict[str, Any]:
    """Check parsed spec values against the declared types and convert them: a bool is only
    true/false (or 1/0), an int parameter takes only integers, numbers must be finite, and a
    text parameter takes numbers as their text. The error names ``owner`` and the parameter."""
    return {name: _coerce(value, declared.get(name), name, owner) for name, value in params.items()}


def listed_value(value, name: str, owner: str):
    """A list parameter's value from Python: a range or 1-D array as a list; a set or an
    iterator refused (it has no order to record); anything else as it is."""
    if isinstance(value, range) or isinstance(value, np.ndarray) and value.ndim == 1:
        return [python_value(item) for item in value]
    if isinstance(value, Set | Iterator):
        raise ValueError(f"{owner}: {name} takes a list or a tuple of values, got "
                         f"{type(value).__name__}, which has no order to record; pass list(...).")
    return value


def _coerce(value, allowed, name: str, owner: str):
    value = python_value(value)
    if allowed is not None and list in allowed:
        value = listed_value(value, name, owner)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{owner}: {name} must be finite, got {value!r}.")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > INT64_MAX:
        raise ValueError(f"{owner}: {name} must be an integer within ±{INT64_MAX} (64 bits), got "
                         f"{value!r}.")
    if isinstance(value, list | tuple):
        for item in value:
            _coerce(item, None, name, owner)
    if allowed is None:
        return value
    if value is None:
        if type(None) in allowed:
            return None
    elif isinstance(value, bool):
        if bool in allowed:
            return value
    elif isinstance(value, int):
        if int in allowed:
            return value
        if float in allowed:
            return float(value)
        if bool in allowed and value in (0, 1):
            return bool(value)
        if str in allowed:
            return str(value)
    elif isinstance(value, float):
        if float in allowed:
            return value
        if str in allowed:
            return format_value(value)
    elif isinstance(value, str):
        if str in allowed:
            return value
    elif isinstance(value, list | tuple):
        if list in allowed:
            return list(value)
    expected = " or ".join(dict.fromkeys(_TYPE_NAMES.get(t, t.__name__) for t in allowed))
    if isinstance(value, list | tuple):  # written a;b: only a list parameter takes several values
        raise ValueError(f"{owner}: {name} takes one value ({expected}), got the list {got(value)} "
                         "(a;b lists are for list parameters, such as kpca's components).")
    raise ValueError(f"{owner}: {name} must be {expected}, got {got(value, integer=int in allowed)}"
                     f"{python_hint(value, list in allowed, type(None) in allowed)}.")


def python_hint(value, takes_list: bool, takes_none: bool) -> str:
    """For a text given in Python where a spec's text would have been read as a list or as
    none (``"1;5"``, ``"none"``): how to pass it in Python."""
    if not isinstance(value, str):
        return ""
    if takes_none and value.strip().lower() == "none":
        return " (a text: in Python pass None)"
    parts = [part.strip() for part in value.split(";")]
    if takes_list and len(parts) > 1 and all(parts):
        return f" (a text: in Python pass a list, [{', '.join(parts)}])"
    return ""


def check_ridge_path(Y, lams, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(Y, λ path) of a ridge path, checked: Y the n training rows' targets as columns, the
    path a non-empty list of finite λ > 0."""
    Y = np.asarray(Y, dtype=float)
    if Y.ndim != 2 or Y.shape[0] != n:
        raise ValueError(f"ridge_path: Y must hold the {n} training rows' targets as columns (n × "
                         f"c; y[:, None] for one), got shape {Y.shape}.")
    return Y, check_lam_path(lams)


def check_components(components) -> list[int]:
    """KPCA's numbers of components: a non-empty list of integers >= 1."""
    found = list(components) if isinstance(components,
                                           list | tuple | range | np.ndarray) else [components]
    if not found or any(isinstance(c, bool) or not isinstance(c, numbers.Integral) or c < 1
                        for c in found):
        raise ValueError(f"kpca_errors: components must be integers >= 1, got {components!r}.")
    return [int(c) for c in found]
