"""Conformance checks a plugin runs in its own test suite (docs/plugins.md).

    from kbench.testing import check_dataset_provider, check_sampler, check_task

    def test_my_plugins_honour_the_contract():
        check_sampler("my-sampler:offset=1")     # a spec, a class or an instance
        check_task("my-task")
        check_dataset_provider("my-provider")

Each builds small seeded problems, runs every contract check of its plugin kind under a
time limit, returns the names of the checks that passed and raises one AssertionError
listing every check that failed, with its reason. ``kbench check-plugin SPEC`` runs them
from the shell (:func:`find_kind` says which kind a registered name is).
"""

from __future__ import annotations

from collections.abc import Callable

from kbench.errors import UnknownPluginError
from kbench.registry import get_registry, list_plugins
from kbench.spec import Spec
from kbench.testing._kit import NotChecked
from kbench.testing.datasets import PROVIDER_CHECKS, check_dataset_provider
from kbench.testing.samplers import CHECKS, check_sampler
from kbench.testing.tasks import TASK_CHECKS, check_task

#: the conformance kit of each plugin kind
KITS: dict[str, Callable[..., list[str]]] = {
    "sampler": check_sampler, "task": check_task, "dataset": check_dataset_provider}


def find_kind(spec: str | Spec, kind: str | None = None) -> str:
    """The kind ('sampler', 'task' or 'dataset') whose registry holds the plugin a spec names
    (``squeak:qbar=20``, ``synthetic:moons``); a name registered as several kinds needs
    ``kind``. An unknown name is an UnknownPluginError with each kind's did-you-mean, a
    name two packages register a PluginError naming both."""
    if kind is not None and kind not in KITS:
        raise ValueError(f"no conformance kit for kind {kind!r}; kinds are: {', '.join(KITS)}.")
    name = str(spec).split(":", 1)[0].strip()
    found, unknown = [], []
    for k in [kind] if kind else KITS:
        try:
            get_registry().get(k, name)
        except UnknownPluginError as exc:
            unknown.append(str(exc))
        else:
            found.append(k)
    if len(found) == 1:
        return found[0]
    if found:
        raise ValueError(f"{name!r} is registered as a {' and as a '.join(found)}: pass its kind "
                         f"(kbench check-plugin --kind {found[0]} {spec}).")
    if kind is None and name in list_plugins("kernel"):
        raise ValueError(f"{name!r} is a kernel: check it through a sampler, check_sampler('rff', "
                         f"kernel={str(spec)!r}) (kbench check-plugin rff --kernel {spec}).")
    raise UnknownPluginError(" ".join(unknown))  # one line: each kind's did-you-mean


__all__ = ["CHECKS", "KITS", "PROVIDER_CHECKS", "TASK_CHECKS", "NotChecked",
           "check_dataset_provider",
           "check_sampler", "check_task", "find_kind"]
