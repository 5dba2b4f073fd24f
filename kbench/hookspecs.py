"""pluggy hook specifications of kbench (project name ``kbench``).

A plugin is a module named by an entry point in the ``kbench`` group. It implements
any of the hooks below with ``@kbench.plugin.hookimpl``; each hook returns a list of classes,
each class carrying its registry name in a ``name`` class attribute::

    # my_package/kbench_plugin.py
    import kbench

    class MySampler(kbench.plugin.Sampler):
        name = "my-sampler"
        ...

    @kbench.plugin.hookimpl
    def kbench_register_samplers():
        return [MySampler]

    # pyproject.toml
    [project.entry-points.kbench]
    my-package = "my_package.kbench_plugin"
"""

from __future__ import annotations

import pluggy

PROJECT = "kbench"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def kbench_register_samplers() -> list[type]:
    """Return sampler classes (subclasses of :class:`kbench.plugin.Sampler`)."""


@hookspec
def kbench_register_kernels() -> list[type]:
    """Return kernel classes (subclasses of :class:`kbench.plugin.Kernel`)."""


@hookspec
def kbench_register_tasks() -> list[type]:
    """Return task classes."""


@hookspec
def kbench_register_datasets() -> list[type]:
    """Return dataset provider classes."""


#: plugin kind -> the hook that registers it
HOOKS = {
    "sampler": "kbench_register_samplers",
    "kernel": "kbench_register_kernels",
    "task": "kbench_register_tasks",
    "dataset": "kbench_register_datasets",
}
