"""The advisor's leave-one-dataset-out validation regenerates from the cells it ships."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_the_validation_table_regenerates_byte_for_byte_from_the_shipped_cells():
    script = ROOT / "benchmarks" / "advise_validation.py"
    done = subprocess.run([sys.executable, str(script), "check"], capture_output=True, text=True,
                          cwd=ROOT,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "regenerates byte for byte" in done.stdout
