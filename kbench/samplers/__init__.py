"""Built-in sampler plugins, one module per family, registered through entry points."""

from kbench.samplers.base import Sampler

__all__ = ["Sampler"]
