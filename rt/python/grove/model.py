"""grove.Model: a compiled artifact loaded with libgrove, and grove.load."""
import ctypes
import hashlib
import os
import shutil
import sys
import tempfile
import warnings

import numpy as np

from . import _lib
from .errors import GroveError, GroveUnavailableError, argument, check, from_status

_rt = _lib.runtime
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)

# How many models this process loaded from artifact bytes (grove.load, unpickling); the Dask test reads it on each
# worker to check that the model travelled there once.
loads_from_bytes = 0


def _address(array):
    """The address of a C-contiguous array's data (through its buffer: about a third of the time array.ctypes takes,
    which counts at batch 1; read-only arrays take the slow way)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError):
        return array.ctypes.data


def _is_dataframe(x):
    pandas = sys.modules.get("pandas")  # a DataFrame means pandas is imported; grove does not import it
    return pandas is not None and isinstance(x, pandas.DataFrame)


class Model:
    """A compiled forest: predict rows with it, save it, pickle it.

    Made by grove.compile or grove.load; it owns the loaded artifact (freed by close(), by
    leaving a `with` block, or when the object goes) and the artifact's bytes, which save()
    writes and pickling carries, so that another process (a pool worker, a Dask worker)
    loads the same code; a model from grove.compile also carries the model it was compiled
    from, compiled again where the CPU lacks features the code uses."""

    def __init__(self, path, artifact, source=None, classes=None, categories=None, answer=None):
        """Load the artifact at path whose bytes are artifact (use grove.compile or grove.load); source: the model
        file's bytes (or the estimator read from its arrays), the schedule and the options it was compiled from
        (grove.compile), for pickles to carry;
        classes: the classes of the classifier estimator it was compiled from (see classes_); categories: the
        category lists of its pandas categorical columns: ("column", a list per categorical column, LightGBM's
        pandas_categorical), ("feature", {feature index: list}, XGBoost's) or ("codes", {feature index: list},
        scikit-learn's HistGradientBoosting: an unknown category missing), or None for the lists the artifact
        keeps (grove_category_values: a model file grove read names them), if any; answer: how predict() answers where
        its library's object differs from the rule: "margin" (raw margins, as catboost.CatBoost.predict gives them)
        or "label_column" (labels as one column, as a CatBoostClassifier of several classes gives them)."""
        handle = ctypes.c_void_p()
        error = _lib.Error()
        check(_rt.load(os.fsencode(path), ctypes.byref(handle), ctypes.byref(error)), error)
        self._handle = handle.value
        self._artifact = bytes(artifact)
        self._source = source
        self._classes = None if classes is None else np.asarray(classes)
        self._categories = categories
        self._answer = answer
        self._token = None
        self.num_features = _rt.num_features(self._handle)
        self._outputs = (_rt.num_outputs(self._handle, 0), _rt.num_outputs(self._handle, _lib.PREDICT_MARGIN))
        names = [_rt.feature_name(self._handle, i) for i in range(self.num_features)]
        self.feature_names = [n.decode("utf-8", "replace") for n in names] if all(n is not None for n in names) \
            else None
        self.labels = self._read_labels()
        self.device = _rt.device(self._handle).decode()  # "cpu", or the GPU back-end: "gpusim", "cuda", "rocm"
        if self._categories is None:
            self._categories = self._artifact_categories()

    def _artifact_categories(self):
        """The category values the artifact keeps (ABI 6, from the model file grove read): ("artifact", {feature:
        values as text}, whether a value in no list is missing); None where it keeps none."""
        lists, count = {}, ctypes.c_size_t()
        for j in range(self.num_features):
            values = _rt.category_values(self._handle, j, ctypes.byref(count))
            if values and count.value:
                lists[j] = [values[k].decode("utf-8", "replace") for k in range(count.value)]
        return ("artifact", lists, bool(_rt.unseen_category_missing(self._handle))) if lists else None

    def _read_labels(self):
        count = _rt.num_labels(self._handle)
        if not count:
            return None
        labels = []
        value, text, error = ctypes.c_longlong(), ctypes.c_char_p(), _lib.Error()
        for k in range(count):
            check(_rt.label(self._handle, k, ctypes.byref(value), ctypes.byref(text), ctypes.byref(error)), error)
            labels.append(text.value.decode("utf-8", "replace") if text.value is not None else value.value)
        return labels

    # -- predicting --------------------------------------------------------------------------------------------
    def num_outputs(self, margin=False):
        """Values predict() gives per row: predictions, or margins with margin=True."""
        return self._outputs[1 if margin else 0]

    @property
    def classes_(self):
        """The classes of the classifier estimator (XGBClassifier, LGBMClassifier, CatBoostClassifier, scikit-learn's)
        the model was compiled from, a numpy array: predict() gives them, predict_proba() their probabilities in this
        order. None for a model compiled from a Booster, a regressor or a file, or loaded from an artifact."""
        return self._classes

    def predict(self, X, margin=False, threads=None):
        """Predict the rows of X (a 2-D numpy array, a pandas DataFrame, or anything np.asarray takes).

        A model compiled from a classifier estimator answers as the estimator's predict: each
        row's class, from classes_ (its probabilities: predict_proba). Every other model
        answers as its Booster (or ONNX graph) does, and so do margins (margin=True).

        float32 rows are used in place when C-ordered (other layouts are copied once);
        float64 rows go through grove_predict_f64, exact for models whose library compares
        doubles (LightGBM, ONNX doubles); other numbers are converted to float64. A
        DataFrame's columns are matched to the model's feature names when it has them. NaN
        is a missing value. Returns float32 predictions (margin=True: raw margins), shape
        (n,) for one value per row, else (n, k). threads limits the OpenMP threads of this
        call (default: all cores for batches of 128 rows and more). Releases the GIL."""
        if self._classes is not None and not margin:
            labels = self._labels(self._predict(X, 0, threads))
            return labels[:, None] if self._answer == "label_column" else labels
        return self._predict(X, _lib.PREDICT_MARGIN if margin or self._answer == "margin" else 0, threads)

    def predict_proba(self, X, threads=None):
        """The class probabilities of a model compiled from a classifier estimator, as its predict_proba gives them:
        shape (n, len(classes_)), a binary classifier's two columns too."""
        if self._classes is None:
            raise argument("predict_proba() answers for a model compiled from a classifier estimator (XGBClassifier, "
                           "LGBMClassifier); this one answers as its Booster does: predict()")
        return self._probabilities(self._predict(X, 0, threads))

    def _probabilities(self, values):
        """predict()'s values as a classifier estimator's probabilities: (n, k), a binary model's 1 - p and p."""
        k = len(self._classes)
        if values.ndim == 2 and values.shape[1] == k:
            return values
        if values.ndim == 1 and k == 2:
            return np.stack([1 - values, values], axis=1)
        raise argument(f"the model gives {self.num_outputs()} value{'s' if self.num_outputs() != 1 else ''} a row, "
                       f"not the probabilities of its {k} classes (an objective without them, as multi:softmax)")

    def _labels(self, values):
        """predict()'s values as the estimator's labels: the most probable class (the first where two tie, as
        XGBoost's and LightGBM's estimators choose), or, for one value a row of several classes (XGBoost's
        multi:softmax), the class of that index."""
        if values.ndim == 1 and len(self._classes) > 2:
            return self._classes[values.astype(np.intp)]
        return self._classes[np.argmax(self._probabilities(values), axis=1)]

    def predict_labels(self, X, threads=None):
        """Each row's class label (a classifier with labels, see .labels): a numpy array of them."""
        if self.labels is None:
            raise argument("the model has no class labels (only ONNX classifiers carry them); use predict()")
        index = self._predict(X, _lib.PREDICT_LABEL, threads).astype(np.intp)
        return np.asarray(self.labels)[index]

    def _predict(self, X, flags, threads):
        handle = self._handle
        if handle is None:
            raise argument("the model is closed")
        if type(X) is not np.ndarray:
            X = self._frame_rows(X) if _is_dataframe(X) else self._as_array(X)
        dtype = X.dtype
        if dtype is _F32 or (dtype.char == "f" and dtype.isnative):
            fn = _rt.predict
        elif dtype is _F64 or (dtype.char == "d" and dtype.isnative):
            fn = _rt.predict_f64
        else:
            X = self._as_array(X)
            fn = _rt.predict if X.dtype == _F32 else _rt.predict_f64
        if X.ndim != 2:
            raise argument(f"X has {X.ndim} dimension{'s' if X.ndim != 1 else ''}, expected 2 (rows x "
                           f"{self.num_features} features){'; for one row use X.reshape(1, -1)' if X.ndim == 1 else ''}")
        nrows, ncols = X.shape
        if ncols != self.num_features:
            raise argument(f"X has {ncols} columns, the model needs {self.num_features}")
        if not X.flags.c_contiguous:
            X = np.ascontiguousarray(X)  # grove reads rows: Fortran order and strided views are copied once
        k = 1 if flags & _lib.PREDICT_LABEL else self._outputs[flags & _lib.PREDICT_MARGIN]
        out = np.empty((nrows, k) if k != 1 else nrows, dtype=_F32)
        if nrows == 0:
            return out
        error = _lib.Error()
        rows, values = _address(X), _address(out)
        if threads is None:
            status = fn(handle, rows, nrows, ncols, values, out.size, flags, ctypes.byref(error))
        else:
            status = self._predict_threads(fn, threads, handle, rows, nrows, ncols, values, out.size, flags, error)
        if status != _lib.OK:
            raise from_status(status, error)
        return out

    @staticmethod
    def _predict_threads(fn, threads, handle, rows, nrows, ncols, values, size, flags, error):
        """fn with OpenMP limited to threads in this thread (the limit is per thread; restored after)."""
        if not isinstance(threads, int) or threads < 1:
            raise argument(f"threads={threads!r}: expected a whole number of at least 1")
        gomp = _lib.openmp()
        before = gomp.omp_get_max_threads()
        gomp.omp_set_num_threads(threads)
        try:
            return fn(handle, rows, nrows, ncols, values, size, flags, ctypes.byref(error))
        finally:
            gomp.omp_set_num_threads(before)

    @staticmethod
    def _as_array(X):
        try:
            X = np.asarray(X)
        except (TypeError, ValueError) as exc:
            raise argument(f"X cannot be read as an array of numbers: {exc}") from None
        if X.dtype.char in "fd" and X.dtype.isnative:
            return X
        if X.dtype.kind not in "biuf":
            raise argument(f"X holds {X.dtype} values; grove predicts on numbers (float32 or float64)")
        return X.astype(_F64)

    def column_order(self, columns):
        """The positions in columns (a table's column names) of the model's features, in the model's order;
        None when the model has no feature names (columns are then taken by position).
        GroveArgumentError naming the missing and unexpected columns when they do not match."""
        names = self.feature_names
        columns = [str(c) for c in columns]
        if names is None or columns == names:
            return None
        where = {c: i for i, c in enumerate(columns)}
        missing = [n for n in names if n not in where]
        extra = [c for c in columns if c not in set(names)]
        duplicated = sorted({c for c in columns if columns.count(c) > 1})
        if missing or extra or duplicated:
            parts = []
            if missing:
                parts.append(f"missing {_listed(missing)}")
            if extra:
                parts.append(f"not in the model {_listed(extra)}")
            if duplicated:
                parts.append(f"repeated {_listed(duplicated)}")
            raise argument(f"the table's columns do not match the model's {len(names)} feature names: "
                           + "; ".join(parts))
        return [where[n] for n in names]

    def _frame_rows(self, frame):
        """A DataFrame's values as a 2-D array whose columns are in the model's order."""
        order = self.column_order(frame.columns)
        if order is not None:
            frame = frame.iloc[:, order]
        elif self.feature_names is None and frame.shape[1] != self.num_features:
            raise argument(f"the table has {frame.shape[1]} columns, the model needs {self.num_features}")
        values = frame.to_numpy()  # one common numpy dtype, when the columns have one (the fast way: no dtypes)
        if values.dtype.kind in "biuf":
            return values
        dtypes = list(frame.dtypes)  # nullable, categorical or text columns
        categorical = [i for i, dt in enumerate(dtypes) if dt.name == "category"]
        if categorical:
            return self._category_rows(frame, categorical)
        if any(dt.kind not in "biuf" for dt in dtypes):
            bad = [f"{c} ({dt})" for c, dt in zip(frame.columns, dtypes) if dt.kind not in "biuf"]
            raise argument(f"columns that are not numbers: {_listed(bad, quote=False)}; grove predicts on numbers "
                           "(and on pandas categories where the model holds their lists)")
        return frame.to_numpy(dtype=_F64, na_value=np.nan)

    def _category_rows(self, frame, categorical):
        """A DataFrame with categorical columns (categorical: their positions, in the model's order) as float64 rows:
        each such column's values become their index in the model's list of its categories, matched by value, as
        LightGBM's and XGBoost's predict map them. Never the column's own codes, which depend on the order its
        categories happen to have."""
        names = [str(frame.columns[i]) for i in categorical]
        if self._categories is None:
            raise argument(f"categorical columns {_listed(names)}, but the model holds no lists of their categories "
                           "(LightGBM's pandas_categorical, XGBoost's categories: saved when a model is trained on a "
                           "DataFrame), so their values cannot be matched to what it was trained on")
        by, saved = self._categories[:2]
        if by == "artifact":  # the artifact's lists, as text: numbers where the frame's categories are numbers
            lists = {j: saved.get(j) for j in categorical}
            for j, values in lists.items():
                if values is not None and frame.iloc[:, j].cat.categories.dtype.kind in "biuf":
                    lists[j] = [_number(v) for v in values]
            plain = [str(frame.columns[j]) for j in categorical if lists[j] is None]
            if plain:
                raise argument(f"categorical columns {_listed(plain)}, but the model's features there are not")
        elif by == "codes":  # a category without a list is its own value (scikit-learn's integer categories)
            lists = {j: saved.get(j) for j in categorical}
        elif by == "column":
            if len(categorical) != len(saved):
                raise argument(f"{len(categorical)} categorical column{'s' if len(categorical) != 1 else ''} "
                               f"({_listed(names)}), but the model was trained on {len(saved)}")
            lists = dict(zip(categorical, saved))
        else:
            lists = {j: saved.get(j) for j in categorical}
            plain = [str(frame.columns[j]) for j in categorical if lists[j] is None]
            if plain:
                raise argument(f"categorical columns {_listed(plain)}, but the model's features there are not")
        rows = np.empty(frame.shape, dtype=_F64)
        for j in range(frame.shape[1]):
            column = frame.iloc[:, j]
            if j in lists and lists[j] is None:  # ("codes": a category column of the values themselves)
                rows[:, j] = column.astype(_F64).to_numpy(na_value=np.nan)
            elif j in lists:
                codes = column.cat.set_categories(lists[j]).cat.codes.to_numpy().astype(_F64)
                unseen = (codes < 0) & ~column.isna().to_numpy()
                if (by == "feature" or (by == "artifact" and not self._categories[2])) and unseen.any():
                    # XGBoost (3.2) gives a category it never saw the code of the next one in sorted order, or fails
                    values = sorted({str(v) for v in column[unseen]})
                    raise argument(f"column {str(frame.columns[j])!r} has categories the model was not trained on: "
                                   f"{_listed(values)}; XGBoost does not predict them as missing, and neither does grove")
                rows[:, j] = np.where(codes >= 0, codes, np.nan)  # missing, and for LightGBM a value not in the list
            else:
                if column.dtype.kind not in "biuf":
                    raise argument(f"column {str(frame.columns[j])!r} ({column.dtype}) is not numbers")
                rows[:, j] = column.to_numpy(dtype=_F64, na_value=np.nan)
        return rows

    # -- saving, loading, pickling -----------------------------------------------------------------------------
    def save(self, path):
        """Write the artifact (a shared library for libgrove and `grove predict`) to path."""
        with open(path, "wb") as f:
            f.write(self._artifact)

    @property
    def artifact(self):
        """The artifact's bytes."""
        return self._artifact

    def __reduce__(self):
        if self._source is None:
            return _from_bytes, (self._artifact, "the artifact", self._classes, self._categories, self._answer)
        return _from_pickle, (self._artifact, self._source, self._classes, self._categories, self._answer)

    def __dask_tokenize__(self):
        if self._token is None:
            self._token = hashlib.sha256(self._artifact).hexdigest()
        return ("grove.Model", self._token)

    def close(self):
        """Free the loaded artifact; the model cannot predict after (no other thread may be predicting with it)."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle is not None:
            _rt.free(handle)

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self._handle is None else f"{self.num_features} features"
        outputs = self._outputs[0]
        return f"<grove.Model {state}, {outputs} output{'s' if outputs != 1 else ''}>"


def _listed(items, quote=True, most=10):
    shown = [repr(i) if quote else str(i) for i in items[:most]]
    more = f" and {len(items) - most} more" if len(items) > most else ""
    return ", ".join(shown) + more


def _number(text):
    """A category value kept as text ("10", "2.5") as the number it is, or the text where it is none."""
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() else value


def _from_bytes(artifact, name="the artifact", classes=None, categories=None, answer=None):
    """A Model from an artifact's bytes: written to a file of its own in a private folder, loaded, removed
    (the loaded code stays mapped; a fresh name each time, so that the dynamic loader never mistakes it for
    an artifact it loaded before). Errors name the artifact name instead of that file."""
    global loads_from_bytes
    directory = tempfile.mkdtemp(prefix="grove-")
    path = os.path.join(directory, "model.so")
    try:
        with open(path, "wb") as f:
            f.write(artifact)
        model = Model(path, artifact, classes=classes, categories=categories, answer=answer)
    except GroveError as exc:
        exc.message = exc.message.replace(path, name)
        exc.args = (exc.message,)
        raise
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    loads_from_bytes += 1
    return model


def _from_pickle(artifact, source, classes=None, categories=None, answer=None):
    """A pickled Model: its artifact loaded, or, on a CPU that lacks features the artifact's code uses (compiled with
    cpu="native" on a newer machine), compiled again here from the model it carries, for this CPU."""
    try:
        return _from_bytes(artifact, classes=classes, categories=categories, answer=answer)
    except GroveUnavailableError as exc:
        if "which this CPU lacks" not in exc.message:
            raise
        reason = exc.message
    from .compile import compile as compile_model  # compile.py imports this module
    model_bytes, schedule, options = source
    warnings.warn(f"grove: {reason.replace('the artifact: ', '', 1)}; compiling the model again for this CPU",
                  RuntimeWarning, stacklevel=2)
    if isinstance(model_bytes, bytes):
        directory = tempfile.mkdtemp(prefix="grove-")
        try:
            path = os.path.join(directory, "model")
            with open(path, "wb") as f:
                f.write(model_bytes)
            model = compile_model(path, schedule, cpu="native", **options)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    else:  # an estimator compiled from its arrays (scikit-learn's)
        model = compile_model(model_bytes, schedule, cpu="native", **options)
    model._classes, model._categories, model._answer = classes, categories, answer
    return model


def load(path):
    """Load an artifact written by Model.save, grove.compile or `grove compile`."""
    with open(path, "rb") as f:
        artifact = f.read()
    return _from_bytes(artifact, os.fspath(path))
