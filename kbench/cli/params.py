"""The command line's option types and checks: numbers read by their one declaration
(kbench.sweep.config.BOUNDS), the λ path, repetition indices, and the usage errors every
command turns bad input into."""

from __future__ import annotations

import shlex
import warnings
from collections import Counter
from pathlib import Path

import click
import numpy as np
from rich.text import Text

from kbench._files import check_folder, check_name, expand_home
from kbench._validation import Bound
from kbench.errors import ContractViolation, PluginError, one_line
from kbench.kernels import DEFAULT_KERNEL
from kbench.spec import split_specs
from kbench.sweep.config import AUTO, AUTO_LAM_BOUNDS, AUTO_LAMS, BOUNDS, DEFAULT_BLAS_THREADS
from kbench.sweep.layout import CELLS_DIR, enclosing_results
from kbench.tasks.selection import SELECTIONS


def kernel_option(help: str = "Kernel spec (kbench list kernels). A bare name takes the kernel's "
                              "own defaults: 'gaussian' is sigma=1; the default sets sigma from "
                              "the data.",
                  default: str | None = DEFAULT_KERNEL, *names: str):
    """``--kernel`` (or ``names``): one kernel spec, by default the sweep's kernel (None:
    required, or with ``names`` optional; click 8.3+ takes an explicit default=None as given)."""
    return click.option(*(names or ["--kernel"]),
                        **({} if default is None else {"default": default}),
                        show_default=default is not None, required=default is None and not names,
                        help=help,
                        callback=one_kernel, metavar="KERNEL")


def seed_option(help: str = "Base seed of splits and samplers."):
    """``--seed``: the sweep's base seed (kbench.sweep.config.BOUNDS), 0 unless given."""
    return click.option("--seed", default=0, show_default=True, type=bounded("seed"), help=help)


def blas_threads_option(help: str = "BLAS/OpenMP threads (the same count as the runs gives the "
                                    "same numbers)."):
    """``--blas-threads``: BLAS and OpenMP threads per process, as a sweep records them."""
    return click.option("--blas-threads", default=DEFAULT_BLAS_THREADS, show_default=True,
                        type=bounded("blas_threads"), help=help)


#: ``--sweep``: the one sweep of a results folder a command reads
sweep_option = click.option("--sweep", metavar="ID",
                            help="The sweep to read when the folder holds several (the folder "
                                 "name below cells/, e.g. seed0_lams-5d1c2e0a; the error lists "
                                 "them).")


def one_kernel(ctx, param, value: str | None) -> str | None:
    """A kernel option naming several kernels is refused, naming where several go."""
    if value is None:
        return value
    try:
        several = len(split_specs(value, "--kernel", "kernel")) > 1
    except ValueError:
        several = False  # (the spec's own check names what is wrong with it)
    if several:
        raise click.BadParameter(f"{value!r} names several kernels; it takes one: run once per "
                                 "kernel, or list them for a dataset in a workflow config's "
                                 "dataset_kernels.")
    return value


#: the options that take a comma list (besides those whose help says so)
LIST_OPTIONS = {"datasets", "samplers", "tasks", "ranks", "lams", "lam_bounds"}


class OptionsOnce(click.Command):
    """A command whose options taking a value are each given once: click keeps the last of a
    repeated one silently (``--samplers uniform … --samplers rff`` ran rff alone)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        _, extra, order = self.make_parser(ctx).parse_args(args=list(args))
        counts = Counter(param for param in order if isinstance(param, click.Option)
                         and not (param.is_flag or param.multiple or param.count))
        twice = next((param for param, count in counts.items() if count > 1), None)
        if twice is not None:
            raise click.UsageError(f"{twice.opts[0]} is given {counts[twice]} times; give it once"
                                   + (
                " (a list of values is one comma-separated value)." if _takes_list(twice) else
                f" ({twice.opts[0]} takes one value)."), ctx)
        if extra and not any(isinstance(param, click.Argument) for param in self.params):
            raise click.UsageError(self._stray(list(args), extra[0]), ctx)
        return super().parse_args(ctx, args)

    def _stray(self, args: list[str], stray: str) -> str:
        """What a value no option takes likely was: an option written with a dash that is not
        ASCII's, the second item of a list given with a space, or a value with a space."""
        if stray[:1] in UNICODE_DASHES:
            return (f"got {stray!r}, which starts with {stray[0]!r} (U+{ord(stray[0]):04X}), not a "
                    "hyphen: write options with two ASCII hyphens, "
                    f"--{stray.lstrip(UNICODE_DASHES + '-')}.")
        at = next((j for j, arg in enumerate(args) if arg == stray and j >= 2
                   and not args[j - 1].startswith("-")),
                  args.index(stray))
        given = next((i for i in range(at - 1, -1, -1) if args[i].startswith("-")), None)
        option = None if given is None else next(
            (param for param in self.params
             if args[given].partition("=")[0] in getattr(param, "opts", ())), None)
        name, eq, value = args[given].partition("=") if given is not None else ("", "", "")
        if option is None or option.is_flag or at - given < (1 if eq else 2):
            return f"got {stray!r}, which no option takes (the command takes options only)."
        values = [value] * bool(eq) + args[given + 1 : at + 1]
        if _takes_list(option):
            return (f"got {stray!r}, which no option takes; a list is one value, its items "
                    f"separated by commas without spaces: {name} {','.join(values)}")
        if isinstance(option.type,
                      Bounded | Fraction | click.types.FloatParamType | click.types.IntParamType):
            return f"got {stray!r}, which no option takes; {name} takes one value."
        return (f"got {stray!r}, which no option takes; {name} takes one value: quote one with "
                f"spaces, {name} {shlex.quote(' '.join(values))}")


#: dashes a word processor puts where a user typed two hyphens
UNICODE_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"


def _takes_list(param: click.Parameter) -> bool:
    return "comma list" in (getattr(param, "help", None)
                            or "").lower() or param.name in LIST_OPTIONS


class Fraction(click.ParamType):
    """A fraction, written 0.02 or 2%."""

    name = "fraction"

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        text = value.strip()
        try:
            return float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            self.fail(f"{value!r} is not a fraction: write 0.02 or 2%.", param, ctx)


class Commands(click.Group):
    """kbench's commands, each an :class:`OptionsOnce`; a Python warning printed on one
    line, ``kbench: warning: …``, as the commands' own messages (not with a source line)."""

    command_class = OptionsOnce

    def invoke(self, ctx: click.Context):
        warnings.formatwarning = lambda message, *_, **__: f"kbench: warning: {message}\n"
        return super().invoke(ctx)


def usage(call):
    """Run ``call``; a ValueError (bad names, lists, values), a PluginError (a name two
    packages register) or an OSError (a path that cannot be read or written, a full disk)
    becomes a usage error naming it, exit code 2; a MemoryError, a numerical failure
    (FloatingPointError, LinAlgError) or a plugin's broken contract, a one-line error, exit code
    1."""
    try:
        return call()
    except (ValueError, PluginError) as exc:
        raise click.UsageError(str(exc)) from None
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        raise click.UsageError(f"{exc.strerror or exc}{where}") from None
    # arithmetic, a broken plugin
    except (FloatingPointError, np.linalg.LinAlgError, ContractViolation) as exc:
        raise click.ClickException(f"{type(exc).__name__}: {exc}") from None
    except MemoryError as exc:
        raise click.ClickException(f"out of memory{f' ({exc})' if str(exc) else ''}: the data or "
                                   "the computation does not fit; try a subsample of the data (n=… "
                                   "in its spec).") from None


def plain(value) -> Text:
    """A value as a table prints it: on one line, control characters escaped (a terminal
    escape in a data file's category stays text), brackets not read as rich markup."""
    return Text(one_line(str(value), limit=10**6))


def page_folder(results, out=None) -> str:
    """Where a page of ``results`` goes: ``out``, by default the results folder, or an
    aggregated file's folder; never inside a results folder's cells/ (a cell file, a sweep),
    and never another results folder, whose page describes its own cells."""
    folder = Path(results) if Path(results).is_dir() else Path(results).parent
    if out is None and (outer := enclosing_results(folder)) is not None:
        raise click.UsageError(f"{results} lies in {outer / CELLS_DIR}, where no page goes: pass "
                               f"--out, or give the results folder {outer}.")
    if out is not None and enclosing_results(Path(out) / CELLS_DIR) is not None and (
            Path(out).resolve() != folder.resolve()):
        raise click.UsageError(f"--out {out} is another results folder (it has {CELLS_DIR}/), "
                               "whose page describes its own cells: write this page to a folder of "
                               f"its own, or give {out} as the results to page.")
    return str(out if out is not None else folder)


class PathName(click.ParamType):
    """A path: refused when it holds a control character (a NUL), which no file name can; with
    ``folder``, also when it is a file or under one (:func:`kbench._files.check_folder`) or in
    a results folder's cells;
    with ``absolute``, made absolute."""

    def __init__(self, folder: bool = False, absolute: bool = False) -> None:
        self.folder, self.absolute = folder, absolute
        self.name = "folder" if folder else "path"

    def convert(self, value, param, ctx):
        try:
            if self.folder:
                folder = check_folder(value)
                if (results := enclosing_results(folder)) is not None:
                    raise ValueError(f"{folder} lies in {results / CELLS_DIR}, the cells of the "
                                     f"results folder {results}, whose page would take in what is "
                                     "written here; name a folder outside it.")
                return str(folder.absolute() if self.absolute else folder)
            return str(expand_home(check_name(value)))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


FOLDER, ABSOLUTE_FOLDER, PATH = PathName(folder=True), PathName(folder=True,
                                                                absolute=True), PathName()


class OneDataset(click.ParamType):
    """One dataset spec: a comma list of several (``sklearn:iris,sklearn:diabetes``) is refused,
    where it would read as one unknown name."""

    name = "dataset"

    def convert(self, value, param, ctx):
        try:
            specs = split_specs(value, "DATASET", "dataset")
        except ValueError as exc:  # (drop=a,b: the list value written with ';')
            self.fail(str(exc), param, ctx)
        if len(specs) > 1:
            self.fail(f"takes one dataset spec, got {len(specs)} ({', '.join(specs)}); give one at "
                      "a time.", param, ctx)
        return value


ONE_DATASET = OneDataset()


class Bounded(click.ParamType):
    """A number, or with ``many`` a comma list of numbers, read and checked by its declared
    :class:`kbench.sweep.config.BOUNDS` entry: the one declaration the Python API and the
    workflow's config check read too."""

    def __init__(self, bound: Bound, many: bool = False) -> None:
        self.bound, self.many = bound, many
        self.name = ("list of " if many else "") + ("integer" if bound.integer else "number")

    def convert(self, value, param, ctx):
        if not isinstance(value, str):  # a default
            return value
        option = param.opts[0] if param is not None else self.bound.name
        try:
            return (self.bound.parse_list if self.many else self.bound.parse)(value, option)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def bounded(name: str, many: bool = False) -> Bounded:
    return Bounded(BOUNDS[name], many)


def only(repetitions: int, only_repetition: int | None) -> list[int]:
    """The repetition indices to run: all of them, or ``--only-repetition``, which must be one."""
    if only_repetition is None:
        return list(range(repetitions))
    if only_repetition >= repetitions:
        raise click.BadParameter(f"repetition index {only_repetition} is not below --repetitions "
                                 f"{repetitions} (indices 0..{repetitions - 1}).",
                                 param_hint="'--only-repetition'")
    return [only_repetition]


class LamPath(Bounded):
    """The λ path: a comma list of λ (:data:`kbench.sweep.config.BOUNDS`), or ``auto``."""

    def __init__(self) -> None:
        super().__init__(BOUNDS["lams"], many=True)
        self.name = f"list of numbers or {AUTO}"

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value.strip() == AUTO:
            return AUTO
        if isinstance(value, str) and AUTO in (item.strip() for item in value.split(",")):
            self.fail(f"{AUTO} stands alone (a path of its own, extended as needed), got "
                      f"{value!r}; give {AUTO} or a list of λ.", param, ctx)
        return super().convert(value, param, ctx)


class PartLams(Bounded):
    """``kbench part --lams``: the sweep's λ path as numbers (a part job's fits use its
    smallest)."""

    def __init__(self) -> None:
        super().__init__(BOUNDS["lams"], many=True)

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value.strip() == AUTO:
            self.fail("kbench part takes the sweep's λ path as numbers; a sweep run with --lams "
                      f"{AUTO} starts from {','.join(f'{v:g}' for v in AUTO_LAMS)}: pass that, as "
                      "the workflow does.", param, ctx)
        return super().convert(value, param, ctx)


def lam_path_options(required: bool):
    """``--lams`` (or ``auto``), ``--lam-bounds`` and ``--selection``: how a command's cells
    choose λ, declared once for ``kbench run`` and ``kbench prepare``."""
    path = ", ".join(f"{v:g}" for v in AUTO_LAMS)
    options = [
        click.option("--lams", required=required, type=LamPath(),
                     help="Comma list of λ > 0 (per-sample ridge), each once, e.g. 1e-6,1e-4; or "
                          f"{AUTO}: {path}, extended by decades until the λ chosen on validation "
                          "data is interior."),
        click.option("--lam-bounds", type=bounded("lams", many=True),
                     help=f"LOW,HIGH: extend the λ path within these (default with --lams {AUTO}: "
                          f"{AUTO_LAM_BOUNDS[0]:g},{AUTO_LAM_BOUNDS[1]:g}; a listed path is fixed "
                          "without them)."),
        click.option("--selection", type=click.Choice(SELECTIONS), default=SELECTIONS[0],
                     show_default=True,
                     help="Choose λ on the validation rows, or on the test rows (oracle: a paper's "
                          "reproduction)."),
    ]

    def apply(command):
        for option in reversed(options):
            command = option(command)
        return command

    return apply
