"""scikit-learn's fitted tree ensembles as grove forests, read from their arrays through libgrovec's forest
building (grove_forest_new, grove_forest_add_tree: rt/grove_compile.h).

Each estimator predicts as scikit-learn computes it: rows cast to float32 (scikit-learn's DTYPE; HistGradientBoosting
keeps float64) and compared as doubles against float64 thresholds (x <= threshold goes left, NaN where
missing_go_to_left says), float64 values summed in tree order. A classifier's tree gives its leaf's class fractions, each divided by their sum as
predict_proba divides them; forests average their trees; gradient boosting adds learning_rate x each tree's value to
its init estimator's constant raw prediction (HistGradientBoosting: its trees' values, shrunk already, to its
baseline), then takes its link's inverse: the sigmoid (two classes: [1 - p, p]), the softmax or exp. An
isolation forest's model predicts its score_samples: each leaf's path length with scikit-learn's correction over the
expected path length times the trees, summed, then -2^-sum."""
import ctypes

import numpy as np

from . import _lib
from .errors import argument, from_status


def _tree_arrays(tree, values, output):
    """A sklearn Tree's arrays (kept alive in the returned tuple) as a GroveTreeArrays adding values (n_nodes x
    width) to margins output.."""
    left = np.ascontiguousarray(tree.children_left, dtype=np.int64)
    right = np.ascontiguousarray(tree.children_right, dtype=np.int64)
    feature = np.ascontiguousarray(tree.feature, dtype=np.int64)
    threshold = np.ascontiguousarray(tree.threshold, dtype=np.float64)
    missing = getattr(tree, "missing_go_to_left", None)
    missing = None if missing is None else np.ascontiguousarray(missing, dtype=np.uint8)
    values = np.ascontiguousarray(values, dtype=np.float64)
    arrays = _lib.TreeArrays(len(left), left.ctypes.data, right.ctypes.data, feature.ctypes.data,
                             threshold.ctypes.data, 0 if missing is None else missing.ctypes.data,
                             values.ctypes.data, output, values.shape[1])
    return arrays, (left, right, feature, threshold, missing, values)


class _HistTree:
    """A HistGradientBoosting TreePredictor's nodes as a Tree's arrays (a leaf's children -1)."""

    def __init__(self, nodes):
        leaf = nodes["is_leaf"].astype(bool)
        self.children_left = np.where(leaf, -1, nodes["left"].astype(np.int64))
        self.children_right = np.where(leaf, -1, nodes["right"].astype(np.int64))
        self.feature = nodes["feature_idx"]
        self.threshold = nodes["num_threshold"]
        self.missing_go_to_left = nodes["missing_go_to_left"]


class _Subset:
    """A tree of an ensemble fitted on a subset of the features (estimators_features_) as one over all of them."""

    def __init__(self, tree, features):
        self.children_left, self.children_right, self.threshold = tree.children_left, tree.children_right, tree.threshold
        self.feature = np.where(tree.children_left >= 0, np.asarray(features)[np.maximum(tree.feature, 0)], 0)
        self.missing_go_to_left = getattr(tree, "missing_go_to_left", None)


def _fractions(tree):
    """A classifier tree's class fractions per node (n_nodes x n_classes), divided by their sum as predict_proba
    divides them (a sum of 0 by 1)."""
    value = tree.value[:, 0, :]
    total = value.sum(axis=1)
    total[total == 0.0] = 1.0
    return value / total[:, None]


def _single_output(est, what):
    if getattr(est, "n_outputs_", 1) != 1:
        raise argument(f"grove compiles {what} of one output; this one has {est.n_outputs_}")


def _trees(est):
    """(forest options as a dict, [(tree, values, output)], classes or None) for a fitted estimator; TypeError for an
    estimator grove does not read."""
    name = type(est).__name__
    classifier = hasattr(est, "classes_") and not name.startswith("IsolationForest")
    if name in ("DecisionTreeClassifier", "ExtraTreeClassifier"):
        _single_output(est, "classifiers")
        return dict(outputs=len(est.classes_)), [(est.tree_, _fractions(est.tree_), 0)], est.classes_
    if name in ("DecisionTreeRegressor", "ExtraTreeRegressor"):
        return dict(outputs=est.n_outputs_), [(est.tree_, est.tree_.value[:, :, 0], 0)], None
    if name in ("RandomForestClassifier", "ExtraTreesClassifier"):
        _single_output(est, "classifiers")
        return dict(outputs=len(est.classes_), average=True), \
            [(e.tree_, _fractions(e.tree_), 0) for e in est.estimators_], est.classes_
    if name in ("RandomForestRegressor", "ExtraTreesRegressor"):
        return dict(outputs=est.n_outputs_, average=True), \
            [(e.tree_, e.tree_.value[:, :, 0], 0) for e in est.estimators_], None
    if name in ("GradientBoostingClassifier", "GradientBoostingRegressor"):
        init = est.init_
        if not (isinstance(init, str) and init == "zero") and not type(init).__name__.startswith("Dummy"):
            raise argument(f"{name} with init={type(init).__name__}: its raw predictions start from another "
                           "estimator's, which grove does not compile; use the default init")
        base = est._raw_predict_init(np.zeros((1, est.n_features_in_), dtype=np.float32))[0]
        k = est.estimators_.shape[1]
        trees = [(e.tree_, est.learning_rate * e.tree_.value[:, :, 0], j)
                 for stage in est.estimators_ for j, e in enumerate(stage)]
        options = dict(outputs=k, base=base)
        if classifier:
            options.update(transform="sigmoid", binary=True) if k == 1 else options.update(transform="softmax")
        return options, trees, est.classes_ if classifier else None
    if name.startswith("HistGradientBoosting"):
        if est.is_categorical_ is not None and np.any(est.is_categorical_):
            raise argument(f"grove does not compile a {name} with categorical features yet")
        link = type(est._loss.link).__name__
        transforms = {"IdentityLink": "identity", "LogLink": "exp", "LogitLink": "sigmoid",
                      "MultinomialLogit": "softmax"}
        if link not in transforms:
            raise argument(f"{name} with loss {type(est._loss).__name__}: its link ({link}) is not one grove has")
        base = np.ravel(est._baseline_prediction)
        trees = [(_HistTree(p.nodes), p.nodes["value"][:, None], k)
                 for stage in est._predictors for k, p in enumerate(stage)]
        options = dict(outputs=len(base), base=base, transform=transforms[link], binary=link == "LogitLink",
                       rows_float=False)
        return options, trees, est.classes_ if classifier else None
    if name == "IsolationForest":  # score_samples: -2^-(the mean path length over the expected one)
        from sklearn.ensemble._iforest import _average_path_length
        denominator = len(est.estimators_) * _average_path_length([est._max_samples])[0]
        if not denominator > 0:
            raise argument(f"{name} of max_samples {est._max_samples}: its expected path length is 0")
        trees = [(_Subset(e.tree_, features), ((lengths + average - 1.0) / denominator)[:, None], 0)
                 for e, features, lengths, average in zip(est.estimators_, est.estimators_features_,
                                                          est._decision_path_lengths, est._average_path_length_per_tree)]
        return dict(outputs=1, transform="isolation"), trees, None
    raise TypeError(f"grove.compile: cannot compile a scikit-learn {name}")


def is_estimator(model):
    """Whether model is a scikit-learn estimator (by its module; scikit-learn itself is not imported)."""
    return type(model).__module__.startswith("sklearn.")


def compile_estimator(est, out_path, options):
    """Build est's forest through libgrovec and compile it into out_path with options (GroveCompileOptions);
    returns the estimator's classes (None for a regressor)."""
    if not hasattr(est, "n_features_in_"):
        raise argument(f"the {type(est).__name__} is not fitted")
    spec, trees, classes = _trees(est)
    lib = _lib.compiler()
    error = _lib.Error()
    base = spec.get("base")
    base = None if base is None else np.ascontiguousarray(base, dtype=np.float64)
    o = _lib.ForestOptions(est.n_features_in_, spec["outputs"],
                           spec.get("transform", "identity").encode(),
                           None if base is None else base.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                           int(spec.get("average", False)), int(spec.get("binary", False)), 1,
                           int(spec.get("rows_float", True)))
    forest = lib.forest_new(ctypes.byref(o), ctypes.byref(error))
    if not forest:
        raise from_status(error.status, error)
    try:
        for tree, values, output in trees:
            arrays, keep = _tree_arrays(tree, values, output)
            status = lib.forest_add_tree(forest, ctypes.byref(arrays), ctypes.byref(error))
            del keep
            if status != _lib.OK:
                raise from_status(status, error)
        status = lib.compile_forest(forest, out_path, ctypes.byref(options), ctypes.byref(error))
        if status != _lib.OK:
            raise from_status(status, error)
    finally:
        lib.forest_free(forest)
    return None if classes is None else np.asarray(classes)
