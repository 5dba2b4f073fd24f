"""The sampler contract: ``fit(X, kernel, rank, lam=..., seed=...) -> LowRank``."""

from __future__ import annotations

import copy
import itertools
import numbers
from typing import ClassVar

import numpy as np

from kbench._validation import check_features, check_lam, check_rank
from kbench.errors import ContractViolation, Refused
from kbench.kernels.base import Kernel
from kbench.lowrank.maps import LowRank
from kbench.parameters import Declared

#: sampler families (``Sampler.family``): what a task's ``families`` and the page group by
FAMILIES = ("nystrom", "random-features")
#: numbers the fits of this process in the order they start (LowRank.fit_number)
_FITS = itertools.count()


class Sampler(Declared):
    """Base class of samplers. Subclasses set ``name`` and implement ``_fit``.

    ``family`` is ``"nystrom"`` for column samplers (landmarks are rows of X; rank is
    clamped to n) or ``"random-features"``. ``needs_lam`` samplers use the ridge λ
    (docs/conventions.md: the runner passes the smallest λ of the path).

    A sampler whose fits can be built in parts, as separate jobs (DISQUEAK's merge tree),
    names them (:meth:`parts`, :meth:`part_inputs`) and builds one (:meth:`build_part`); the
    workflow runs a job per part and hands the last to the fits (:meth:`use_prebuilt`). A fit
    that uses such work reports its cost as ``info["prebuilt"] = {"seconds": ...,
    "kernel_evals": ...}``: it is counted in the fit's ``kernel_evals`` and ``time_sample_s``.
    """

    kind = "sampler"
    family: ClassVar[str] = "nystrom"
    needs_lam: ClassVar[bool] = False
    #: whether :meth:`against_exact` compares a fit with the exact kernel: a sweep then gives
    #: it the exact baseline (training sets up to the dense limit) and records its columns
    compares_with_exact: ClassVar[bool] = False

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    def fit(self, X, kernel: Kernel, rank: int, lam: float | None = None, seed=0) -> LowRank:
        """Sample a rank-``rank`` approximation of ``kernel`` on the rows of ``X``.

        Parameters
        ----------
        X : (n, d) array of training rows (left unchanged).
        kernel : a kbench kernel; one with a data-dependent parameter (``sigma="median"``) is
            fitted on ``X`` as a copy, so the caller's kernel is never modified and each fit
            resolves its own value (the returned map holds the fitted copy).
        rank : the requested feature dimension p.
        lam : the per-sample ridge λ of ridge-dependent samplers (``needs_lam``).
        seed : an int or a numpy Generator.

        Returns
        -------
        LowRank, whose ``info`` records the sampler, its parameters, the requested rank,
        the kernel evaluations and warnings.
        """
        X, rank, lam, rng = self._fit_arguments(X, kernel, rank, lam, seed)
        # fit a copy: the caller's kernel stays as given (sigma="median" unresolved)
        if not kernel.fitted:
            kernel = copy.copy(kernel).fit(X)
        if (why := self.refuses(kernel)) is not None:
            raise Refused(why)
        warnings = []
        n = X.shape[0]
        if self.family == "nystrom" and rank > n:
            warnings.append(f"rank {rank} exceeds n = {n}: clamped to {n} landmarks")
            rank_used = n
        else:
            rank_used = rank
        evals_before, given, number = kernel.evals, kernel.spec(), next(_FITS)
        approx = self._fit(X, kernel, rank_used, lam, rng)
        self._check_fit(approx, kernel, given, number)
        # (a map may know its own)
        approx.kernel_spec, approx.fit_number = approx.kernel_spec or given, number
        # this fit's record: a map sharing an earlier one's info leaves that as it was
        approx.info = dict(approx.info)
        approx.info["warnings"] = warnings + approx.info.get("warnings", [])
        approx.info.update(
            sampler=self.name,
            params=self.get_params(),
            rank_requested=rank,
            kernel_evals=kernel.evals - evals_before
            + approx.info.get("prebuilt", {}).get("kernel_evals", 0),
        )
        return approx

    def _fit_arguments(self, X, kernel, rank, lam, seed) -> tuple:
        """:meth:`fit`'s arguments checked (and the sampler's family): ``X`` as features, the
        rank, λ (None for a sampler that takes none and was given none), and the seed as a
        Generator; ``kernel`` must be a kbench kernel."""
        if self.family not in FAMILIES:
            raise ContractViolation(f"sampler {self.name!r}: family {self.family!r} is not one of "
                                    f"{', '.join(FAMILIES)}, which tasks score and pages group by.")
        X = check_features(X, "X")
        rank = check_rank(rank)
        owner = f"sampler {self.name!r}"
        lam = check_lam(lam, owner) if (self.needs_lam or lam is not None) else None
        if not (callable(kernel) and hasattr(kernel, "diag")):
            raise ValueError(
                f"kernel must be a kbench kernel (kbench.make_kernel('gaussian', sigma=1.0)), "
                f"got {kernel!r}."
            )
        try:
            rng = np.random.default_rng(seed)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"seed must be an int or a numpy Generator, got {seed!r} "
                             f"({exc}).") from None
        return X, rank, lam, rng

    def _check_fit(self, approx, kernel: Kernel, given: str, number: int) -> None:
        """A ContractViolation when the fit (the process's ``number``-th) returned no LowRank, or
        a map an earlier fit returned, or a map of another family than the sampler's, or
        changed its kernel (``given``: its spec before)."""
        owner = f"sampler {self.name!r}"
        if not isinstance(approx, LowRank):
            raise ContractViolation(f"{owner}: _fit returned "
                                    f"{type(approx).__module__}.{type(approx).__qualname__}, not a "
                                    "kbench.LowRank.")
        if kernel.spec() != given:  # the cell would be recorded under a kernel the map is not of
            raise ContractViolation(f"{owner} changed its kernel's parameters during the fit "
                                    f"({kernel.spec()} after {given}): a sampler uses the kernel "
                                    "it is given; copy it to use another.")
        # the agreement check and the page read the family
        if approx.nystrom_type != (self.family == "nystrom"):
            raise ContractViolation(f"{owner} is of the {self.family!r} family but returned a "
                                    f"{'Nyström-type' if approx.nystrom_type else 'random-feature'}"
                                    " map (LowRank.nystrom_type): declare the family its maps "
                                    "are of.")
        # a map kept from an earlier fit
        if approx.fit_number is not None and approx.fit_number < number:
            raise ContractViolation(f"{owner}: _fit returned a map an earlier fit returned (for "
                                    f"{approx.kernel_spec}); each fit builds its own map from the "
                                    "data, kernel and rank it is given.")

    def refuses(self, kernel: Kernel) -> str | None:
        """Why this sampler cannot approximate ``kernel`` by design (judged on the kernel's
        type and parameters, before any data), else None. ``fit`` raises it as
        :class:`kbench.Refused`, and a sweep does not plan such fits; the leaderboard lists
        them once with this reason. None (any kernel) by default."""
        return None

    def against_exact(self, approx: LowRank, exact, lam: float | None) -> dict[str, float]:
        """Columns of the fit's rows comparing ``approx`` with the exact kernel on the same
        training rows (``exact``: the exact baseline, e.g. its ``leverage_scores(lam)``);
        called when :attr:`compares_with_exact` is set. None by default."""
        return {}

    # -- a fit built in parts, as separate jobs ---------------------------------------------
    def parts(self) -> list[str]:
        """The parts of this sampler's fits that can be built as separate jobs, each after the
        parts it is made from (:meth:`part_inputs`), the last the whole; [] (the default): a fit
        is built in one piece. Names are letters, digits and ``.``, ``_``, ``-``."""
        return []

    def part_inputs(self, part: str) -> list[str]:
        """The parts ``part`` is made from ([]: from the training rows alone)."""
        return []

    def parts_seed(self, rng: np.random.Generator) -> int:
        """The seed of the parts of the fit whose generator is ``rng``, drawn as ``_fit`` draws
        it: parts built apart are those the fit would build itself."""
        raise NotImplementedError(f"sampler {self.name!r} names parts but does not say how a fit "
                                  "seeds them")

    def build_part(self, X: np.ndarray, kernel: Kernel, lam: float | None, seed: int, part: str,
                   inputs: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        """Part ``part`` of the fits seeded ``seed``, from its inputs (in :meth:`part_inputs`'
        order), as named arrays: what its file holds and the parts made from it receive."""
        raise NotImplementedError(f"sampler {self.name!r} names parts but does not build them")

    def use_prebuilt(self, prebuilt: dict[int, dict[str, np.ndarray]]) -> None:
        """Hook: the last part of fits built apart (:meth:`build_part`'s arrays, by
        :meth:`parts_seed`), handed over by the sweep before ``fit``; a fit whose seed is
        there starts from it. Ignored by default."""

    def _fit(self, X: np.ndarray, kernel: Kernel, rank: int, lam: float | None,
             rng: np.random.Generator) -> LowRank:
        raise NotImplementedError


def landmarks_from_dictionary(size: int, rank: int, rng: np.random.Generator,
                              info: dict) -> np.ndarray:
    """Positions (sorted) of the rank's landmarks in a leverage-score dictionary of ``size``
    atoms: ``rank`` of them uniformly without replacement when it is larger (the dictionary
    is already a leverage-score sample), else all, with a warning in ``info`` when fewer."""
    rank = check_rank(rank)
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise ValueError("size must be the dictionary's number of atoms, an integer >= 1, got "
                         f"{size!r}.")
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy Generator (the rng _fit is given; "
                        f"np.random.default_rng(seed) from a seed), got {type(rng).__name__}.")
    if size > rank:
        return np.sort(rng.choice(size, size=rank, replace=False))
    if size < rank:
        info.setdefault("warnings", []).append(f"the dictionary holds {size} atoms < rank {rank}: "
                                               "rank_realized is smaller; lower lam or raise qbar "
                                               "for a larger dictionary")
    return np.arange(size)
