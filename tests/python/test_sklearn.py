"""grove.compile on scikit-learn's fitted tree ensembles, read from their arrays through libgrovec's forest building
(rt/grove_compile.h), against scikit-learn's own predictions: rows with missing values, rows of doubles on and
beside every threshold (scikit-learn casts rows to float32 before it compares them with its float64 thresholds),
classifiers' labels and probabilities, pickles. Skipped where scikit-learn is not installed."""
import ctypes
import pickle
import zlib

import numpy as np
import pytest

import grove
from grove import _lib

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is not installed")
from sklearn import ensemble, tree  # noqa: E402


def data(seed, rows=700, features=6, missing=0.05):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, features))
    X[rng.random(X.shape) < missing] = np.nan
    x = np.nan_to_num(X)
    return X, {"binary": (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype(int),
               "three": np.digitize(x[:, 0] - 0.5 * x[:, 3], [-0.5, 0.5]),
               "words": np.array(["ash", "birch", "cedar"])[np.digitize(x[:, 1], [-0.3, 0.4])],
               "real": x[:, 0] * 3 + np.sin(x[:, 1]) + 0.5 * x[:, 4] * x[:, 5],
               "counts": rng.poisson(np.exp(0.5 * x[:, 0]))}


def edge_rows(estimator, X):
    """Rows of doubles whose values sit on thresholds of the estimator's first trees and one double either side,
    and the float32 values either side: where scikit-learn's float32 cast decides."""
    if hasattr(estimator, "_predictors"):  # HistGradientBoosting's: (feature, threshold) from its nodes
        splits = [(n["feature_idx"], n["num_threshold"]) for stage in estimator._predictors[:5] for p in stage
                  for n in p.nodes if not n["is_leaf"]]
    else:
        trees = [e.tree_ for e in np.ravel(getattr(estimator, "estimators_", [estimator]))[:5]]
        subsets = getattr(estimator, "estimators_features_", [None] * len(trees))  # (IsolationForest's)
        splits = [(f if subset is None else subset[f], v) for t, subset in zip(trees, subsets)
                  for f, v in zip(t.feature[t.children_left >= 0], t.threshold[t.children_left >= 0])]
    rows = []
    for f, v in splits[:100]:
        if not np.isfinite(v):  # (a split of the missing values from the rest: threshold inf)
            continue
        v32 = np.float32(v)
        for x in (v, np.nextafter(v, -np.inf), np.nextafter(v, np.inf), float(v32),
                  float(np.nextafter(v32, np.float32(np.inf))), float(np.nextafter(v32, np.float32(-np.inf)))):
            row = np.nan_to_num(X[len(rows) % len(X)]).copy()
            row[f] = x
            rows.append(row)
    return np.array(rows)


def check(model, estimator, X):
    """model predicts as estimator: probabilities and labels of a classifier, values of a regressor, exactly (to
    the float32 grove returns)."""
    if hasattr(estimator, "predict_proba"):
        want = estimator.predict_proba(X)
        got = model.predict_proba(X)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
        clear = np.sort(want, axis=1)
        clear = clear[:, -1] - clear[:, -2] > 1e-6
        assert (model.predict(X) == estimator.predict(X))[clear].all()
    else:
        want = estimator.predict(X)
        got = model.predict(X)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


CASES = [
    (tree.DecisionTreeClassifier, {"random_state": 0}, "words", True),
    (tree.DecisionTreeRegressor, {"random_state": 0, "max_depth": 12}, "real", True),
    (tree.ExtraTreeRegressor, {"random_state": 0}, "real", True),
    (ensemble.RandomForestClassifier, {"n_estimators": 15, "random_state": 0}, "binary", True),
    (ensemble.RandomForestClassifier, {"n_estimators": 10, "random_state": 1}, "three", True),
    (ensemble.RandomForestRegressor, {"n_estimators": 15, "random_state": 0}, "real", True),
    (ensemble.ExtraTreesClassifier, {"n_estimators": 12, "random_state": 0}, "words", True),
    (ensemble.ExtraTreesRegressor, {"n_estimators": 12, "random_state": 0}, "real", True),
    (ensemble.GradientBoostingClassifier, {"n_estimators": 25, "random_state": 0}, "binary", False),
    (ensemble.GradientBoostingClassifier, {"n_estimators": 15, "max_depth": 4, "random_state": 0}, "three", False),
    (ensemble.GradientBoostingRegressor, {"n_estimators": 30, "random_state": 0, "loss": "huber"}, "real", False),
    (ensemble.HistGradientBoostingClassifier, {"max_iter": 30, "random_state": 0}, "binary", True),
    (ensemble.HistGradientBoostingClassifier, {"max_iter": 20, "random_state": 0}, "words", True),
    (ensemble.HistGradientBoostingRegressor, {"max_iter": 40, "random_state": 0}, "real", True),
    (ensemble.HistGradientBoostingRegressor, {"max_iter": 20, "loss": "poisson", "random_state": 0}, "counts", True),
]


@pytest.mark.parametrize("kind, params, target, nan", CASES, ids=lambda c: getattr(c, "__name__", None))
def test_estimator(kind, params, target, nan):
    X, targets = data(zlib.crc32((kind.__name__ + target).encode()) % 1000)
    if not nan:  # (these estimators refuse missing values)
        X = np.nan_to_num(X)
    estimator = kind(**params).fit(X, targets[target])
    model = grove.compile(estimator)
    check(model, estimator, X)
    check(model, estimator, edge_rows(estimator, X))
    check(model, estimator, X.astype(np.float32))
    check(pickle.loads(pickle.dumps(model)), estimator, X[:50])
    if hasattr(estimator, "classes_"):
        assert list(model.classes_) == list(estimator.classes_)


@pytest.mark.parametrize("max_features", [1.0, 0.5])
def test_isolation_forest(max_features):
    """An IsolationForest's model predicts its score_samples (trees on feature subsets too)."""
    X, _ = data(11, rows=900)
    X = np.nan_to_num(X)
    forest = ensemble.IsolationForest(n_estimators=40, max_features=max_features, random_state=0).fit(X)
    model = grove.compile(forest)
    assert model.classes_ is None
    for rows in (X, edge_rows(forest, X), X.astype(np.float32)):
        np.testing.assert_allclose(model.predict(rows), forest.score_samples(rows), rtol=1e-6, atol=0)


@pytest.mark.parametrize("kind, target", [(ensemble.HistGradientBoostingClassifier, "three"),
                                          (ensemble.HistGradientBoostingRegressor, "real")])
def test_hist_gradient_boosting_categories(kind, target):
    """HistGradientBoosting's categorical features (its encoder puts them first and codes their values): categories
    seen and unseen, fractional, negative, NaN, on either side of each split as missing values go."""
    X, targets = data(31, rows=1500)
    rng = np.random.default_rng(32)
    X[:, 1] = rng.integers(0, 9, len(X)) * 3  # categories 0, 3, ..., 24
    X[:, 4] = rng.integers(2, 40, len(X))
    X[rng.random(len(X)) < 0.05, 4] = np.nan
    y = targets[target]  # and a part the categories decide
    y = y + (X[:, 1] % 2 == 0) * 2 if target == "real" else np.where(np.isin(X[:, 1], [3, 12, 21]), 2, y)
    estimator = kind(max_iter=25, categorical_features=[1, 4], random_state=0).fit(X, y)
    model = grove.compile(estimator)
    test = X[:400].copy()
    test[:100, 1] = rng.choice([-3, -0.5, 1, 2.5, 27, 30, 300, np.nan], 100)  # unseen, fractional, negative, NaN
    test[100:200, 4] = rng.choice([0, 1, 40, 41, 2.5, -1, np.nan], 100)
    check(model, estimator, test)
    check(model, estimator, X)


def test_hist_gradient_boosting_pandas_categories():
    """HistGradientBoosting on a DataFrame of pandas categories (strings; integers; and negative integers, which its
    sets cannot hold as they are): the Model maps each categorical column by value, an unseen category missing."""
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    rng = np.random.default_rng(41)
    n = 1500
    frame = pd.DataFrame({"a": rng.normal(size=n),
                          "color": pd.Categorical(rng.choice(["red", "green", "blue", "teal", None], n)),
                          "size": pd.Categorical(rng.integers(0, 6, n)),
                          "delta": pd.Categorical(rng.integers(-3, 3, n))})
    y = ((frame.color == "red") ^ (frame.a > 0.3) | (frame["size"] == 4) | (frame.delta == -2)).astype(int)
    estimator = ensemble.HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(frame, y)
    model = grove.compile(estimator)
    test = frame.iloc[:300].copy()
    test["color"] = pd.Categorical(rng.choice(["red", "green", "mauve", "blue", None], 300))  # mauve: unseen
    test["delta"] = pd.Categorical(rng.integers(-4, 4, 300))
    check(model, estimator, test)
    check(pickle.loads(pickle.dumps(model)), estimator, test)


def test_refused():
    """Estimators whose trees grove does not read yet, and unfitted ones, are refused saying so."""
    X, targets = data(5, rows=200)
    with pytest.raises(grove.GroveArgumentError, match="not fitted"):
        grove.compile(ensemble.RandomForestRegressor())
    with pytest.raises(grove.GroveArgumentError, match="init=DecisionTreeRegressor"):
        grove.compile(ensemble.GradientBoostingRegressor(n_estimators=3, init=tree.DecisionTreeRegressor(max_depth=2))
                      .fit(np.nan_to_num(X), targets["real"]))


def test_forest_api_checks_trees():
    """grove_forest_add_tree names the tree and node of a bad child, a shared subtree and a bad feature."""
    lib = _lib.compiler()
    error = _lib.Error()
    o = _lib.ForestOptions(num_features=3, num_outputs=1, double_thresholds=1, rows_float=1)
    forest = lib.forest_new(ctypes.byref(o), ctypes.byref(error))
    assert forest
    try:
        def add(left, right, feature):
            arrays = [np.array(a, dtype=np.int64) for a in (left, right, feature)]
            threshold, value = np.zeros(len(left)), np.ones(len(left))
            t = _lib.TreeArrays(num_nodes=len(left), left=arrays[0].ctypes.data, right=arrays[1].ctypes.data,
                                feature=arrays[2].ctypes.data, threshold=threshold.ctypes.data, value=value.ctypes.data,
                                width=1)
            status = lib.forest_add_tree(forest, ctypes.byref(t), ctypes.byref(error))
            return status, error.message.decode()
        assert add([1, -1, -1], [2, -1, -1], [0, 0, 0])[0] == _lib.OK
        assert add([1, -1, -1], [5, -1, -1], [0, 0, 0]) == (_lib.ERROR_FORMAT, "tree 1 node 0: right child 5 is out of range")
        assert add([1, 2, -1], [2, 2, -1], [0, 1, 0]) == (_lib.ERROR_FORMAT, "tree 1 node 1: left child 2 is reached twice")
        assert add([1, -1, -1], [2, -1, -1], [7, 0, 0]) == (_lib.ERROR_FORMAT, "tree 1 node 0: the feature is out of range")
    finally:
        lib.forest_free(forest)
