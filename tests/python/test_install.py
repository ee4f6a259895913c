"""`pip install rt/python` into a fresh virtual environment gives a package that works on its own: the C libraries
copied into it, nothing read from the source tree or the build directory.

Offline: the fresh environment sees this environment's packages (numpy, and setuptools and wheel to build with)
through a .pth file placed after its own site-packages, and pip runs with --no-index --no-build-isolation."""
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap

import pytest

from conftest import MODELS, ROOT


def run(argv, **kwargs):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kwargs)
    assert p.returncode == 0, f"{' '.join(argv)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    return p


def test_pip_install_into_a_fresh_venv(tmp_path):
    builddir = os.path.join(ROOT, os.environ.get("GROVE_BUILDDIR") or "build")  # absolute: pip builds elsewhere
    venv = tmp_path / "venv"
    # sys.executable may be a venv's python: venv makes the new one from the base interpreter
    run([sys.executable, "-m", "venv", str(venv)])
    python = str(venv / "bin" / "python")
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    with open(os.path.join(site, "zz_build_venv.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    source = tmp_path / "python"  # a copy, so that the build leaves nothing in rt/python
    shutil.copytree(os.path.join(ROOT, "rt", "python"), source, ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                                                             "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GROVE_BUILDDIR")}
    p = subprocess.run([python, "-m", "pip", "install", "--no-index", "--no-build-isolation",
                        "--disable-pip-version-check", str(source)], capture_output=True, text=True, timeout=300,
                       env={**env, "GROVE_BUILDDIR": builddir})
    assert p.returncode == 0, f"pip install failed:\n{p.stdout}\n{p.stderr}"
    installed = os.path.join(site, "grove")
    assert sorted(f for f in os.listdir(installed) if f.endswith(".so")) == ["libgrove.so", "libgrovec.so"]
    check = textwrap.dedent(f"""
        import os, grove, numpy as np
        assert grove.__file__.startswith({site!r}), grove.__file__
        from grove import _lib
        assert os.path.dirname(_lib.runtime.path) == os.path.dirname(grove.__file__), _lib.runtime.path
        base = {os.path.join(MODELS, "binary_logistic.x3")!r}
        rows = np.genfromtxt(base + ".rows.csv", delimiter=",", dtype=np.float32)
        want = np.genfromtxt(base + ".pred.csv", delimiter=",")
        got = grove.compile(base + ".json").predict(rows)
        assert np.abs(got - want).max() <= 1e-5, np.abs(got - want).max()
        print("ok", len(rows))
        """)
    # from another folder, without PYTHONPATH or GROVE_BUILDDIR: only the installed package can answer
    p = run([python, "-c", check], cwd=tmp_path, env=env)
    assert p.stdout.startswith("ok ")


def test_install_without_a_build_says_what_to_do(tmp_path):
    """setup.py's build hook refuses, naming the set-up, when the libraries are not built."""
    p = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path / "lib")],
                       cwd=os.path.join(ROOT, "rt", "python"), capture_output=True, text=True, timeout=120,
                       env={**os.environ, "GROVE_BUILDDIR": str(tmp_path)})
    assert p.returncode != 0
    assert "libgrove.so, libgrovec.so not found in" in p.stderr and "./configure.py && ninja" in p.stderr
