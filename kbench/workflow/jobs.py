"""The jobs of a workflow config and their files: what the Snakefile's rules are made of."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from kbench._files import expand_home
from kbench._provenance import KBENCH_VERSION
from kbench.datasets import canonical_spec, data_files, known_task_type, max_n_train, stated_size
from kbench.exact.baseline import DENSE_MAX_N
from kbench.registry import create, package_of, plugin_class
from kbench.spec import Spec
from kbench.sweep import layout
from kbench.sweep.batches import Batches
from kbench.sweep.config import lam_path, same_configuration
from kbench.sweep.context import exact_limit
from kbench.sweep.parts import check_part, part_inputs, part_path, parts_of
from kbench.sweep.plan import not_planned, task_refuses
from kbench.tasks.selection import DEFAULT_SELECTION
from kbench.workflow.checks import as_list
from kbench.workflow.resources import RUNTIME_REFERENCE_N, JobResources
from kbench.workflow.summary import run_summary


@dataclass(frozen=True)
class RunRule:
    """A run rule of the workflow (:meth:`Sweep.run_rules`): its name, its dataset and kernel,
    their planned samplers, and whether each sampler is a job of its own."""

    name: str
    dataset: str
    kernel: str
    samplers: list[str]
    per_sampler: bool


@dataclass(frozen=True)
class Sweep(JobResources):
    """The jobs of a config: run jobs (:meth:`jobs`) covering every repetition, task and rank,
    and where several read them (:meth:`prepared_apart`) one prepare job per dataset and one
    exact job per (dataset, kernel), each covering every repetition; a dataset has one kernel
    unless ``dataset_kernels`` lists several."""

    config: dict

    @property
    def out(self) -> Path:  # ~ expanded, as kbench's commands expand it
        return expand_home(self.config["out"])

    @cached_property
    def batches(self) -> Batches:
        """A catalogue's batches (none for a config that lists its datasets)."""
        return Batches(self.config, self.out, self.sweep)

    @cached_property
    def datasets(self) -> list[str]:
        """The datasets this run computes: the config's, or those of a catalogue's missing
        batches."""
        if "catalogue" not in self.config:  # as their results are labelled: a file's absolute path
            return [canonical_spec(spec) for spec in self.config["datasets"]]
        return [spec for batch in self.batches.missing for spec in self.batches.specs[batch]]

    def batch_folders(self, batch: str) -> list[str]:
        """The cell folders of a batch's run jobs (one per dataset and kernel): what its file
        aggregates."""
        pairs = dict.fromkeys((d, k) for d, k, _ in self.jobs() if d in self.batches.specs[batch])
        return [str(layout.dataset_folder(self.out, self.sweep, kernel, dataset))
                for dataset, kernel in pairs]

    def batch_cells(self, batch: str) -> list[str]:
        """The cells asked for (:meth:`targets`) of a batch's run jobs: the batch's inputs."""
        return [f for d, k, samplers in self.jobs() if d in self.batches.specs[batch]
                for f in self.targets(d, k, samplers)]

    def by_slug(self, key: str) -> dict[str, str]:
        """Slug → config entry, for the datasets, samplers or tasks of the config."""
        kind = key.removesuffix("s")
        return {Spec.parse(text, kind).slug: text
                for text in (self.datasets if key == "datasets" else self.config[key])}

    def jobs(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """The run jobs as (dataset, kernel, samplers), each covering every repetition, task
        and rank: one process start, one load of the splits and baselines and one plan for
        all its fits, each fit serving every task. A dataset's samplers share one job per
        kernel, but on a dataset whose spec states more than RUNTIME_REFERENCE_N rows each
        sampler is a job (a cluster runs them side by side, each within its runtime); a
        sampler that refuses the kernel by design is in none."""
        return self._jobs

    @cached_property
    def _jobs(self) -> list[tuple[str, str, tuple[str, ...]]]:  # computed once: every rule reads it
        refused = {(r["dataset"], r["kernel"], r["sampler"]) for r in self.not_planned
                   if r["refused_by"] == "sampler"}
        jobs = []
        for d in self.datasets:
            for k in self.kernels(d):
                samplers = tuple(s for s in self.config["samplers"] if (
                    Spec.parse(d, "dataset").label, Spec.parse(k, "kernel").label,
                    Spec.parse(s, "sampler").label) not in refused)
                if samplers and self.tasks_of(d):  # (a dataset no task accepts has no cell)
                    jobs += [(d, k, (s,))
                             for s in samplers] if self.job_per_sampler(d) else [(d, k, samplers)]
        return jobs

    @staticmethod
    def job_per_sampler(dataset: str) -> bool:
        """Whether each sampler of ``dataset`` is a run job of its own (a dataset stated larger than
        RUNTIME_REFERENCE_N rows)."""
        size = stated_size(dataset)
        return size is not None and size[0] > RUNTIME_REFERENCE_N

    def run_rules(self) -> list[RunRule]:
        """The run rules, one per (dataset, kernel), each named after them: its cells are static
        outputs (Snakemake finds a cell's rule by its path at once), with the sampler a
        wildcard held to the planned samplers in a rule of one job per sampler."""
        rules: list[RunRule] = []
        for dataset in self.datasets:
            for kernel in self.kernels(dataset):
                planned = [s for d, k, samplers in self.jobs() if (d, k) == (dataset, kernel)
                           for s in samplers]
                if not planned:
                    continue
                base = re.sub(r"\W+", "_", f"run_{Spec.parse(dataset, 'dataset').name}_"
                                           f"{Spec.parse(kernel, 'kernel').name}")
                taken = {rule.name for rule in rules}
                name = next(n for n in (base, *(f"{base}_{i}" for i in range(2, len(rules) + 3)))
                            if n not in taken)
                rules.append(RunRule(name, dataset, kernel, planned, self.job_per_sampler(dataset)))
        return rules

    def run_outputs(self, rule: RunRule) -> list[str]:
        """A run rule's outputs: its cells, the sampler a wildcard in a rule of one job per
        sampler."""
        return self._cells(rule.dataset, rule.kernel, ["{sampler}"] if rule.per_sampler else
                           [Spec.parse(s, "sampler").slug for s in rule.samplers])

    def run_log(self, rule: RunRule) -> str:
        """A run rule's log (a pattern with the sampler in a rule of one job per sampler)."""
        return layout.pattern(self.out / layout.LOGS_DIR,
                              layout.LOGS["run_sampler" if rule.per_sampler else "run"],
                              **layout.slugs(dataset=rule.dataset, kernel=rule.kernel))

    def run_samplers(self, rule: RunRule):
        """A run job's ``--samplers``: the rule's, or a function of the sampler wildcard."""
        if rule.per_sampler:
            return lambda wildcards: ",".join(self._rule_samplers(rule, wildcards))
        return ",".join(rule.samplers)

    def _rule_samplers(self, rule: RunRule, wildcards) -> list[str]:
        return [self.by_slug("samplers")[wildcards.sampler]] if rule.per_sampler else rule.samplers

    def run_inputs(self, rule: RunRule):
        """A run job's inputs (a function of the wildcards): its dataset's splits and exact
        baselines (:attr:`prepared_apart`), else its data files; the last parts of its fits built as
        jobs."""
        def inputs(wildcards) -> list[str]:
            data = [*self.split_files(rule.dataset), *self.exact_files(rule.dataset, rule.kernel)] \
                if rule.dataset in self.prepared_apart else [str(path)
                                                             for path in data_files(rule.dataset)]
            return [*data, *(f for s in self._rule_samplers(rule, wildcards)
                             for f in self.part_files(rule.dataset, rule.kernel, s))]
        return inputs

    @cached_property
    def prepared_apart(self) -> set[str]:
        """The datasets whose splits and exact baselines prepare and exact jobs make for their
        run jobs to load: those several jobs read (kernels, a job per sampler, parts of fits)
        or whose baseline may be matrix-free (minutes, with a runtime of its own). Another's
        one run job makes them: two process starts saved."""
        readers = Counter(d for d, _, _ in self.jobs())
        readers.update(d for d, _, samplers in self.jobs() for s in samplers if parts_of(s))
        exact = self.exact_max_n is not None
        return {d for d in readers if readers[d] > 1 or exact
                and (max_n_train(d) or math.inf) > DENSE_MAX_N}

    def job_identity(self, rule: RunRule):
        """The packages and versions behind a run job's cells (kbench's, the dataset provider's,
        the kernel's, the samplers' and every task's), a function of the wildcards: a Snakemake
        param, so a new version of any of them reruns the job, whose ``kbench run`` then
        recomputes exactly the cells whose identity changed (kbench.sweep.plan.cell_inputs)."""
        def identity(wildcards) -> str:
            specs = [(rule.dataset, "dataset"), (rule.kernel, "kernel"),
                     *((s, "sampler") for s in self._rule_samplers(rule, wildcards)),
                     *((task, "task") for task in self.config["tasks"])]
            packages = sorted({package_of(spec, kind)
                               for spec, kind in specs} | {("kbench", KBENCH_VERSION)})
            return ", ".join(f"{name} {version}" for name, version in packages)
        return identity

    def run_resources(self, rule: RunRule) -> dict:
        """A run rule's memory and runtime, functions of the attempt
        (kbench.workflow.Sweep.memory_mb, runtime_min)."""
        return {"mem_mb": lambda wildcards, attempt: self.memory_mb(rule.dataset, attempt),
                "runtime": lambda wildcards, attempt: self.runtime_min(rule.dataset, attempt,
                                                                       repetitions=len(self.repetitions))}

    @property
    def repetitions(self) -> range:
        return range(self.config["repetitions"])

    @cached_property
    def not_planned(self) -> list[dict]:
        """The (dataset, kernel, sampler, task) combinations that cannot run by design
        (kbench.sweep.plan.not_planned), which the workflow never plans."""
        return not_planned(self.datasets,
                           {Spec.parse(d, "dataset").label: self.kernels(d) for d in self.datasets},
                           self.config["samplers"], self.config["tasks"])

    @cached_property
    def _accepted_tasks(self) -> dict[str, list[str]]:
        tasks = {t: create(t, "task") for t in self.config["tasks"]}
        accepted = {}
        for d in self.datasets:
            dataset = Spec.parse(d, "dataset")
            kind = known_task_type(dataset.label)
            accepted[d] = [t for t, task in tasks.items()
                           if task_refuses(task, dataset, kind) is None]
        return accepted

    def tasks_of(self, dataset: str) -> list[str]:
        """The config's tasks that accept the dataset's type (all when it is not known before
        loading)."""
        return self._accepted_tasks[dataset]

    def kernels(self, dataset: str) -> list[str]:
        """The kernel specs of a dataset: its ``dataset_kernels`` entry (one spec or a list), else
        ``kernel``."""
        return self._kernels.get(dataset, [self.config["kernel"]])

    @cached_property
    def _kernels(self) -> dict[str, list[str]]:  # ``dataset_kernels`` keyed as :attr:`datasets` are
        return {same_configuration(d, self.datasets, "dataset") or canonical_spec(d): as_list(k)
                for d, k in self.config.get("dataset_kernels", {}).items()}

    def kernels_by_slug(self) -> dict[str, str]:
        return {Spec.parse(k, "kernel").slug: k for d in self.datasets for k in self.kernels(d)}

    @property
    def data(self) -> Path:
        """The workflow's data cache: splits, exact baselines, parts of fits built as jobs."""
        return self.out / layout.DATA_DIR

    def log(self, rule: str) -> str:
        """A rule's log file pattern."""
        return layout.pattern(self.out / layout.LOGS_DIR, layout.LOGS[rule])

    def split_pattern(self) -> str:
        """Snakemake output pattern of the prepared splits (see :meth:`split_file`)."""
        return layout.pattern(self.data, layout.SPLIT, seed=self.config["seed"])

    def exact_pattern(self) -> str:
        """Snakemake output pattern of the exact baselines (see :meth:`exact_files`)."""
        return layout.pattern(self.data, layout.EXACT, seed=self.config["seed"])

    def job_counts(self) -> dict[str, int]:
        """How many jobs of each sweep rule the workflow has (part only when it has some)."""
        jobs = self.jobs()
        splits = {d for d, _, _ in jobs if d in self.prepared_apart}
        baselines = ({(d, k) for d, k, _ in jobs if d in splits}
                     if self.exact_max_n is not None else set())
        parts = sum(len(parts_of(s)) for _, _, samplers in jobs for s in samplers)
        return {"prepare": len(splits), "exact": len(baselines),
                **({"part": parts * len(self.repetitions)} if parts else {}), "run": len(jobs)}

    def part_pattern(self) -> str:
        """Snakemake output pattern of the parts of fits built as jobs
        (:func:`kbench.sweep.parts.part_path`)."""
        return layout.pattern(self.data, layout.PART, seed=self.config["seed"])

    def part_files(self, dataset: str, kernel: str, sampler: str, repetition: int | None = None,
                   part: str | None = None) -> list[str]:
        """The part files a job needs: a run job (``part`` None) the last part of a sampler's
        fits in every repetition (or in ``repetition``), a part job those it is made from; []
        for samplers whose fits are built in one piece, and for parts made from the data alone."""
        parts = parts_of(sampler)
        if not parts:
            return []
        needed = [parts[-1]] if part is None else part_inputs(sampler, check_part(part, sampler))
        repetitions = self.repetitions if repetition is None else [repetition]
        return [str(part_path(self.data, dataset, kernel, sampler, rep, self.config["seed"], name))
                for rep in repetitions for name in needed]

    def summary(self) -> str:
        """The run's last lines: its cells by status, each task's verdict (what the leaderboard
        job printed) and where its leaderboard is."""
        log = Path(self.log("leaderboard"))
        verdicts = [line for line in log.read_text().splitlines() if line
                    and not line.startswith("wrote ")] \
            if log.is_file() else []
        return run_summary(self.out, verdicts)

    @cached_property
    def lams(self) -> tuple[tuple[float, ...], tuple[float, float] | None]:
        """The λ path the cells start from and its bounds (kbench.sweep.config.lam_path)."""
        return lam_path(self.config["lams"], self.config.get("lam_bounds"))

    def lam_params(self) -> dict[str, str]:
        """The λ options of ``kbench run`` and ``kbench prepare``: ``--lams``, the
        ``--lam-bounds`` option as a list of arguments (none for a fixed path) and
        ``--selection``."""
        path, bounds = self.lams
        return {"lams": ",".join(map(repr, path)), "lam_bounds": [] if bounds is None else
                ["--lam-bounds", ",".join(map(repr, bounds))],
                "selection": self.config.get("selection", DEFAULT_SELECTION)}

    @cached_property
    def sweep(self) -> str:
        """The folder of this sweep's cells below ``out/cells`` (kbench.sweep.layout.sweep_id)."""
        path, bounds = self.lams
        return layout.sweep_id(self.config["seed"], path, bounds,
                               self.config.get("selection", DEFAULT_SELECTION))

    def cell_files(self, dataset: str, kernel: str, samplers: tuple[str, ...]) -> list[str]:
        """A run job's cell files."""
        return self._cells(dataset, kernel, [Spec.parse(s, "sampler").slug for s in samplers])

    def _cells(self, dataset: str, kernel: str, sampler_slugs: list[str]) -> list[str]:
        """The cell files of (dataset, kernel) for these samplers (layout.CELL; a slug may be a
        ``{sampler}`` wildcard), each spec's slug computed once: a sweep has many thousands."""
        # as Path joins: "x/", "", "/"
        root, fixed = str(self.out / "_")[:-1], layout.slugs(dataset=dataset, kernel=kernel)
        tasks = [Spec.parse(t, "task").slug for t in self.tasks_of(dataset)]
        return [root + layout.CELL.format(**fixed, sweep=self.sweep, sampler=sampler, task=task,
                                          rank=rank, rep=rep)
                for sampler in sampler_slugs for rep in self.repetitions for task in tasks
                for rank in self.config["ranks"]]

    @cached_property
    def all_cells(self) -> list[str]:  # computed once: the Snakefile asks for it twice
        return [f for job in self.jobs() for f in self.cell_files(*job)]

    @cached_property
    def job_targets(self) -> list[str]:
        """The cells the workflow asks for (:meth:`targets`) of every run job."""
        return [f for job in self.jobs() for f in self.targets(*job)]

    def targets(self, dataset: str, kernel: str, samplers: tuple[str, ...]) -> list[str]:
        """The cells of a run job the workflow asks for: its first and, once that exists,
        every missing one. Snakemake reruns a job for a missing output only when it is asked
        for, and looks up the rule of each file asked for (a sweep's thousands of cells would
        take seconds); a job whose first cell is missing runs anyway."""
        first, *rest = self.cell_files(dataset, kernel, samplers)
        return ([first, *(cell for cell in rest if not Path(cell).exists())]
                if Path(first).exists() else [first])

    def split_file(self, dataset: str, repetition: int) -> str:
        return str(layout.split_path(self.data, dataset, repetition, self.config["seed"]))

    def split_files(self, dataset: str) -> list[str]:
        """The splits of every repetition of ``dataset``: a run job's input."""
        return [self.split_file(dataset, rep) for rep in self.repetitions]

    @cached_property
    def exact_max_n(self) -> int | None:
        """The largest training set the sweep's exact baselines are computed for (None: none
        needed), as in ``kbench run``."""
        tasks = [create(t, "task") for t in self.config["tasks"]]
        ridge = any(plugin_class(s, "sampler").needs_lam for s in self.config["samplers"])
        return exact_limit(tasks, ridge)

    def exact_files(self, dataset: str, kernel: str) -> list[str]:
        """The exact baselines the ``exact`` rule makes, one per repetition ([] if none is
        needed)."""
        if self.exact_max_n is None:
            return []
        return [str(layout.exact_path(self.data, dataset, kernel, rep, self.config["seed"]))
                for rep in self.repetitions]
