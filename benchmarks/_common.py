"""Shared pieces of the benchmarks: environment record, timing, README tables."""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

from threadpoolctl import threadpool_info

HERE = Path(__file__).resolve().parent


def environment() -> dict:
    """Versions, CPU and BLAS threads: every timing is recorded with these."""
    pools = threadpool_info()
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "blas": sorted({f"{p['internal_api']} {p.get('version') or ''}".strip() for p in pools}),
        "blas_threads": max((p["num_threads"] for p in pools), default=None),
        **{pkg: version(pkg) for pkg in ("kbench", "numpy", "scipy", "scikit-learn")},
        "date": time.strftime("%Y-%m-%d"),
    }


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB: VmHWM, the high-water mark of its own address
    space. ``getrusage``'s ru_maxrss will not do in a benchmark's child process: Linux carries
    the parent's resident size across exec into it (the child of a 4 GiB parent reported
    4 GiB while its own peak was 0.9)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    kilobytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1024
                                                                      if sys.platform == "darwin"
                                                                      else 1)
    return kilobytes / 1024


def run_times(fn, repeats: int) -> list[float]:
    """Wall times of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def median_time(fn, repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``fn``."""
    return statistics.median(run_times(fn, repeats))


def min_time(fn, repeats: int) -> float:
    """Fastest wall time of ``repeats`` calls of ``fn`` (the timeit rule)."""
    return min(run_times(fn, repeats))


def write_results(name: str, payload: dict) -> Path:
    path = HERE / "results" / f"{name}.json"
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    tmp.replace(path)
    return path


def update_readme(section: str, markdown: str, readme: Path = HERE / "README.md") -> None:
    """Replace the text between ``<!-- section -->`` and ``<!-- /section -->`` in ``readme``
    (benchmarks/README.md by default)."""
    text = readme.read_text()
    pattern = re.compile(rf"(<!-- {section} -->\n).*?(<!-- /{section} -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"{readme} has no '<!-- {section} -->' markers")
    readme.write_text(pattern.sub(lambda m: m.group(1) + markdown + m.group(2), text))


def env_line(env: dict) -> str:
    return (f"{env['date']}, {env['cpus']} CPUs ({env['machine']}), {', '.join(env['blas'])} with "
            f"{env['blas_threads']} threads, Python {env['python']}, numpy {env['numpy']}, "
            f"scipy {env['scipy']}, scikit-learn {env['scikit-learn']}, kbench {env['kbench']}")
