"""Plugin registry: entry points from *.dist-info folders on sys.path (nothing installed)."""

from __future__ import annotations

import importlib
import json

import pytest
from click.testing import CliRunner

import kbench
from kbench import registry
from kbench.cli import main
from tests.conftest import ALL_SAMPLERS, TOY_SAMPLER, add_plugin


@pytest.fixture
def plugin_env(tmp_path, monkeypatch):
    """Four plugins: one working, one broken on import, one misspelled hook, two duplicates."""
    add_plugin(tmp_path, "good-plugin", TOY_SAMPLER.format(
        cls="Toy", doc="A toy sampler.", name="toy", hook="kbench_register_samplers"))
    add_plugin(tmp_path, "broken-plugin", "raise ImportError('no module named missing_dep')\n")
    add_plugin(tmp_path, "typo-plugin", TOY_SAMPLER.format(
        cls="Typo", doc="Typo.", name="typo", hook="kbench_register_sampler"))
    add_plugin(tmp_path, "dup-one", TOY_SAMPLER.format(
        cls="DupA", doc="First.", name="dup", hook="kbench_register_samplers"))
    add_plugin(tmp_path, "dup-two", TOY_SAMPLER.format(
        cls="DupB", doc="Second.", name="dup", hook="kbench_register_samplers"))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    reg = registry.Registry()
    monkeypatch.setattr(registry, "_registry", reg)
    return reg


def test_builtin_samplers_are_registered_through_entry_points():
    samplers = {k: v for k, v in kbench.list_plugins("sampler").items() if v.source == "kbench"}
    assert sorted(samplers) == sorted(ALL_SAMPLERS)
    for info in samplers.values():
        assert info.source == "kbench" and info.description
        assert info.entry_point.split(" = ")[1].startswith("kbench.samplers.")
    assert set(kbench.list_plugins("kernels")) == {
        "gaussian", "laplacian", "matern", "polynomial", "linear", "periodic-sobolev",
        "periodic-exp"}
    assert not registry.get_registry().broken


def test_a_working_plugin_loads_with_its_package_as_source(plugin_env):
    info = plugin_env.get("sampler", "toy")
    assert (info.source, info.version, info.description) == ("good-plugin", "1.0", "A toy sampler.")
    sampler = kbench.make_sampler("toy")
    assert sampler.name == "toy"
    assert "uniform" in kbench.list_plugins("sampler")  # the built-ins still load


def test_a_plugin_that_raises_on_import_is_listed_and_the_others_load(plugin_env):
    broken = {b.source: b.error for b in plugin_env.broken}
    assert "ImportError: no module named missing_dep" in broken["broken-plugin"]
    assert "toy" in plugin_env.plugins["sampler"]


def test_a_misspelled_hook_is_caught_by_check_pending(plugin_env):
    broken = {b.source: b.error for b in plugin_env.broken}
    assert "unknown hook 'kbench_register_sampler'" in broken["typo-plugin"]
    assert "did you mean 'kbench_register_samplers'" in broken["typo-plugin"]
    assert "typo" not in plugin_env.plugins["sampler"]


def test_a_duplicate_name_is_an_error_naming_both_packages(plugin_env):
    with pytest.raises(kbench.PluginError, match="'dup-one'.*'dup-two'.*uninstall one"):
        kbench.make_sampler("dup")
    assert any("dup-two" in b.error and "dup-one" in b.error for b in plugin_env.broken)


def test_unknown_names_suggest_the_closest():
    with pytest.raises(kbench.UnknownPluginError, match="unknown sampler 'unifrom' .did you mean "
                                                        ".uniform.*Known samplers: .*rp-cholesky"):
        kbench.make_sampler("unifrom")
    with pytest.raises(ValueError, match="did you mean 'rp-cholesky'"):
        kbench.make_sampler("rp_cholesky")
    with pytest.raises(ValueError, match="did you mean 'gaussian'"):
        kbench.make_kernel("gausian")
    with pytest.raises(ValueError, match="unknown plugin kind 'sampelr' .did you mean 'sampler'"):
        kbench.list_plugins("sampelr")


def test_cli_list_shows_all_samplers_with_their_source():
    result = CliRunner().invoke(main, ["list", "samplers"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for name in ALL_SAMPLERS:
        assert name in result.output
    assert result.output.count("kbench 0.1.0") >= 8
    as_json = json.loads(CliRunner().invoke(main, ["list", "samplers", "--json"]).output)
    builtin = {row["name"] for row in as_json["samplers"] if row["source"] == "kbench"}
    assert builtin == set(ALL_SAMPLERS)
    assert as_json["broken"] == []


def test_cli_list_shows_broken_plugins(plugin_env):
    result = CliRunner().invoke(main, ["list", "samplers"], terminal_width=200)
    assert result.exit_code == 0  # a listing, whatever it lists (check-plugin and run refuse them)
    assert "broken plugins" in result.output and "broken-plugin" in result.output
    # two packages claiming one name
    assert "is registered by both" in " ".join(result.output.split())
    payload = json.loads(CliRunner().invoke(main, ["list", "--json"]).output)
    assert {b["source"] for b in payload["broken"]} >= {"broken-plugin", "typo-plugin", "dup-two"}
    assert "toy" in {row["name"] for row in payload["samplers"]}


def test_cli_rejects_an_unknown_kind():
    result = CliRunner().invoke(main, ["list", "sampler"])
    assert result.exit_code == 2 and "Invalid value" in result.output


def test_cli_info_reports_blas_threads():
    result = CliRunner().invoke(main, ["info"])
    assert result.exit_code == 0
    assert "threads" in result.output and " samplers" in result.output


def test_import_errors_name_their_line_and_a_plugin_that_registers_nothing_is_reported(tmp_path,
                                                                                       monkeypatch):
    module = add_plugin(tmp_path, "raising-plugin", "import os\n\nx = 1 / 0\n")
    add_plugin(tmp_path, "empty-plugin", "VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    broken = {b.source: b.error for b in registry.Registry().broken}
    assert (f"ZeroDivisionError: division by zero (at {tmp_path / module}.py:3)"
            in broken["raising-plugin"])
    assert "implements no kbench hook, so it registers nothing" in broken["empty-plugin"]


def test_an_unknown_name_hints_at_reinstalling_a_stale_editable_install(tmp_path, monkeypatch):
    source = tmp_path / "src"
    source.mkdir()
    (source / "pyproject.toml").write_text(
        '[project]\nname = "stale-plugin"\n[project.entry-points.kbench]\nstale = "stale_module"\n')
    # installed before the entry point was added
    info = tmp_path / "site" / "stale_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stale-plugin\nVersion: 1.0\n")
    (info / "direct_url.json").write_text(json.dumps({"url": source.as_uri(),
                                                      "dir_info": {"editable": True}}))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    with pytest.raises(kbench.UnknownPluginError, match=r"'stale-plugin' \(pip install -e "
                                                        r".*src\).*reinstall"):
        registry.Registry().get("sampler", "stale-sampler")


def test_check_sampler_stops_at_once_on_an_unknown_name():
    from kbench.testing import check_sampler

    with pytest.raises(kbench.UnknownPluginError, match="did you mean 'uniform'"):
        check_sampler("unifrom")
