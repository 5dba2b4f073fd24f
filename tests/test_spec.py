"""The spec grammar and the command line's number lists, fuzzed (Hypothesis).

``Spec.parse`` is the one reader of every spec (CLI, config, Python) and ``Spec.label`` its
one writer: reading a label gives the spec back, whatever its name and values hold; every
text either reads or gets a one-line ValueError. The properties are derandomized, so CI
sees the same examples on every run; ``--hypothesis-seed=random`` searches further.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench.cli.params import Bounded
from kbench.spec import Spec, parse_value, split_specs
from kbench.sweep.config import BOUNDS, RESOURCE_BOUNDS

FUZZ = settings(max_examples=400, deadline=None, derandomize=True)

keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
texts = st.text(max_size=12)
scalars = st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
                    st.none(),
                    texts)
values = st.one_of(scalars, st.lists(st.one_of(st.integers(),
                                               st.floats(allow_nan=False, allow_infinity=False),
                                               st.text(min_size=1, max_size=8)), min_size=1,
                                     max_size=4))
names = st.text(min_size=1, max_size=16).filter(lambda name: name.strip() == name)


@st.composite
def specs(draw) -> Spec:
    kind = draw(st.sampled_from(["dataset", "kernel", "sampler", "task"]))
    name = draw(names)
    if kind == "dataset":
        name = draw(st.text(min_size=1, max_size=8)) + ":" + draw(st.text(min_size=1, max_size=16))
    return Spec.of(kind, name, draw(st.dictionaries(keys, values, max_size=4)))


@FUZZ
@given(spec=specs())
def test_reading_a_label_gives_the_spec_back(spec):
    again = Spec.parse(spec.label, spec.kind)
    assert again == spec, (spec, spec.label, again)
    assert again.label == spec.label and again.slug == spec.slug


@FUZZ
@given(kind=st.sampled_from(["dataset", "kernel", "sampler", "task"]), text=st.text(max_size=30))
def test_any_text_reads_to_a_canonical_spec_or_gets_a_one_line_error(kind, text):
    try:
        spec = Spec.parse(text, kind)
    except ValueError as exc:
        assert "\n" not in str(exc) and str(exc), (text, str(exc))
        return
    assert Spec.parse(spec.label, kind) == spec
    assert Spec.parse(spec.label, kind).label == spec.label


@pytest.mark.parametrize("text, value", [
    ("5", 5), ("-5", -5), ("0.5", 0.5), ("1e-3", 1e-3), ("5;", [5]), ("1;2;3", [1, 2, 3]),
           ("true", True),
    ("none", None), ("５", "５"), ("1_000", "1_000"), ("0x10", "0x10"), ("a%2Cb", "a,b"),
           ("%35", "5"),
])
def test_values_read_as_ascii_numbers_lists_words_or_text(text, value):
    assert parse_value(text) == value and type(parse_value(text)) is type(value)


@pytest.mark.parametrize("text", ["1;;5", ";", ";5", "1; ;5"])
def test_a_list_with_an_empty_item_is_refused(text):
    with pytest.raises(ValueError, match="empty item"):
        parse_value(text)


@pytest.mark.parametrize("text, message", [
    ("squeak:qbar=20,,eps=0.3", "have an empty item"), ("squeak:qbar=20,", "have an empty item"),
    ("x:a=%ff", "not UTF-8"), ("x%fe", "not UTF-8"),
])
def test_empty_parameters_and_escapes_that_are_not_text_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        Spec.parse(text, "sampler")


def test_a_path_with_a_comma_or_a_colon_is_written_with_escapes():
    spec = Spec.parse("file:/data/a%2Cb%3Dc:d.csv:target=y", "dataset")
    assert spec.name == "file:/data/a,b=c:d.csv" and spec.params == {"target": "y"}
    assert split_specs(f"{spec.label},sklearn:iris") == [spec.label, "sklearn:iris"]
    assert Spec.parse(spec.label, "dataset") == spec


@pytest.mark.parametrize("text", ["a,,b", "a,", ",a", ","])
def test_a_spec_list_with_an_empty_item_is_refused(text):
    with pytest.raises(ValueError, match="--samplers .* has an empty item"):
        split_specs(text, "--samplers")


# -- the command line's number lists --------------------------------------------------------
def _convert(name: str, text: str, many: bool = True):
    return Bounded(BOUNDS[name], many).convert(text, None, None)


@FUZZ
@given(text=st.text(st.characters(codec="utf-8"), max_size=20) | st.lists(
    st.integers(-5, 10**8).map(str) | st.sampled_from(["", "5.0", "inf", "nan", "５", " 7", "1e3"]),
    min_size=1, max_size=5).map(",".join))
def test_rank_lists_are_distinct_ascii_integers_in_range_or_one_line_errors(text):
    try:
        ranks = _convert("ranks", text)
    except click.BadParameter as exc:
        assert "\n" not in exc.format_message()
        return
    items = [item.strip() for item in text.split(",")]
    assert ranks == [int(item) for item in items] and len(set(ranks)) == len(ranks)
    assert all(item.lstrip("+-").isascii() and item.lstrip("+-").isdigit() for item in items)
    assert all(1 <= r <= BOUNDS["ranks"].high for r in ranks)


@FUZZ
@given(lams=st.lists(st.floats(1e-12, 1e3), min_size=1, max_size=6, unique=True))
def test_a_written_lambda_list_reads_back(lams):
    assert _convert("lams", ",".join(map(repr, lams))) == lams


@pytest.mark.parametrize("name, text, message", [
    ("ranks", "5.0", "must be an integer"), ("ranks", "5,,10", "empty item"),
                                         ("ranks", "５", "must be an integer"),
    ("ranks", "5,5", "lists 5 more than once"),
                                         ("lams", "1e-3,0.001", "lists 0.001 more than once"),
    ("ranks", str(2**63), "must be an integer in [1, 10000000]"), ("lams", "nan", "finite number"),
])
def test_list_refusals(name, text, message):
    with pytest.raises(click.BadParameter, match=message.replace("[", r"\[").replace("]", r"\]")):
        _convert(name, text)


@pytest.mark.parametrize("name, text, message", [
    ("seed", str(2**63), "seed must be an integer in [0, 9223372036854775807]"),
    ("memory_limit_mb", "nan", "must be a finite number in [32,"),
    ("memory_limit_mb", "inf", "must be a finite number in [32,"),
    ("memory_limit_mb", "1", "below 32 a worker cannot write its cell"),
    ("repetitions", "1000000000", "repetitions must be an integer in [1, 1000]"),
    ("cell_timeout", "0", "cell_timeout must be a finite number in (0,"),
])
def test_number_refusals_name_the_parameter_and_its_range(name, text, message):
    with pytest.raises(click.BadParameter) as refused:
        _convert(name, text, many=False)
    assert message in refused.value.format_message()


def test_the_docs_list_every_declared_range():
    text = (Path(__file__).parents[1] / "docs" / "robustness.md").read_text()
    for bound in (*BOUNDS.values(), *RESOURCE_BOUNDS.values()):
        assert f"| `{bound.name}` | {bound.allowed} |" in text, bound.name
