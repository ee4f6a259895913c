"""scikit-learn's fitted tree ensembles as grove forests, read from their arrays through libgrovec's forest
building (grove_forest_new, grove_forest_add_tree: rt/grove_compile.h).

Each estimator predicts as scikit-learn computes it: rows cast to float32 (scikit-learn's DTYPE; HistGradientBoosting
keeps float64) and compared as doubles against float64 thresholds (x <= threshold goes left, NaN where
missing_go_to_left says), float64 values summed in tree order. A classifier's tree gives its leaf's class
fractions, each divided by their sum as predict_proba divides them; forests average their trees; gradient boosting adds learning_rate x each tree's value to
its init estimator's constant raw prediction (HistGradientBoosting: its trees' values, shrunk already, to its
baseline), then takes its link's inverse: the sigmoid (two classes: [1 - p, p]), the softmax or exp. An
isolation forest's model predicts its score_samples: each leaf's path length with scikit-learn's correction over the
expected path length times the trees, summed, then -2^-sum."""
import ctypes

import numpy as np

from . import _lib
from .errors import argument, check, from_status


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
    sets = getattr(tree, "category_set", None)
    sets = None if sets is None else np.ascontiguousarray(sets, dtype=np.int64)
    arrays = _lib.TreeArrays(num_nodes=len(left), left=left.ctypes.data, right=right.ctypes.data,
                             feature=feature.ctypes.data, threshold=threshold.ctypes.data,
                             missing_left=0 if missing is None else missing.ctypes.data, value=values.ctypes.data,
                             category_set=0 if sets is None else sets.ctypes.data, output=output,
                             width=values.shape[1])
    return arrays, (left, right, feature, threshold, missing, values, sets)


class _HistTree:
    """A HistGradientBoosting TreePredictor's nodes as a Tree's arrays (a leaf's children -1), features in the
    columns of the rows it is given (order: the column of each column its preprocessor makes); a categorical split
    as a set of the raw categories (sets: the forest's list, which it adds to), on the side where no unknown
    category goes: a split that sends those (and NaN, negative values) left has its children swapped and its set
    the known categories that go right."""

    def __init__(self, predictor, order, known, categories, sets):
        nodes = predictor.nodes
        leaf = nodes["is_leaf"].astype(bool)
        left = np.where(leaf, -1, nodes["left"].astype(np.int64))
        right = np.where(leaf, -1, nodes["right"].astype(np.int64))
        self.feature = np.where(leaf, 0, order[nodes["feature_idx"]])
        self.threshold = nodes["num_threshold"]
        self.missing_go_to_left = nodes["missing_go_to_left"].copy()
        self.category_set = np.full(len(nodes), -1, dtype=np.int64)
        for i in np.flatnonzero(nodes["is_categorical"] & ~leaf):
            j = nodes["feature_idx"][i]
            codes = _bits(predictor.raw_left_cat_bitsets[nodes["bitset_idx"][i]])
            if nodes["missing_go_to_left"][i]:
                codes = np.setdiff1d(_bits(known[j]), codes)
                left[i], right[i] = right[i], left[i]
            self.missing_go_to_left[i] = 0  # NaN goes where unknown categories go: where the set is not
            self.category_set[i] = len(sets)
            sets.append(_words(categories[j][codes]))
        self.children_left, self.children_right = left, right


def _bits(bitset):
    """The members of a bitset of uint32 words."""
    words = np.asarray(bitset, dtype=np.uint32)
    return np.flatnonzero((words[:, None] >> np.arange(32, dtype=np.uint32)) & 1)


def _words(categories):
    """A set of integer categories as uint32 words."""
    c = np.asarray(categories, dtype=np.int64)
    words = np.zeros(int(c.max()) // 32 + 1 if len(c) else 0, dtype=np.uint32)
    np.bitwise_or.at(words, c // 32, (np.uint32(1) << (c % 32).astype(np.uint32)))
    return words


def _hist_columns(est):
    """HistGradientBoosting's preprocessing: (order, categories, lists). order: the row's column of each column its
    trees read (its ColumnTransformer puts the categorical ones first). categories: per categorical column (of the
    trees'), the category each of its codes stands for in the rows grove is given: the raw value where its
    OrdinalEncoder's categories are integers from 0 to 2^20 (grove's sets hold them as they are), else the code
    itself, the Model mapping a DataFrame's categorical column to codes by value (lists: {row column: categories}).
    An unknown category, which the encoder makes NaN, goes where NaN goes."""
    pre = getattr(est, "_preprocessor", None)
    n = est.n_features_in_
    if pre is None:
        return np.arange(n), {}, {}
    order, categories, lists = [], {}, {}
    for name, transformer, columns in pre.transformers_:
        if isinstance(transformer, str):  # "drop" (or a remainder of none)
            continue
        columns = np.arange(n)[columns] if np.asarray(columns).dtype == bool else np.asarray(columns, dtype=np.int64)
        if name == "encoder":
            for k, values in enumerate(transformer.categories_):
                values = np.asarray(values)
                if len(values) and (values[-1] is None or (isinstance(values[-1], float) and np.isnan(values[-1]))):
                    values = values[:-1]  # NaN (None), listed last: its code is NaN, a missing value
                if values.dtype.kind in "iuf" and np.all((values >= 0) & (values < 2**20) & (values == np.floor(values))):
                    categories[len(order) + k] = values.astype(np.int64)
                else:  # strings, or numbers grove's sets cannot hold: codes, mapped from a DataFrame's values
                    categories[len(order) + k] = np.arange(len(values))
                    lists[int(columns[k])] = list(values)
        order.extend(int(c) for c in columns)
    return np.asarray(order, dtype=np.int64), categories, lists


class _Subset:
    """A tree of an ensemble fitted on a subset of the features (estimators_features_) as one over all of them."""

    def __init__(self, tree, features):
        self.children_left, self.children_right, self.threshold = tree.children_left, tree.children_right, tree.threshold
        self.feature = np.where(tree.children_left >= 0, np.asarray(features)[np.maximum(tree.feature, 0)], 0)
        self.missing_go_to_left = getattr(tree, "missing_go_to_left", None)


def _fractions(tree):
    """A classifier tree's class fractions per node (n_nodes x n_classes), divided by their sum as predict_proba
    divides them (a sum of 0 by 1); of two classes, the second's alone (the model gives [1 - p, p]: the first's
    probability is 1 minus the second's but for rounding far below float32's)."""
    value = tree.value[:, 0, :]
    total = value.sum(axis=1)
    total[total == 0.0] = 1.0
    fractions = value / total[:, None]
    return fractions[:, 1:] if fractions.shape[1] == 2 else fractions


def _classifier(est, average):
    """The options of a classifier forest whose trees give _fractions: one margin for two classes, else one each."""
    return dict(outputs=1, binary=True, average=average) if len(est.classes_) == 2 else \
        dict(outputs=len(est.classes_), average=average)


def _single_output(est, what):
    if getattr(est, "n_outputs_", 1) != 1:
        raise argument(f"grove compiles {what} of one output; this one has {est.n_outputs_}")


def _trees(est):
    """(forest options as a dict, [(tree, values, output)], classes or None) for a fitted estimator; TypeError for an
    estimator grove does not read."""
    name = type(est).__name__
    classifier = hasattr(est, "classes_")
    if name in ("DecisionTreeClassifier", "ExtraTreeClassifier"):
        _single_output(est, "classifiers")
        return _classifier(est, False), [(est.tree_, _fractions(est.tree_), 0)], est.classes_
    if name in ("DecisionTreeRegressor", "ExtraTreeRegressor"):
        return dict(outputs=est.n_outputs_), [(est.tree_, est.tree_.value[:, :, 0], 0)], None
    if name in ("RandomForestClassifier", "ExtraTreesClassifier"):
        _single_output(est, "classifiers")
        return _classifier(est, True), [(e.tree_, _fractions(e.tree_), 0) for e in est.estimators_], est.classes_
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
        order, categories, lists = _hist_columns(est)
        known = est._bin_mapper.make_known_categories_bitsets()
        known = {j: known[0][known[1][j]] for j in categories}
        link = type(est._loss.link).__name__
        transforms = {"IdentityLink": "identity", "LogLink": "exp", "LogitLink": "sigmoid",
                      "MultinomialLogit": "softmax"}
        if link not in transforms:
            raise argument(f"{name} with loss {type(est._loss).__name__}: its link ({link}) is not one grove has")
        base = np.ravel(est._baseline_prediction)
        sets = []
        trees = [(_HistTree(p, order, known, categories, sets), p.nodes["value"][:, None], k)
                 for stage in est._predictors for k, p in enumerate(stage)]
        options = dict(outputs=len(base), base=base, transform=transforms[link], binary=link == "LogitLink",
                       rows_float=False, sets=sets, lists=lists)
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
    returns the estimator's classes (None for a regressor) and the Model's category lists (Model's categories: None,
    or ("codes", {column: categories}), a DataFrame's categorical column mapped to the index of its value there, an
    unknown one missing)."""
    if not hasattr(est, "n_features_in_"):
        raise argument(f"the {type(est).__name__} is not fitted")
    spec, trees, classes = _trees(est)
    lib = _lib.compiler()
    error = _lib.Error()
    base = spec.get("base")
    base = None if base is None else np.ascontiguousarray(base, dtype=np.float64)
    o = _lib.ForestOptions(num_features=est.n_features_in_, num_outputs=spec["outputs"],
                           transform=spec.get("transform", "identity").encode(),
                           base_score=None if base is None else base.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                           average=int(spec.get("average", False)), binary=int(spec.get("binary", False)),
                           double_thresholds=1, rows_float=int(spec.get("rows_float", True)), category_rule=b"exact")
    forest = lib.forest_new(ctypes.byref(o), ctypes.byref(error))
    if not forest:
        raise from_status(error.status, error)
    try:
        for words in spec.get("sets", []):
            index = ctypes.c_longlong()
            words = np.ascontiguousarray(words, dtype=np.uint32)
            check(lib.forest_add_set(forest, words.ctypes.data, len(words), ctypes.byref(index), ctypes.byref(error)),
                  error)
        for tree, values, output in trees:
            arrays, keep = _tree_arrays(tree, values, output)
            check(lib.forest_add_tree(forest, ctypes.byref(arrays), ctypes.byref(error)), error)
            del keep
        check(lib.compile_forest(forest, out_path, ctypes.byref(options), ctypes.byref(error)), error)
    finally:
        lib.forest_free(forest)
    lists = spec.get("lists")
    return None if classes is None else np.asarray(classes), ("codes", lists) if lists else None
