"""docs/plugins.md runs: its plugin module is installed as a package, its tests pass, its
scripts run (the convention is stated at the top of the page)."""

from __future__ import annotations

import importlib
import re
import shlex

import pytest
from click.testing import CliRunner

from kbench import registry
from kbench.cli import main
from tests.conftest import ROOT, add_plugin
from tests.test_readme import page_commands

PAGE = ROOT / "docs" / "plugins.md"
PLUGIN, TESTS = "# my_package/kbench_plugin.py", "# tests/test_plugin.py"


def python_blocks(path=PAGE) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def test_the_page_has_a_plugin_of_each_kind_and_its_tests():
    blocks = python_blocks()
    plugin = "".join(b for b in blocks if b.startswith(PLUGIN))
    for hook in ("samplers", "tasks", "kernels", "datasets"):
        assert f"def kbench_register_{hook}():" in plugin
    tests = "".join(b for b in blocks if b.startswith(TESTS))
    for check in ("check_sampler(", "check_task(", "check_dataset_provider("):
        assert check in tests


@pytest.fixture
def doc_plugin(tmp_path, monkeypatch):
    """The page's plugin module, installed as the package 'my-package'."""
    add_plugin(tmp_path, "my-package",
               "\n".join(b for b in python_blocks() if b.startswith(PLUGIN)))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    reg = registry.Registry()
    monkeypatch.setattr(registry, "_registry", reg)
    return reg


def test_the_plugin_of_the_page_loads_and_its_tests_and_scripts_run(doc_plugin):
    assert [b for b in doc_plugin.broken if b.source == "my-package"] == []
    for kind, name in [("sampler", "every-other"), ("task", "diagonal-gap"), ("kernel", "cauchy"),
                       ("dataset", "rings")]:
        assert doc_plugin.get(kind, name).source == "my-package"
    blocks = [b for b in python_blocks() if not b.startswith(PLUGIN)]
    tests: dict = {}
    for block in blocks:
        namespace = tests if block.startswith(TESTS) else {}
        exec(compile(block, str(PAGE), "exec"), namespace)
    called = [name for name, function in tests.items() if name.startswith("test_")
              and callable(function)]
    assert len(called) >= 4 and len(blocks) > len([b for b in blocks if b.startswith(TESTS)])
    for name in called:
        tests[name]()


def test_the_pages_check_plugin_commands_pass_on_its_plugin(doc_plugin):
    """The page's ``kbench check-plugin`` commands, as written, on its plugin (installed as the
    fixture installs it): each passes its kit (exit 0)."""
    commands = [c for c in page_commands()["docs/plugins.md"]
                if c.startswith("kbench check-plugin ")]
    assert len(commands) >= 4
    for command in commands:
        result = CliRunner().invoke(main, shlex.split(command)[1:])
        assert result.exit_code == 0, f"{command}\n{result.output}"
