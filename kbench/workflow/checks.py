"""The workflow config's values, checked before any job: the JSON schema
(workflows/schemas/config.schema.yaml) checks the config's structure and types; this module
checks its values with the parsers of the command line and the Python API: numbers against
their one declaration (kbench.sweep.config.BOUNDS), specs with the one spec grammar, plugin
names and parameters against the registry, output folders.
"""

from __future__ import annotations

from pathlib import Path

from kbench._files import check_creatable, check_folder, check_no_wildcard
from kbench.datasets import check_stated_rows, data_files, known_task_type
from kbench.errors import ConfigError, ContractViolation, PluginError
from kbench.papers import PAPER_OUT, check_paper
from kbench.registry import canonical_label, create
from kbench.sweep.batches import config_datasets
from kbench.sweep.config import check_config_lists, check_numbers, same_configuration
from kbench.sweep.document import DATA_SOURCES
from kbench.sweep.layout import CELLS_DIR, DATA_DIR, LOGS_DIR, enclosing_results
from kbench.sweep.parts import parts_of
from kbench.sweep.plan import check_validation_rows
from kbench.tasks.selection import DEFAULT_SELECTION


def _check_out(out) -> None:
    folder = Path(out)
    if (results := enclosing_results(folder)) is not None:
        raise ValueError(f"{folder} lies in {results / CELLS_DIR}, the cells of the results folder "
                         f"{results}, whose page would take in what is written here; name a folder "
                         "outside it.")
    check_creatable(folder / CELLS_DIR)


def check_config(config: dict) -> None:
    """Everything the schema does not say, with the checks of ``kbench run``: numbers in their
    declared ranges (ranks are integers, 5 and not 5.0, each once; λ finite), output folders
    that can be folders, every name a registered plugin with valid parameters, every dataset
    spec readable and available (a ``file:`` exists) and the paper known. Runs before any
    job; the error names the key."""
    check_numbers(config)
    for key in ("out", "paper_out"):
        if key in config:
            _check(key, check_folder, config[key])
            _check(key, check_no_wildcard, config[key])
    if "out" in config:  # as kbench run --out: outside another results folder's cells, and writable
        _check("out", _check_out, config["out"])
    # (the schema fills the default in)
    if "paper" in config or config.get("paper_out", PAPER_OUT) != PAPER_OUT:
        _check("paper", check_paper, config.get("paper"), config["tasks"], config["samplers"])
        _check("paper_out", _check_paper_out, config["out"], config.get("paper_out", PAPER_OUT))
    if ("catalogue" in config) == ("datasets" in config):
        raise ConfigError(f"config: {DATA_SOURCES}")
    where = config_datasets(config) if "catalogue" in config else {
        f"datasets[{index}]": spec for index, spec in enumerate(config["datasets"])}
    datasets = list(where.values())
    keyed: dict[str, str] = {}
    for dataset in config.get("dataset_kernels", {}):
        if (same := same_configuration(dataset, datasets, "dataset")) is None:
            raise ConfigError(f"config key 'dataset_kernels': {dataset!r} is not one of the "
                              f"datasets ({', '.join(datasets)}).")
        if same in keyed:
            raise ConfigError(f"config key 'dataset_kernels': {keyed[same]!r} and {dataset!r} both "
                              f"name the dataset {same!r}; give its kernels under one key (a list "
                              "for several).")
        keyed[same] = dataset
    checks = [("kernel", [config["kernel"]], "kernel"),
              *((f"dataset_kernels[{d!r}]", as_list(k), "kernel")
                for d, k in config.get("dataset_kernels", {}).items())]
    checks += [("samplers", config["samplers"], "sampler"), ("tasks", config["tasks"], "task")]
    for key, specs, kind in checks:
        for index, spec in enumerate(specs):
            try:
                plugin = create(spec, kind)
                if kind == "task":
                    plugin.check_ranks(config["ranks"])
                if kind == "sampler":
                    # the parts its jobs build, checked now (a broken hook: no job runs)
                    parts_of(spec)
            except (ValueError, PluginError, ContractViolation) as exc:
                where = key if key.startswith(("kernel", "dataset_kernels")) else f"{key}[{index}]"
                raise ConfigError(f"config key '{where}': {exc}") from None
    chooses = config.get("selection", DEFAULT_SELECTION) == DEFAULT_SELECTION and any(
        create(t, "task").uses_lams for t in config["tasks"])
    for key, spec in where.items():
        # the spec checked, and what a provider reads to plan (a table's columns)
        _check(key, known_task_type, spec)
        _check(key, check_stated_rows, spec)
        for path in data_files(spec):  # the input of the job that prepares it
            _check(key, check_no_wildcard, path, "a data file")
        if chooses:
            _check(key, check_validation_rows, spec)
    check_config_lists([*checks, ("datasets", datasets, "dataset")])  # each spec readable by now


#: the folders of a results folder that its jobs and its page write (a paper's page goes elsewhere)
_RESULTS_PARTS = (CELLS_DIR, DATA_DIR, LOGS_DIR, "figures", "batches")


def _check_paper_out(out: str, paper_out: str) -> None:
    """A paper's page beside the sweep's results, not in their folder or one of its parts:
    the leaderboard prunes its own figures folder, and the jobs own the others."""
    results, page = Path(out).resolve(), Path(paper_out).resolve()
    parts = [results / part for part in _RESULTS_PARTS]
    if page == results or any(page == part or part in page.parents for part in parts):
        raise ValueError(f"{paper_out} is "
                         f"{out}{'' if page == results else ' or a folder its jobs write'}, where "
                         "the sweep's own page and files go (its figures are pruned); give the "
                         f"paper's page a folder of its own (the default: {PAPER_OUT}).")


def _check(key: str, method, *args) -> None:
    """``method(*args)``, its ValueError a ConfigError naming the config's ``key``."""
    try:
        method(*args)
    except ValueError as exc:
        raise ConfigError(f"config key '{key}': {exc}") from None


def as_list(specs) -> list[str]:
    """A config entry of one spec or a list of them, as a list."""
    return [specs] if isinstance(specs, str) else list(specs)


def labelled(config: dict) -> dict:
    """The checked ``config`` with its samplers and tasks as their results are labelled
    (:func:`kbench.registry.canonical_label`: no default written out), as ``kbench run``
    labels them: the jobs' cells are the ones a run writes."""
    return {**config, **{key: [canonical_label(spec, key.removesuffix("s")) for spec in config[key]]
                         for key in ("samplers", "tasks")}}
