"""The README's two commands are what CI runs, and the installed console script works."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    block = re.search(r"## Two commands\s+```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert block, "README.md lost its '## Two commands' block"
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    return [command for command in commands if command]


def test_ci_runs_exactly_the_readme_commands():
    """Besides them, .ci/run only brings up (and tears down) services through scripts of .ci/."""
    commands = readme_commands()
    assert len(commands) == 2
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith(("#", "set ", "cd "))]
    services = [line for line in ci if re.fullmatch(r"(trap '\.ci/\w+ down' EXIT|\.ci/\w+ up)", line)]
    assert services == ["trap '.ci/slurm down' EXIT", ".ci/slurm up", ".ci/chromium up"]
    assert [line for line in ci if line not in services] == commands


def test_console_script_lists_the_samplers():
    exe = shutil.which("kbench")
    assert exe, "the kbench console script is not installed: run the README's install command"
    out = subprocess.run([exe, "list", "samplers", "--json"], capture_output=True, text=True, check=True)
    names = {row["name"] for row in json.loads(out.stdout)["samplers"]}
    assert names >= {"uniform", "rls", "rls-fast", "squeak", "pivoted-cholesky", "rp-cholesky", "rff", "orf"}


def test_readme_python_examples_run():
    """Every ```python block of the README runs as written (docs match the code)."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
