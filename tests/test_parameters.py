"""Declared plugin parameters: one declaration per parameter, checked at every call, listed
by ``kbench list`` and docs/parameters.md, and tried by the conformance kit."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import kbench
from kbench.cli import main
from kbench.cli.listing import KINDS, parameters_markdown, plugin_rows
from kbench.parameters import Param, undeclared
from kbench.registry import list_plugins
from kbench.testing import check_sampler

ROOT = Path(__file__).resolve().parents[1]


def _builtin(kind: str):
    return [info for info in list_plugins(kind).values() if info.source == "kbench"]


def test_param_words_its_range_and_converts_what_it_takes():
    qbar = Param(int, "copies", low=1, high=1000)
    assert qbar.allowed == "an integer in [1, 1000]"
    assert qbar.check(5, "qbar", "sampler 's'") == 5
    eps = Param(float, "shrinkage", low=0, high=1, low_open=True, high_open=True)
    assert eps.allowed == "a finite number in (0, 1)"
    # an integer taken as a float
    assert isinstance(Param(float, "a scale", low=0).check(1, "a", "o"), float)
    sigma = Param(float, "σ", low=1e-150, high=1e150, choices=("median", "cv"), none="1")
    assert sigma.allowed == "a finite number in [1e-150, 1e+150], 'median' or 'cv', or none (1)"
    assert sigma.check("median", "sigma", "o") == "median" and sigma.check(None, "sigma",
                                                                           "o") is None
    assert Param(bool, "flag").check(1, "flag", "o") is True
    assert Param(float, "ν", choices=(0.5, 1.5)).allowed == "0.5 or 1.5"
    assert Param(int, "ℓ", low=1, many=True).check([3, 1], "components", "o") == [3, 1]
    assert Param(str, "a column").check(3, "target", "o") == "3"  # a column named 3
    with pytest.raises(ValueError, match=r"^sampler 's': qbar must be an integer in \[1, 1000\], "
                                         r"got 0\.$"):
        qbar.check(0, "qbar", "sampler 's'")
    with pytest.raises(ValueError, match=r"got 'medain' \(did you mean 'median'\?\)\.$"):
        sigma.check("medain", "sigma", "o")
    with pytest.raises(TypeError, match="one non-empty line"):
        Param(int, "two\nlines")


@pytest.mark.parametrize("kind", ["sampler", "kernel", "task"])
def test_every_builtin_plugin_declares_each_parameter_and_its_default_passes(kind):
    for info in _builtin(kind):
        declared = info.obj.parameters
        assert undeclared(info.obj, declared) == [], info.name
        for name, param in declared.items():
            default = kbench.parameters.defaults(info.obj)[name]
            assert param.check(default, name, info.name) == default or default is None


def test_every_builtin_dataset_option_is_declared():
    for info in _builtin("dataset"):
        provider = info.obj()
        assert undeclared(provider.load, provider.options,
                          skip=("name", "n", "seed")) == [], info.name
        for name in provider.names()[:20]:
            assert all(isinstance(p, Param) for p in provider.parameters(name).values())


@pytest.mark.parametrize("kind", ["sampler", "kernel", "task"])
def test_every_value_a_declaration_refuses_is_refused_in_one_line_by_the_plugin(kind):
    """Param.invalid's values, given to the plugin's class and through its spec: a
    ValueError of one line naming the parameter (float64 has nothing to round here)."""
    for info in _builtin(kind):
        for name, param in info.obj.parameters.items():
            for value in param.invalid():
                with pytest.raises(ValueError) as caught:
                    info.obj(**{name: value})
                message = str(caught.value)
                assert ("\n" not in message
                        and f"{kind} {info.name!r}: {name} must be" in message), message


def test_no_plugin_checks_a_range_by_hand():
    pattern = re.compile(r"check_(positive|nonnegative|in_open_unit_interval)\(")
    hits = [f"{path.relative_to(ROOT)}" for folder in ("kbench", "plugins")
            for path in (ROOT / folder).rglob("*.py")
            if pattern.search(path.read_text())]
    assert hits == []


def test_list_json_gives_each_parameters_type_range_and_default():
    result = CliRunner().invoke(main, ["list", "samplers", "--json"])
    assert result.exit_code == 0, result.output
    squeak = next(row for row in json.loads(result.output)["samplers"] if row["name"] == "squeak")
    qbar = squeak["parameters"]["qbar"]
    assert (qbar["type"], qbar["low"], qbar["high"], qbar["default"]) == ("int", 1, 10**6, 10)
    assert squeak["parameters"]["subsample"]["choices"] == ["copies", "prob"]
    assert squeak["parameters"]["block_size"]["none"]
    result = CliRunner().invoke(main, ["list", "datasets", "--json"])
    synthetic = next(row for row in json.loads(result.output)["datasets"]
                     if row["name"] == "synthetic")
    assert synthetic["datasets"]["smile"]["noise"]["low"] == 0


def test_the_parameters_page_is_written_from_the_declarations():
    payload = {kind: [row for row in rows if row["source"] == "kbench"]
               for kind, rows in plugin_rows(KINDS).items()}
    page = (ROOT / "docs" / "parameters.md").read_text()
    assert page == parameters_markdown(payload), (
        "docs/parameters.md is not what the declarations say: rewrite it with `kbench list "
        "--markdown` (the built-in plugins' sections)")
    assert "| `qbar` | an integer in [1, 1000000] | `10` |" in page


def test_the_kit_fails_an_undeclared_parameter_and_a_default_its_declaration_refuses():
    class Undeclared(kbench.Sampler):
        name = "undeclared"

        def __init__(self, offset: int = 0):
            self.offset = offset

        def _fit(self, X, kernel, rank, lam, rng):
            return kbench.nystrom(X, kernel,
                                  rng.choice(X.shape[0], min(rank, X.shape[0]), replace=False))

    with pytest.raises(AssertionError, match="declared parameters: .*offset is not declared"):
        check_sampler(Undeclared)
    Fine = type("Fine", (Undeclared,),
                {"name": "fine", "parameters": {"offset": Param(int, "the first row", low=0)}})
    assert "declared parameters" in check_sampler(Fine)


def test_a_class_whose_declarations_its_constructor_breaks_is_not_made():
    """Checked when the class is made (a plugin so written is listed as broken, at its line):
    a default its declaration refuses, a declared parameter without a default, one the
    constructor does not take; and declarations that hold no value."""
    def sampler(parameters, init):
        return type("Bad", (kbench.Sampler,),
                    {"name": "bad", "parameters": parameters, "__init__": init})

    def offset_zero(self, offset: int = 0):
        self.offset = offset

    def offset_required(self, offset):
        self.offset = offset

    with pytest.raises(TypeError, match=r"the default of 'offset' breaks its declaration: .*>= 1, "
                                        r"got 0"):
        sampler({"offset": Param(int, "the first row", low=1)}, offset_zero)
    with pytest.raises(TypeError, match="'offset' has no default in the constructor's signature"):
        sampler({"offset": Param(int, "the first row", low=0)}, offset_required)
    with pytest.raises(TypeError, match="declares the parameter 'gap', which its constructor does "
                                        "not take"):
        sampler({"gap": Param(int, "a gap", low=0)}, offset_zero)
    for bad in ({"low": 5, "high": 1}, {"low": math.nan}, {"kind": str, "low": 0},
                {"choices": (True,)}):
        with pytest.raises(TypeError):
            Param(**{"kind": int, "meaning": "p", **bad})


def test_python_values_are_read_as_their_python_numbers_and_texts_get_a_hint():
    import numpy as np

    assert kbench.make_sampler("squeak", qbar=np.int64(5), eps=np.float32(0.5),
                               halving_floor=np.bool_(True)).qbar == 5
    assert kbench.make_sampler("squeak", eps=np.array(0.25)).eps == 0.25
    with pytest.raises(ValueError, match=r"got '1;5' \(a text: in Python pass a list, \[1, 5\]\)"):
        kbench.make_task("kpca", components="1;5")
    with pytest.raises(ValueError, match=r"got 'none' \(a text: in Python pass None\)"):
        kbench.make_sampler("rls-fast", p1="none")
    with pytest.raises(ValueError, match="got an empty list"):
        kbench.make_task("kpca", components=[])
    with pytest.raises(ValueError, match=r"\(a decimal.Decimal\)"):
        kbench.make_sampler("squeak", eps=__import__("decimal").Decimal("0.5"))


def test_a_nan_or_a_bool_is_never_a_number_of_a_declared_range():
    for value in (math.nan, math.inf, True):
        with pytest.raises(ValueError, match="eps must be"):
            kbench.make_sampler("squeak", eps=value)
