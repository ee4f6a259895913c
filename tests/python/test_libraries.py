"""grove.compile on the training libraries' own objects, against the libraries' predictions: small XGBoost and
LightGBM models trained here (native Boosters and scikit-learn estimators), and ONNX fixtures run by onnxruntime.
Each test is skipped, saying why, where its library is not installed."""
import os

import numpy as np
import pytest

import grove
from conftest import MODELS, assert_close, read_rows


def data(rows=600, features=8, classes=None, seed=0):
    """Reproducible rows (float32, about 5% missing) and a target depending on a few of the features."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, features)).astype(np.float32)
    signal = X[:, 0] - 0.5 * X[:, 1] * X[:, 2] + np.sin(X[:, 3])
    X[rng.random(X.shape) < 0.05] = np.nan
    if classes is None:
        return X, signal.astype(np.float32)
    cuts = np.quantile(signal, np.linspace(0, 1, classes + 1)[1:-1])
    return X, np.digitize(signal, cuts).astype(np.int32)


# -- XGBoost ---------------------------------------------------------------------------------------------------------

def test_xgboost_booster_binary():
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    X, y = data(classes=2)
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 4, "eta": 0.3, "seed": 1},
                        xgb.DMatrix(X, label=y), num_boost_round=20)
    model = grove.compile(booster)
    assert_close(model.predict(X), booster.predict(xgb.DMatrix(X)), True)
    assert_close(model.predict(X, margin=True), booster.predict(xgb.DMatrix(X), output_margin=True), False)


def test_xgboost_binary_hinge():
    """binary:hinge predicts 1 where the margin is positive, else 0."""
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    X, y = data(classes=2, seed=5)
    booster = xgb.train({"objective": "binary:hinge", "max_depth": 4, "eta": 0.3, "seed": 1},
                        xgb.DMatrix(X, label=y), num_boost_round=20)
    model = grove.compile(booster)
    want = booster.predict(xgb.DMatrix(X))
    assert 0 < want.sum() < len(want)
    assert_close(model.predict(X), want, True)
    assert_close(model.predict(X, margin=True), booster.predict(xgb.DMatrix(X), output_margin=True), False)


def test_xgboost_survival():
    """survival:cox and survival:aft predict e^margin, their base_score a log."""
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    X, y = data(seed=6)
    time = np.exp(y)
    cox = xgb.DMatrix(X, label=np.where(np.arange(len(y)) % 3 == 0, -time, time))
    aft = xgb.DMatrix(X)
    aft.set_float_info("label_lower_bound", time)
    aft.set_float_info("label_upper_bound", np.where(np.arange(len(y)) % 3 == 0, np.inf, time))
    for params, d in (({"objective": "survival:cox"}, cox), ({"objective": "survival:aft", "base_score": 2.0}, aft)):
        booster = xgb.train({**params, "max_depth": 4, "eta": 0.3, "seed": 1}, d, num_boost_round=15)
        model = grove.compile(booster)
        assert_close(model.predict(X), booster.predict(xgb.DMatrix(X)), False)
        assert_close(model.predict(X, margin=True), booster.predict(xgb.DMatrix(X), output_margin=True), False)


def test_xgboost_sklearn_multiclass_and_regressor():
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (XGBoost's estimators need it)")
    X, y = data(classes=3, seed=2)
    classifier = xgb.XGBClassifier(n_estimators=15, max_depth=3, random_state=0).fit(X, y)
    model = grove.compile(classifier)
    assert model.num_outputs() == 3
    assert_estimator(model, classifier, X)
    assert_close(model.predict(X, margin=True), classifier.predict(X, output_margin=True), False)
    X, y = data(seed=3)
    regressor = xgb.XGBRegressor(n_estimators=30, max_depth=5, random_state=0).fit(X, y)
    assert_close(grove.compile(regressor).predict(X.astype(np.float64)), regressor.predict(X), False)


def assert_estimator(model, estimator, X):
    """model answers as the classifier estimator it was compiled from: its classes, its probabilities (shape and
    values) and its labels, but where the estimator's two likeliest classes are closer than float32 rounding."""
    assert list(model.classes_) == list(estimator.classes_)
    want = estimator.predict_proba(X)
    got = model.predict_proba(X)
    assert got.shape == want.shape
    assert_close(got, want, True)
    top = np.sort(want, axis=1)
    clear = top[:, -1] - top[:, -2] > 1e-5
    labels = model.predict(X)
    assert labels.dtype == np.asarray(estimator.classes_).dtype
    want = np.asarray(estimator.predict(X))
    assert labels.shape == want.shape  # (n,), or (n, 1) for CatBoost's labels of several classes
    assert (labels.reshape(-1) == want.reshape(-1))[clear].all() and clear.mean() > 0.9


def test_xgboost_sklearn_binary_and_pickle():
    """A binary XGBClassifier: predict gives its labels, predict_proba its two columns; a pickle keeps them. The
    Booster's model answers as the Booster: one probability a row, and no predict_proba."""
    import pickle
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (XGBoost's estimators need it)")
    X, y = data(classes=2, seed=9)
    classifier = xgb.XGBClassifier(n_estimators=20, max_depth=4, random_state=0).fit(X, y)
    model = grove.compile(classifier)
    assert_estimator(model, classifier, X)
    assert_estimator(pickle.loads(pickle.dumps(model)), classifier, X)
    booster = grove.compile(classifier.get_booster())
    assert booster.classes_ is None
    assert_close(booster.predict(X), classifier.get_booster().predict(xgb.DMatrix(X)), True)
    with pytest.raises(grove.GroveArgumentError, match="answers as its Booster does"):
        booster.predict_proba(X)


def test_lightgbm_sklearn_string_classes():
    """LGBMClassifier trained on string classes: grove's labels are those strings, binary and multiclass."""
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed")
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (LightGBM's estimators need it)")
    for classes, seed in ((2, 10), (4, 11)):
        X, y = data(classes=classes, seed=seed)
        X64 = X.astype(np.float64)
        names = np.array(["ash", "birch", "cedar", "elm"])[y]
        classifier = lgb.LGBMClassifier(n_estimators=15, num_leaves=15, verbose=-1, random_state=0).fit(X64, names)
        assert_estimator(grove.compile(classifier), classifier, X64)


def test_xgboost_sklearn_early_stopping():
    """An estimator trained with early stopping predicts with the rounds up to its best one; so does grove."""
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (XGBoost's estimators need it)")
    X, y = data(rows=800, seed=8)
    y = y + np.random.default_rng(8).normal(scale=2.0, size=len(y)).astype(np.float32)  # noise: stops early
    regressor = xgb.XGBRegressor(n_estimators=300, max_depth=6, learning_rate=0.5, early_stopping_rounds=3,
                                 random_state=0).fit(X[:600], y[:600], eval_set=[(X[600:], y[600:])], verbose=False)
    assert regressor.best_iteration < 290
    assert_close(grove.compile(regressor).predict(X), regressor.predict(X), False)


def test_xgboost_dataframe_feature_names():
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (XGBoost's estimators need it)")
    X, y = data(seed=4)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    regressor = xgb.XGBRegressor(n_estimators=10, max_depth=4, random_state=0).fit(frame, y)
    model = grove.compile(regressor)
    assert model.feature_names == list(frame.columns)
    shuffled = frame[list(reversed(frame.columns))]
    assert_close(model.predict(shuffled), regressor.predict(frame), False)
    with pytest.raises(grove.GroveArgumentError, match="missing 'x7'"):
        model.predict(frame.drop(columns="x7"))


# -- LightGBM --------------------------------------------------------------------------------------------------------

def test_lightgbm_booster_binary_and_multiclass():
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed")
    X, y = data(classes=2, seed=5)
    X64 = X.astype(np.float64)  # LightGBM compares doubles: the f64 entry sees what LightGBM sees
    params = {"objective": "binary", "num_leaves": 15, "learning_rate": 0.2, "verbose": -1, "seed": 1}
    booster = lgb.train(params, lgb.Dataset(X64, label=y), num_boost_round=20)
    model = grove.compile(booster)
    assert model.feature_names is None  # LightGBM's generated Column_N names are no names
    assert_close(model.predict(X64), booster.predict(X64), True)
    assert_close(model.predict(X64, margin=True), booster.predict(X64, raw_score=True), False)
    X, y = data(classes=4, seed=6)
    X64 = X.astype(np.float64)
    booster = lgb.train({**params, "objective": "multiclass", "num_class": 4}, lgb.Dataset(X64, label=y),
                        num_boost_round=10)
    assert_close(grove.compile(booster).predict(X64), booster.predict(X64), True)


def test_lightgbm_cross_entropy_lambda():
    """cross_entropy_lambda predicts log(1 + e^margin)."""
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed")
    X, y = data(classes=2, seed=7)
    booster = lgb.train({"objective": "cross_entropy_lambda", "num_leaves": 15, "verbose": -1, "seed": 1},
                        lgb.Dataset(X.astype(np.float64), label=y), num_boost_round=20)
    model = grove.compile(booster)
    assert_close(model.predict(X), booster.predict(X.astype(np.float64)), False)
    assert_close(model.predict(X, margin=True), booster.predict(X.astype(np.float64), raw_score=True), False)


def test_lightgbm_sklearn_regressor_with_names():
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed")
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (LightGBM's estimators need it)")
    X, y = data(seed=7)
    frame = pd.DataFrame(X.astype(np.float64), columns=[f"col_{i}" for i in range(X.shape[1])])
    regressor = lgb.LGBMRegressor(n_estimators=25, num_leaves=20, verbose=-1, random_state=0).fit(frame, y)
    model = grove.compile(regressor)
    assert model.feature_names == list(frame.columns)
    assert_close(model.predict(frame.iloc[:, ::-1]), regressor.predict(frame), False)


# -- ONNX through onnxruntime ----------------------------------------------------------------------------------------

def onnxruntime_outputs(path, rows):
    """onnxruntime's scores (or a classifier's probabilities) for rows, as an (n, k) array."""
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = {session.get_inputs()[0].name: rows}
    outputs = session.run(None, feed)
    values = outputs[-1]  # a regressor's only output, a classifier's probabilities (after its label)
    if isinstance(values, list):  # ZipMap: one {label: probability} dict per row
        values = np.array([[row[k] for k in row] for row in values])
    return np.asarray(values, dtype=np.float64).reshape(len(rows), -1)


# skl2onnx, onnxmltools and hand-built fixtures where onnxruntime follows the specification (docs/formats.md, ONNX-ML: where
# onnxruntime departs from it, grove follows the specification, and those fixtures are left out here)
ONNX_FIXTURES = ["sk_rf_regressor", "sk_gb_regressor", "sk_rf_multiclass", "sk_et_multiclass", "xgb_regressor",
                 "xgb_multiclass", "lgbm_regressor", "lgbm_multiclass", "aggregate_sum", "aggregate_max"]


@pytest.mark.parametrize("name", ONNX_FIXTURES)
def test_onnx_modelproto_against_onnxruntime(name):
    onnx = pytest.importorskip("onnx", reason="onnx is not installed")
    path = os.path.join(MODELS, "onnx", name + ".onnx")
    proto = onnx.load(path)
    model = grove.compile(proto)
    rows = read_rows(os.path.join(MODELS, "onnx", name + ".rows.csv")).astype(np.float32)
    want = onnxruntime_outputs(path, rows)
    probability = "multiclass" in name
    assert_close(model.predict(rows).reshape(len(rows), -1), want, probability)


def test_lightgbm_pandas_categories(tmp_path):
    """A LightGBM model trained on a DataFrame with categorical columns keeps their category lists: grove matches a
    frame's categories by value, whatever their order (the frame's own codes would be wrong), an unseen one as
    missing, as LightGBM does, also loaded from its artifact alone (which keeps the lists); a model without the lists
    refuses categorical columns instead of using codes."""
    import pickle
    lgb = pytest.importorskip("lightgbm", reason="lightgbm is not installed")
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (LightGBM's estimators need it)")
    rng = np.random.default_rng(13)
    n = 1500
    kinds, sizes = ["oak", "pine", "yew", "fir", "ash"], [10, 20, 30, 40]
    frame = pd.DataFrame({"x": rng.normal(size=n),
                          "kind": pd.Categorical(rng.choice(kinds, n), categories=kinds),
                          "size": pd.Categorical(rng.choice(sizes, n), categories=sizes)})
    y = (np.isin(frame["kind"], ["pine", "fir"]) * 1.5 + (frame["size"].astype(int) == 30) + frame["x"]).astype(float)
    regressor = lgb.LGBMRegressor(n_estimators=20, num_leaves=8, min_child_samples=5, verbose=-1,
                                  random_state=0).fit(frame, y)
    model = grove.compile(regressor)
    test = frame.iloc[:300].copy()
    test["kind"] = test["kind"].astype(str).where(rng.random(300) > 0.1, "elm")  # elm: never seen in training
    test["kind"] = pd.Categorical(test["kind"], categories=["yew", "elm", "fir", "ash", "pine", "oak"])
    test["size"] = pd.Categorical(test["size"].astype(int), categories=[40, 30, 20, 10])
    want = regressor.predict(test)
    assert_close(model.predict(test), want, False)
    assert_close(pickle.loads(pickle.dumps(model)).predict(test), want, False)
    model.save(tmp_path / "model.so")
    assert_close(grove.load(tmp_path / "model.so").predict(test), want, False)
    codes = test.assign(kind=test["kind"].cat.codes, size=test["size"].cat.codes).astype(float)
    assert np.abs(model.predict(codes) - want).max() > 1e-3  # the codes of reordered categories are other values
    plain = grove.compile(lgb.LGBMRegressor(n_estimators=5, verbose=-1).fit(codes, y[:300]))
    with pytest.raises(grove.GroveArgumentError, match="holds no lists of their categories"):
        plain.predict(test)


def test_xgboost_pandas_categories(tmp_path):
    """XGBoost keeps the categories of a DataFrame's categorical columns (enable_categorical); grove matches a frame's
    categories by value through them, from the estimator, its Booster and its saved JSON and UBJSON. A category
    XGBoost never saw is refused (XGBoost 3.2 gives it the code of the next one in sorted order, or fails)."""
    xgb = pytest.importorskip("xgboost", reason="xgboost is not installed")
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    pytest.importorskip("sklearn", reason="scikit-learn is not installed (XGBoost's estimators need it)")
    rng = np.random.default_rng(14)
    n = 1500
    kinds, sizes = ["oak", "pine", "yew", "fir"], [10, 20, 30, 40]
    frame = pd.DataFrame({"kind": pd.Categorical(rng.choice(kinds, n), categories=kinds),
                          "x": rng.normal(size=n).astype(np.float32),
                          "size": pd.Categorical(rng.choice(sizes, n), categories=sizes)})
    y = np.isin(frame["kind"], ["pine", "fir"]) * 1.5 + (frame["size"].astype(int) == 30) + frame["x"]
    regressor = xgb.XGBRegressor(n_estimators=15, max_depth=4, enable_categorical=True, tree_method="hist",
                                 random_state=0).fit(frame, y)
    test = frame.iloc[:300].copy()
    test["kind"] = test["kind"].astype(str).where(rng.random(300) > 0.1, None)
    test["kind"] = pd.Categorical(test["kind"], categories=["yew", "elm", "fir", "pine", "oak"])
    test["size"] = pd.Categorical(test["size"].astype(int), categories=[40, 30, 20, 10])
    want = regressor.predict(test)
    unseen = test.assign(kind=pd.Categorical(["elm"] * 300, categories=["yew", "elm"]))
    with pytest.raises(grove.GroveArgumentError, match="not trained on: 'elm'"):
        grove.compile(regressor).predict(unseen)
    regressor.save_model(tmp_path / "model.json")
    regressor.save_model(tmp_path / "model.ubj")
    for source in (regressor, regressor.get_booster(), str(tmp_path / "model.json"), str(tmp_path / "model.ubj")):
        assert_close(grove.compile(source).predict(test), want, False)
    grove.compile(regressor).save(tmp_path / "model.so")  # the artifact keeps the lists: loaded alone, it maps too
    loaded = grove.load(tmp_path / "model.so")
    assert_close(loaded.predict(test), want, False)
    with pytest.raises(grove.GroveArgumentError, match="not trained on: 'elm'"):
        loaded.predict(unseen)


# -- CatBoost --------------------------------------------------------------------------------------------------------

def test_catboost_classifiers_and_regressor():
    """CatBoost's estimators, read from their JSON: a binary and a three-class classifier (labels, probabilities,
    margins) and a regressor, exactly as catboost predicts them (its ONNX export rounds leaves to float32)."""
    import pickle
    cb = pytest.importorskip("catboost", reason="catboost is not installed")
    for classes, seed in ((2, 20), (3, 21)):
        X, y = data(classes=classes, seed=seed)
        names = np.array(["ash", "birch", "cedar"])[y]
        classifier = cb.CatBoostClassifier(iterations=30, depth=5, random_seed=0, verbose=False, thread_count=1,
                                           allow_writing_files=False).fit(X, names)
        model = grove.compile(classifier)
        assert_estimator(model, classifier, X)
        assert_close(model.predict(X, margin=True), classifier.predict(X, prediction_type="RawFormulaVal"), False)
        assert_estimator(pickle.loads(pickle.dumps(model)), classifier, X)
    # catboost's own CatBoost object predicts raw values (RawFormulaVal); its model answers so too
    booster = cb.CatBoost({"iterations": 20, "depth": 4, "loss_function": "Logloss", "random_seed": 0, "verbose": False,
                           "thread_count": 1, "allow_writing_files": False}).fit(X, (y > 0).astype(int))
    model = grove.compile(booster)
    assert model.classes_ is None
    assert_close(model.predict(X), booster.predict(X), False)
    assert_close(pickle.loads(pickle.dumps(model)).predict(X), booster.predict(X), False)
    X, y = data(seed=22)
    regressor = cb.CatBoostRegressor(iterations=50, depth=6, random_seed=0, verbose=False, thread_count=1,
                                     allow_writing_files=False).fit(X, y)
    model = grove.compile(regressor)
    assert model.classes_ is None
    assert_close(model.predict(X.astype(np.float64)), regressor.predict(X), False)


def test_catboost_non_symmetric_trees():
    """grow_policy Depthwise and Lossguide: trees of nested nodes in the JSON, binary, three classes and regression."""
    cb = pytest.importorskip("catboost", reason="catboost is not installed")
    for policy, seed in (("Depthwise", 24), ("Lossguide", 25)):
        for classes in (2, 3, None):
            X, y = data(classes=classes, seed=seed)
            common = dict(iterations=20, depth=6, grow_policy=policy, random_seed=0, verbose=False, thread_count=1,
                          allow_writing_files=False)
            estimator = (cb.CatBoostRegressor(**common) if classes is None else
                         cb.CatBoostClassifier(nan_mode="Max" if classes == 2 else "Min", **common)).fit(X, y)
            model = grove.compile(estimator)
            if classes is None:
                assert_close(model.predict(X), estimator.predict(X), False)
            else:
                assert_estimator(model, estimator, X)


def test_catboost_one_hot_categories():
    """Integer categorical columns that CatBoost one-hot encodes (it hashes each category's text): grove finds each
    split's integer and matches the rows' values, unseen ones included; a CTR-encoded feature is refused by name."""
    cb = pytest.importorskip("catboost", reason="catboost is not installed")
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    rng = np.random.default_rng(23)
    frame = pd.DataFrame({"a": rng.normal(size=900), "color": rng.integers(-2, 6, 900), "b": rng.normal(size=900)})
    y = ((frame.color == 3) | ((frame.color == -1) ^ (frame.a > 0.5))).astype(int)
    classifier = cb.CatBoostClassifier(iterations=30, depth=4, random_seed=0, verbose=False, thread_count=1,
                                       one_hot_max_size=10, cat_features=["color"],
                                       allow_writing_files=False).fit(frame, y)
    test = frame.iloc[:300].copy()
    test["color"] = rng.integers(-4, 9, 300)  # categories it never saw too
    model = grove.compile(classifier)
    assert_close(model.predict_proba(test), classifier.predict_proba(test), True)
    frame["many"] = rng.integers(0, 40, 900)
    y = (frame.many % 3 == 0).astype(int)
    ctr = cb.CatBoostClassifier(iterations=10, depth=3, random_seed=0, verbose=False, thread_count=1,
                                cat_features=["many"], allow_writing_files=False).fit(frame[["a", "many"]], y)
    with pytest.raises(grove.GroveFormatError, match="CTR .*'many'"):
        grove.compile(ctr)
