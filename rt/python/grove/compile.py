"""grove.compile: a model (a file, or a training library's object) to a loaded grove.Model, in-process through
libgrovec's grove_compile_file."""
import ctypes
import json
import os
import sys
import tempfile

from . import _lib, _sklearn
from .errors import argument, check
from .model import Model

# compile()'s keyword options: GroveCompileOptions fields and what each takes
_TEXT_OPTIONS = ("format", "representation", "target", "limits", "cache_dir", "sizes")
_NUMBER_OPTIONS = ("opt_level", "interleave", "interleave_trees", "tile_trees")


def _library_model(model, directory):
    """model (an object of a training library or onnx) written into directory as a file grove reads; None for
    anything else. Only libraries the caller already imported are looked at."""
    xgboost = sys.modules.get("xgboost")
    if xgboost is not None and isinstance(model, (xgboost.Booster, xgboost.XGBModel)):
        booster = model if isinstance(model, xgboost.Booster) else model.get_booster()
        best = None if isinstance(model, xgboost.Booster) else getattr(model, "best_iteration", None)
        if best is not None:  # an estimator trained with early stopping predicts with the rounds up to its best
            booster = booster[: best + 1]
        path = os.path.join(directory, "model.ubj")
        booster.save_model(path)  # UBJSON: exact, and XGBoost's own format since 2.0
        return path
    lightgbm = sys.modules.get("lightgbm")
    if lightgbm is not None and isinstance(model, (lightgbm.Booster, lightgbm.LGBMModel)):
        booster = model if isinstance(model, lightgbm.Booster) else model.booster_
        path = os.path.join(directory, "model.txt")
        with open(path, "w") as f:
            f.write(booster.model_to_string())  # the iterations Booster.predict uses (best_iteration, if any)
        return path
    catboost = sys.modules.get("catboost")
    if catboost is not None and isinstance(model, catboost.CatBoost):
        path = os.path.join(directory, "model.json")
        model.save_model(path, format="json")  # its JSON: exact, where its ONNX export rounds to float32
        return path
    onnx = sys.modules.get("onnx")
    if onnx is not None and isinstance(model, onnx.ModelProto):
        path = os.path.join(directory, "model.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        return path
    return None


def _classes(model):
    """The classes of a scikit-learn-style classifier of XGBoost, LightGBM or CatBoost (a numpy array), whose answers
    the compiled Model gives; None for anything else (a Booster, a regressor, a file: the Model answers as the Booster
    does)."""
    xgboost, lightgbm, catboost = (sys.modules.get(m) for m in ("xgboost", "lightgbm", "catboost"))
    classifiers = tuple(c for c in (getattr(xgboost, "XGBClassifier", None), getattr(lightgbm, "LGBMClassifier", None),
                                    getattr(catboost, "CatBoostClassifier", None)) if c is not None)
    if not classifiers or not isinstance(model, classifiers) or getattr(model, "classes_", None) is None:
        return None
    import numpy as np
    return np.asarray(model.classes_)


def _answer(model):
    """How the Model answers predict() where model's library departs from the rule (Model's answer): catboost's own
    CatBoost object gives raw margins, a CatBoostClassifier of several classes its labels as a column; else None."""
    catboost = sys.modules.get("catboost")
    if catboost is None or not isinstance(model, catboost.CatBoost):
        return None
    if isinstance(model, catboost.CatBoostClassifier):
        return "label_column" if len(model.classes_) > 2 else None
    return None if isinstance(model, catboost.CatBoostRegressor) else "margin"


def _pandas_categories(model_bytes):
    """LightGBM's pandas_categorical from a model text's bytes: the categories of each categorical column the model was
    trained on (a pandas DataFrame), in the columns' order; None where the model has none (or is not LightGBM's)."""
    at = model_bytes.rfind(b"\npandas_categorical:")
    if at < 0:
        return None
    line = model_bytes[at + len(b"\npandas_categorical:"):].split(b"\n", 1)[0]
    try:
        categories = json.loads(line)
    except ValueError:
        raise argument("the model's pandas_categorical line is not JSON") from None
    if categories is not None and not (isinstance(categories, list) and all(isinstance(c, list) for c in categories)):
        raise argument("the model's pandas_categorical is not a list of category lists")
    return categories or None


def _find(tree, key):
    """The first value of key in the dicts of tree (parsed JSON), depth first; None where there is none."""
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        tree = list(tree.values())
    for item in tree if isinstance(tree, list) else ():
        found = _find(item, key) if isinstance(item, (dict, list)) else None
        if found is not None:
            return found
    return None


def _xgboost_categories(model, path, model_bytes):
    """XGBoost's category lists by feature index ({feature: categories}), which it saves with a model trained on a
    DataFrame with enable_categorical (the "cats" of its JSON: strings as UTF-8 bytes cut at offsets, or numbers);
    None where the model holds none."""
    xgboost = sys.modules.get("xgboost")
    if xgboost is not None and isinstance(model, (xgboost.Booster, xgboost.XGBModel)):
        booster = model if isinstance(model, xgboost.Booster) else model.get_booster()
        if "c" not in (booster.feature_types or []):
            return None
        text = booster.save_raw("json")
    elif b"cats" not in model_bytes:
        return None
    else:
        try:
            text = model_bytes if model_bytes[:64].lstrip()[:1] == b"{" and b'"cats"' in model_bytes else \
                xgboost.Booster(model_file=os.fspath(path)).save_raw("json")  # UBJSON: XGBoost reads it for us
        except Exception:  # not XGBoost's (or xgboost not imported): no lists; categorical columns are refused
            return None
    enc = _find(_find(json.loads(text), "cats"), "enc")
    if not isinstance(enc, list):
        return None
    lists = {}
    for feature, entry in enumerate(enc):
        values = entry.get("values") if isinstance(entry, dict) else None
        if not values:
            continue
        if "type" in entry:  # numbers
            lists[feature] = list(values)
        else:
            offsets, raw = entry.get("offsets") or [], bytes(values)
            lists[feature] = [raw[a:b].decode("utf-8") for a, b in zip(offsets, offsets[1:])]
    return lists or None


def _categories(model, path, model_bytes):
    """The category lists of the pandas categorical columns model was trained on: ("column", [categories of each
    categorical column, in order]) for LightGBM, ("feature", {feature index: categories}) for XGBoost; or None."""
    lists = _pandas_categories(model_bytes)
    if lists:
        return ("column", lists)
    lists = _xgboost_categories(model, path, model_bytes)
    return ("feature", lists) if lists else None


def _options(schedule, cpu, options):
    """GroveCompileOptions from compile()'s arguments, and the byte strings they point to (kept alive)."""
    o = _lib.CompileOptions()
    _lib.compiler().options_init(ctypes.byref(o))
    keep = []

    def text(field, value):
        if not isinstance(value, str):
            raise argument(f"{field}={value!r}: expected a string")
        keep.append(value.encode())
        setattr(o, field, keep[-1])

    unknown = sorted(set(options) - set(_TEXT_OPTIONS) - set(_NUMBER_OPTIONS))
    if unknown:
        raise TypeError(f"compile() got unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                        f"(it takes schedule, cpu, {', '.join(_TEXT_OPTIONS + _NUMBER_OPTIONS)})")
    if schedule is not None:
        if isinstance(schedule, os.PathLike):
            with open(schedule) as f:
                schedule = f.read()
        text("schedule", schedule)
    if cpu is not None:
        text("cpu", cpu)
    sizes = options.get("sizes")
    if isinstance(sizes, dict):  # {"ROWS_PER_TB": 32} as grove compile's -D ROWS_PER_TB=32
        for name, value in sizes.items():
            if not isinstance(name, str) or "," in name or "=" in name or isinstance(value, bool) or not isinstance(value, int):
                raise argument(f"sizes: {name!r}: {value!r}: expected a name and a whole number")
        options = dict(options, sizes=",".join(f"{name}={value}" for name, value in sizes.items()))
    for field in _TEXT_OPTIONS:
        if options.get(field) is not None:
            text(field, options[field])
    for field in _NUMBER_OPTIONS:
        value = options.get(field)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**31:
            raise argument(f"{field}={value!r}: expected a whole number from 0")
        setattr(o, field, value)
    return o, keep


def compile(model, schedule=None, cpu="native", **options):
    """Compile model into a loaded grove.Model.

    model: a path (str or os.PathLike) to a model file grove reads (XGBoost JSON/UBJSON,
    LightGBM text, ONNX, CatBoost JSON), an xgboost.Booster or XGBModel, a lightgbm.Booster
    or LGBMModel, a catboost model (CatBoost, CatBoostClassifier, CatBoostRegressor), a fitted
    scikit-learn tree ensemble (DecisionTree*, ExtraTree*, RandomForest*, ExtraTrees*,
    GradientBoosting*: read from its arrays, rows cast to float32 as scikit-learn casts them),
    or an onnx.ModelProto. The Model answers as what it was compiled from: a classifier estimator
    (XGBClassifier, XGBRFClassifier, LGBMClassifier, CatBoostClassifier, scikit-learn's) with its labels from predict()
    and its probabilities from predict_proba(), in the estimator's shapes; a Booster, a
    regressor or a file with the Booster's predictions from predict(). It keeps the
    category lists of the pandas categorical columns the model was trained on (LightGBM's
    pandas_categorical, XGBoost's categories) to map a DataFrame's categories by value.
    schedule: a schedule in grove's scheduling language (text, or an os.PathLike of a file
    holding one); None lets grove choose. cpu: "native" (this
    machine), "x86-64", "x86-64-v3", or an LLVM CPU name; compile for the oldest CPU that
    will run the model when it travels (pickled to other machines). options:
    representation (as `grove compile --representation`), opt_level (0-3), interleave, interleave_trees,
    tile_trees (as `grove compile`'s options), format (to force a reader), limits
    ("features=N,trees=N,...": the sizes of model accepted), target (a triple; the
    Model loads only this host's architecture: cross-compile with `grove compile
    --target`), cache_dir (the code cache, where models of one shape share their
    optimised code; default $GROVE_CACHE_DIR, else ~/.cache/grove; "" for none), sizes (the sizes a
    schedule's arguments may name besides N_t, N_f and N_c: {"ROWS_PER_TB": 32} or
    "ROWS_PER_TB=32,TREES_PER_TB=4", as `grove compile -D`). Errors
    raise grove.GroveError subclasses with grove's message."""
    with tempfile.TemporaryDirectory(prefix="grove-compile-") as directory:
        if isinstance(schedule, os.PathLike):
            with open(schedule) as f:
                schedule = f.read()
        out = os.path.join(directory, "model.so")
        if _sklearn.is_estimator(model):  # from its fitted arrays; pickles carry the estimator itself
            o, keep = _options(schedule, cpu, options)
            classes, categories = _sklearn.compile_estimator(model, os.fsencode(out), o)
            source, answer = (model, schedule, options), None
        else:
            path = _library_model(model, directory)
            if path is None:
                if not isinstance(model, (str, bytes, os.PathLike)):
                    raise TypeError(f"grove.compile: cannot compile a {type(model).__module__}."
                                    f"{type(model).__qualname__}: expected a model file's path, an xgboost or "
                                    "lightgbm Booster or scikit-learn model, a catboost model, or an onnx.ModelProto")
                path = model
            o, keep = _options(schedule, cpu, options)
            error = _lib.Error()
            check(_lib.compiler().compile_file(os.fsencode(path), os.fsencode(out), ctypes.byref(o),
                                               ctypes.byref(error)), error)
            with open(path, "rb") as f:  # carried by pickles: a machine whose CPU cannot run the code compiles it again
                source = (f.read(), schedule, options)
            classes, categories, answer = _classes(model), _categories(model, path, source[0]), _answer(model)
        del keep
        with open(out, "rb") as f:
            artifact = f.read()
        # the folder's name is fresh, so the loader cannot take this artifact for one loaded before
        return Model(out, artifact, source, classes, categories, answer)
