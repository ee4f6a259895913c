"""grove: compile decision forests (XGBoost, LightGBM, CatBoost, scikit-learn, ONNX-ML) into native code and predict
with it.

    import grove
    model = grove.compile(booster)          # or a model file's path, an LGBMModel, an onnx.ModelProto
    p = model.predict(X)                    # numpy float32/float64 rows or a pandas DataFrame
    model.save("model.so"); grove.load("model.so"); pickle.dumps(model)

A thin layer over the C libraries (libgrove, libgrovec) through ctypes: compiling and
predicting run grove's C code, without the GIL. grove.dask.predict scores Dask DataFrames,
grove.spark.predict Spark DataFrames.
"""
from .compile import compile
from .errors import (GroveArgumentError, GroveDeviceError, GroveError, GroveFormatError, GroveIOError, GroveMemoryError,
                     GroveUnavailableError)
from .model import Model, load

__version__ = "0.1.0"
__all__ = ["compile", "load", "Model", "GroveError", "GroveIOError", "GroveFormatError", "GroveArgumentError",
           "GroveUnavailableError", "GroveMemoryError", "GroveDeviceError"]
