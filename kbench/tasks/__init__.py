"""Built-in task plugins: krr, kpca, classification, approximation."""

from kbench.tasks.base import Task

__all__ = ["Task"]
