"""The C libraries under the package: libgrove (grove.h) and libgrovec (grove_compile.h), through ctypes.

Where they are found, first match wins:
  1. $GROVE_BUILDDIR (a grove build directory; the tests point it at the build under test),
  2. the package's own folder (an installed package: `pip install rt/python` copies them there),
  3. the build/ of the source tree the package sits in (rt/python/grove -> build/).

ctypes.CDLL releases the GIL for the length of every call, so predictions from several
Python threads run at once.
"""
import ctypes
import os

LIBRARIES = ("libgrove.so", "libgrovec.so")

# GroveStatus (rt/grove.h)
OK, ERROR_IO, ERROR_FORMAT, ERROR_ARGUMENT, ERROR_UNAVAILABLE, ERROR_MEMORY, ERROR_DEVICE = range(7)
# flags of grove_predict
PREDICT_MARGIN = 1
PREDICT_LABEL = 2


class Error(ctypes.Structure):
    """GroveError."""
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 512)]


class CompileOptions(ctypes.Structure):
    """GroveCompileOptions, field for field (tests/python/test_api.py checks this against rt/grove_compile.h)."""
    _fields_ = [
        ("format", ctypes.c_char_p),
        ("schedule", ctypes.c_char_p),
        ("representation", ctypes.c_char_p),
        ("emit", ctypes.c_char_p),
        ("cpu", ctypes.c_char_p),
        ("target", ctypes.c_char_p),
        ("prefix", ctypes.c_char_p),
        ("opt_level", ctypes.c_int),
        ("interleave", ctypes.c_uint),
        ("interleave_trees", ctypes.c_uint),
        ("tile_trees", ctypes.c_uint),
        ("limits", ctypes.c_char_p),
        ("cache_dir", ctypes.c_char_p),
        ("sizes", ctypes.c_char_p),
    ]


class ForestOptions(ctypes.Structure):
    """GroveForestOptions, field for field."""
    _fields_ = [
        ("num_features", ctypes.c_uint),
        ("num_outputs", ctypes.c_uint),
        ("transform", ctypes.c_char_p),
        ("base_score", ctypes.POINTER(ctypes.c_double)),
        ("average", ctypes.c_int),
        ("binary", ctypes.c_int),
        ("double_thresholds", ctypes.c_int),
        ("rows_float", ctypes.c_int),
        ("category_rule", ctypes.c_char_p),
    ]


class TreeArrays(ctypes.Structure):
    """GroveTreeArrays, field for field (the arrays as addresses)."""
    _fields_ = [
        ("num_nodes", ctypes.c_uint),
        ("left", ctypes.c_void_p),
        ("right", ctypes.c_void_p),
        ("feature", ctypes.c_void_p),
        ("threshold", ctypes.c_void_p),
        ("missing_left", ctypes.c_void_p),
        ("value", ctypes.c_void_p),
        ("category_set", ctypes.c_void_p),
        ("output", ctypes.c_uint),
        ("width", ctypes.c_uint),
    ]


def library_dir():
    """The folder holding libgrove.so and libgrovec.so; ImportError saying what to do when there is none."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("GROVE_BUILDDIR")
    if env:
        if all(os.path.isfile(os.path.join(env, name)) for name in LIBRARIES):
            return os.path.abspath(env)
        raise ImportError(f"grove: GROVE_BUILDDIR={env} has no {' and '.join(LIBRARIES)}: build grove there "
                          "(./configure.py && ninja) or unset GROVE_BUILDDIR")
    candidates = [here, os.path.join(here, "..", "..", "..", "build")]
    for directory in candidates:
        if all(os.path.isfile(os.path.join(directory, name)) for name in LIBRARIES):
            return os.path.abspath(directory)
    raise ImportError(f"grove: {' and '.join(LIBRARIES)} not found beside the package ({here}) nor in the source "
                      "tree's build/: run the README's set-up (bash .ci/setup && ./configure.py && ninja), then "
                      "`pip install rt/python`, or set GROVE_BUILDDIR to a grove build directory")


def _declare(lib, name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = argtypes
    return fn


class Runtime:
    """libgrove's functions with their C types."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        p, size, cp = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p
        err = ctypes.POINTER(Error)
        self.path = path
        self.load = _declare(lib, "grove_load", ctypes.c_int, cp, ctypes.POINTER(p), err)
        self.free = _declare(lib, "grove_free", None, p)
        self.num_features = _declare(lib, "grove_num_features", size, p)
        self.num_outputs = _declare(lib, "grove_num_outputs", size, p, ctypes.c_uint)
        self.num_labels = _declare(lib, "grove_num_labels", size, p)
        self.label = _declare(lib, "grove_label", ctypes.c_int, p, size, ctypes.POINTER(ctypes.c_longlong),
                              ctypes.POINTER(cp), err)
        self.feature_name = _declare(lib, "grove_feature_name", cp, p, size)
        self.category_values = _declare(lib, "grove_category_values", ctypes.POINTER(cp), p, size, ctypes.POINTER(size))
        self.unseen_category_missing = _declare(lib, "grove_unseen_category_missing", ctypes.c_int, p)
        # rows and out go as addresses (int): numpy hands them over without building ctypes objects
        self.predict = _declare(lib, "grove_predict", ctypes.c_int, p, p, size, size, p, size, ctypes.c_uint, err)
        self.predict_f64 = _declare(lib, "grove_predict_f64", ctypes.c_int, p, p, size, size, p, size,
                                    ctypes.c_uint, err)
        self.status_name = _declare(lib, "grove_status_name", cp, ctypes.c_int)
        self.device = _declare(lib, "grove_device", cp, p)


class Compiler:
    """libgrovec's functions with their C types (loaded on the first compile: it brings in LLVM)."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        self.path = path
        self.options_init = _declare(lib, "grove_compile_options_init", None, ctypes.POINTER(CompileOptions))
        self.compile_file = _declare(lib, "grove_compile_file", ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                     ctypes.POINTER(CompileOptions), ctypes.POINTER(Error))
        self.forest_new = _declare(lib, "grove_forest_new", ctypes.c_void_p, ctypes.POINTER(ForestOptions),
                                   ctypes.POINTER(Error))
        self.forest_add_tree = _declare(lib, "grove_forest_add_tree", ctypes.c_int, ctypes.c_void_p,
                                        ctypes.POINTER(TreeArrays), ctypes.POINTER(Error))
        self.forest_add_set = _declare(lib, "grove_forest_add_set", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                       ctypes.c_uint, ctypes.POINTER(ctypes.c_longlong), ctypes.POINTER(Error))
        self.compile_forest = _declare(lib, "grove_compile_forest", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                                       ctypes.POINTER(CompileOptions), ctypes.POINTER(Error))
        self.forest_free = _declare(lib, "grove_forest_free", None, ctypes.c_void_p)


_DIR = library_dir()


def _bundled_openmp():
    """The wheel's GNU OpenMP runtime (tools/wheel.py), loaded unless the process has a libgomp.so.1 already. Then it
    is the libgomp.so.1 that host artifacts name: the dynamic loader finds a needed library among those loaded by its
    SONAME, the first loaded first, as dlopen("libgomp.so.1") does (openmp())."""
    path = os.path.join(_DIR, "libgomp.so.1")
    if not os.path.isfile(path):
        return None
    try:
        return ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD)
    except OSError:
        return ctypes.CDLL(path)


_bundled = _bundled_openmp()
_gomp = None
runtime = Runtime(os.path.join(_DIR, "libgrove.so"))
_compiler = None


def compiler():
    """libgrovec, loaded once."""
    global _compiler
    if _compiler is None:
        _compiler = Compiler(os.path.join(_DIR, "libgrovec.so"))
    return _compiler


def openmp():
    """The OpenMP runtime artifacts use (GNU's libgomp.so.1: the first loaded, the wheel's or the system's; loaded
    once), for omp_set_num_threads."""
    global _gomp
    if _gomp is None:
        lib = ctypes.CDLL("libgomp.so.1")
        _declare(lib, "omp_set_num_threads", None, ctypes.c_int)
        _declare(lib, "omp_get_max_threads", ctypes.c_int)
        _gomp = lib
    return _gomp
