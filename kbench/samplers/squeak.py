"""SQUEAK: sequential RLS sampling with a streaming dictionary (Calandriello, Lazaric &
Valko 2016, Alg. 1), and its distributed merge-tree variant (DISQUEAK, Alg. 2).

The dictionary holds atoms j with copies Q_j and probabilities p̃_j that never increase.
A block of new points enters with p̃ = 1, Q = q̄ and is merged with the dictionary; every
atom's ridge leverage score at γ = nλ is then estimated on the weighted dictionary and
the atoms are resampled (Calandriello et al. 2016, Alg. 1 and 2). Kernel entries are only ever
evaluated among dictionary ∪ current block: the dictionary keeps its own kernel matrix.

DISQUEAK's merge tree (``shards`` > 1) is a fixed binary tree over the shards; every node
draws from its own generator, derived from the fit's seed and the node, so each node can be
computed anywhere (its nodes are the sampler's parts, :meth:`kbench.plugin.Sampler.parts`, which the
workflow runs as separate jobs) and gives the same dictionary as the in-process fit.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from kbench._parallel import lapack_section
from kbench.hookspecs import hookimpl
from kbench.lowrank.linalg import ridge_scores_cholesky, sample_without_replacement
from kbench.lowrank.maps import nystrom
from kbench.parameters import Param
from kbench.samplers.base import Sampler

#: a node of the merge tree: the shards [first, stop) its dictionary summarises
Node = tuple[int, int]
#: the merge tree's largest leaf count: 2·shards − 1 workflow jobs, each loading the data
MAX_SHARDS = 1024
#: the largest copy count q̄ per point (more changes nothing but the integers' width)
MAX_QBAR = 10**6


@dataclass
class Dictionary:
    """A SQUEAK dictionary: atoms (row indices into X) with copies Q_j ≥ 1, probabilities p̃_j
    and their kernel matrix; ``history`` has one (points merged, unique atoms kept, dictionary
    size) triple per DICT-UPDATE that made it (a tree's in post-order), ``seconds`` and
    ``kernel_evals`` their total cost, ``span_s`` the longest chain of updates that must run
    one after the other (the merge tree's critical path)."""

    atoms: np.ndarray
    copies: np.ndarray
    prob: np.ndarray
    K: np.ndarray
    history: list = field(default_factory=list)
    seconds: float = 0.0
    span_s: float = 0.0
    kernel_evals: int = 0

    @classmethod
    def empty(cls) -> Dictionary:
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.ones(0),
                   np.zeros((0, 0)))

    @classmethod
    def fresh(cls, X, kernel, rows, qbar):
        rows = np.asarray(rows, dtype=np.int64)
        return cls(rows, np.full(rows.size, qbar, dtype=np.int64), np.ones(rows.size),
                   kernel(X[rows]))

    @property
    def size(self) -> int:
        return int(self.copies.sum())

    def arrays(self) -> dict[str, np.ndarray]:
        """The dictionary as named arrays (a part's file), read back by :meth:`from_arrays`."""
        return {"atoms": self.atoms, "copies": self.copies, "prob": self.prob, "K": self.K,
                "history": np.array(self.history, dtype=np.int64).reshape(-1, 3),
                "cost": np.array([self.seconds, self.span_s, self.kernel_evals], dtype=float)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Dictionary:
        seconds, span, evals = arrays["cost"]
        return cls(arrays["atoms"], arrays["copies"], arrays["prob"], arrays["K"],
                   [tuple(step) for step in arrays["history"].tolist()], float(seconds),
                   float(span), int(evals))


def _union(X, kernel, a: Dictionary, b: Dictionary) -> Dictionary:
    """Union of two dictionaries; only the cross block K(a, b) is evaluated."""
    if a.atoms.size == 0 or b.atoms.size == 0:
        return b if a.atoms.size == 0 else a
    cross = kernel(X[a.atoms], X[b.atoms])
    K = np.block([[a.K, cross], [cross.T, b.K]])
    return Dictionary(np.concatenate([a.atoms, b.atoms]), np.concatenate([a.copies, b.copies]),
                      np.concatenate([a.prob, b.prob]), K)


def children(node: Node) -> tuple[Node, Node] | None:
    """The two nodes a merge node joins (None for a leaf): the left one covers the largest
    power of two of shards below the node's count, as in pairwise merging level by level
    with an odd node carried up."""
    first, stop = node
    if stop - first == 1:
        return None
    middle = first + 2 ** ((stop - first - 1).bit_length() - 1)
    return (first, middle), (middle, stop)


def node_name(node: Node) -> str:
    return f"{node[0]}-{node[1]}"


def tree_nodes(shards: int) -> list[Node]:
    """Every node of the merge tree over ``shards`` leaves, children before parents."""
    def walk(node):
        pair = children(node)
        return ([*walk(pair[0]), *walk(pair[1])] if pair else []) + [node]
    return walk((0, shards))


class SqueakSampler(Sampler):
    """SQUEAK streaming ridge-leverage-score dictionary (Calandriello et al. 2016).

    Parameters: ``qbar`` copies per new point (q̄ ≤ 2 collapses the dictionary), ``eps``
    (ε of the (1−ε) shrinkage), ``block_size`` points merged per step (default: half the
    dictionary's unique atoms, at least 64; any b ≥ 1 is a valid DICT-MERGE), ``shards`` > 1 for
    the distributed variant (leaves on contiguous shards, pairwise merges: :func:`tree_nodes`),
    ``halving_floor`` for the paper's listing, which floors p̃ at half its old value, and
    ``subsample``: how p landmarks are drawn from a dictionary larger than p, ``"copies"``
    (the default: ∝ Q_j, uniform over the dictionary's columns, since the dictionary is
    already an RLS sample) or ``"prob"`` (∝ p̃, a labelled variant: it weights points by
    about τ² and gave 3.7–7.8× the ‖K − L‖₂ of ``rls`` at the same p in kbench's squeak2016
    reproduction, against 0.5–1.2× for copies).

    ``prebuilt`` maps a tree seed (:meth:`parts_seed`) to a merge tree's root dictionary
    computed elsewhere (the workflow's jobs, one per node, handed over by :meth:`use_prebuilt`);
    a fit whose tree seed is there uses it instead of building the tree.
    """

    name = "squeak"
    needs_lam = True
    parameters = {
        "qbar": Param(int, "copies of each new point (q̄ ≤ 2 collapses the dictionary)", low=1,
                      high=MAX_QBAR),
        "eps": Param(float, "ε of the (1 − ε) shrinkage of the estimated scores", low=0, high=1,
                     low_open=True,
                     high_open=True),
        "block_size": Param(int, "points merged per step", low=1,
                            none="half the dictionary's unique atoms, at least 64"),
        "shards": Param(int, "contiguous shards of the distributed variant, merged pairwise (1: "
                             "sequential)",
                        low=1, high=MAX_SHARDS),
        "halving_floor": Param(bool, "floor p̃ at half its old value, as the paper's listing does"),
        "subsample": Param(str, "how p landmarks are drawn from a larger dictionary: ∝ copies, or "
                                "∝ p̃",
                           choices=("copies", "prob")),
    }

    def __init__(self, qbar: int = 10, eps: float = 0.5, block_size: int | None = None,
                 shards: int = 1, halving_floor: bool = False, subsample: str = "copies") -> None:
        self.qbar, self.eps, self.block_size, self.shards = qbar, eps, block_size, shards
        self.halving_floor, self.subsample = halving_floor, subsample
        self.prebuilt: dict[int, Dictionary] = {}

    def parts(self) -> list[str]:
        """The merge tree's nodes, ``first-stop`` (the shards each covers), children first."""
        return [node_name(node) for node in tree_nodes(self.shards)] if self.shards > 1 else []

    def part_inputs(self, part: str) -> list[str]:
        first, _, stop = part.partition("-")
        return [node_name(child) for child in children((int(first), int(stop))) or ()]

    def build_part(self, X, kernel, lam, seed, part, inputs):
        first, _, stop = part.partition("-")
        parts = tuple(Dictionary.from_arrays(arrays) for arrays in inputs) or None
        return self.node(X, kernel, lam, seed, (int(first), int(stop)), parts).arrays()

    def use_prebuilt(self, prebuilt: dict[int, dict[str, np.ndarray]]) -> None:
        self.prebuilt.update({seed: Dictionary.from_arrays(arrays)
                              for seed, arrays in prebuilt.items()})

    def _fit(self, X, kernel, rank, lam, rng):
        n = X.shape[0]
        info = {"warnings": [], "qbar": self.qbar}
        if self.qbar <= 2:
            message = (f"squeak with qbar={self.qbar} ≤ 2 tends to collapse the dictionary; use "
                       "qbar ≥ 10")
            warnings.warn(message, stacklevel=3)
            info["warnings"].append(message)
        gamma = n * lam
        if self.shards == 1:
            final = self._stream(X, kernel, np.arange(n), gamma, rng)
        else:
            seed = self.parts_seed(rng)
            final = self.prebuilt.get(seed)
            info["merge_tree"] = "in-process" if final is None else "jobs"
            if final is None:
                final = self.tree(X, kernel, lam, seed)
            # its cost was paid by other processes: reported with the fit's
            # (kbench.plugin.Sampler.fit)
            else:
                info["prebuilt"] = {"seconds": final.seconds, "kernel_evals": final.kernel_evals}
            info["merge_tree_span_s"] = final.span_s
        if final.atoms.size == 0:
            raise ValueError(
                f"squeak's dictionary is empty: with lam={lam:g} every ridge leverage score is "
                "about 0 on this data; lower lam (or raise qbar)."
            )
        if final.atoms.size > rank:
            weights = final.prob if self.subsample == "prob" else final.copies.astype(float)
            chosen = sample_without_replacement(rng, weights, rank)
        else:
            chosen = np.arange(final.atoms.size)
            if final.atoms.size < rank:
                info["warnings"].append(
                    f"the dictionary holds {final.atoms.size} atoms < rank {rank}: rank_realized "
                    "is smaller; lower lam or raise qbar for a larger dictionary"
                )
        info.update(
            dictionary_size=final.size,
            unique_atoms=int(final.atoms.size),
            dictionary={"atoms": final.atoms, "copies": final.copies, "prob": final.prob},
            history=final.history,
        )
        return nystrom(X, kernel, final.atoms[chosen], info, K_mm=final.K[np.ix_(chosen, chosen)])

    # -- DISQUEAK's merge tree ------------------------------------------------------------
    def parts_seed(self, rng: np.random.Generator) -> int:
        """The seed of a fit's merge tree: the first draw of the fit's generator."""
        return int(rng.integers(2**63))

    def shard_rows(self, n: int, shard: int) -> np.ndarray:
        """The rows of shard ``shard``: ``shards`` contiguous, near-equal parts of 0..n−1."""
        if self.shards > n:
            raise ValueError(f"squeak: shards={self.shards} is more than the {n} training rows; "
                             f"use at most shards={n} (a shard holds at least one row).")
        return np.array_split(np.arange(n), self.shards)[shard]

    def node(self, X, kernel, lam: float, seed: int, node: Node,
             parts: tuple[Dictionary, Dictionary] | None = None) -> Dictionary:
        """The dictionary of one tree node: a leaf streams its shard (Alg. 1); a merge node
        joins its children's dictionaries ``parts`` and shrinks the union (DICT-MERGE, Alg. 2).
        The node's generator depends on the tree ``seed`` and the node only."""
        rng = np.random.default_rng([seed, *node])
        gamma = X.shape[0] * lam
        start, evals = time.perf_counter(), kernel.evals
        if parts is None:
            made = self._stream(X, kernel, self.shard_rows(X.shape[0], node[0]), gamma, rng)
            below = []
        else:
            with lapack_section():
                made = self._shrink(_union(X, kernel, *parts), gamma, rng, [])
            below = parts
        own = time.perf_counter() - start
        made.history = [step for part in below for step in part.history] + made.history
        made.seconds = own + sum(part.seconds for part in below)
        made.span_s = own + max((part.span_s for part in below), default=0.0)
        made.kernel_evals = kernel.evals - evals + sum(part.kernel_evals for part in below)
        return made

    def tree(self, X, kernel, lam: float, seed: int, node: Node | None = None) -> Dictionary:
        """The dictionary of a merge-tree node (default: the root), built in this process."""
        node = (0, self.shards) if node is None else node
        pair = children(node)
        parts = None if pair is None else tuple(self.tree(X, kernel, lam, seed, part)
                                                for part in pair)
        return self.node(X, kernel, lam, seed, node, parts)

    # -- SQUEAK ---------------------------------------------------------------------------
    def _stream(self, X, kernel, rows, gamma, rng) -> Dictionary:
        """One pass over ``rows`` in order, merging a block at a time (Alg. 1); the
        factorisations dominate, so NumPy's BLAS yields the cores to LAPACK's."""
        dictionary, history = Dictionary.empty(), []
        start = 0
        with lapack_section():
            while start < rows.size:
                block = self.block_size or max(64, dictionary.atoms.size // 2)
                fresh = Dictionary.fresh(X, kernel, rows[start : start + block], self.qbar)
                dictionary = self._shrink(_union(X, kernel, dictionary, fresh), gamma, rng, history)
                start += block
        dictionary.history = history
        return dictionary

    def _shrink(self, D: Dictionary, gamma: float, rng, history: list) -> Dictionary:
        """DICT-UPDATE: estimate RLS on the weighted dictionary, lower p̃, resample copies."""
        if D.atoms.size == 0:
            history.append((0, 0, 0))
            return Dictionary.empty()
        w = D.copies / (self.qbar * D.prob)
        root = np.sqrt(w)
        M = np.multiply(D.K, root[:, None])
        M *= root[None, :]
        tau = (1.0 - self.eps) * ridge_scores_cholesky(M, gamma, overwrite=True) / w
        prob = np.minimum(tau, D.prob)
        if self.halving_floor:
            prob = np.maximum(prob, D.prob / 2.0)
        copies = rng.binomial(D.copies, prob / D.prob)
        keep = copies > 0
        history.append((int(D.atoms.size), int(keep.sum()), int(copies.sum())))
        return Dictionary(D.atoms[keep], copies[keep], prob[keep], D.K[np.ix_(keep, keep)], history)


@hookimpl
def kbench_register_samplers():
    return [SqueakSampler]
