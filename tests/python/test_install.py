"""`pip install rt/python` into a fresh virtual environment gives a package that works on its own: the C libraries
copied into it, nothing read from the source tree or the build directory. The wheel (tools/wheel.py) works without
any build tool.

Offline: the fresh environment sees this environment's packages (numpy, and setuptools and wheel to build with)
through a .pth file placed after its own site-packages, and pip runs with --no-index --no-build-isolation."""
import glob
import os
import shlex
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


# What a wheel's libraries may need from the machine: the C library's parts and zlib (auditwheel's base system).
BASE_SYSTEM = ("linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0",
               "librt.so.1", "libz.so.1")


def hiding(paths, then):
    """A command that runs argv `then` with each of paths hidden (an empty folder over a folder, an empty file over a
    file) in a mount namespace of its own, or None where no such namespace can be made (not root)."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode:
        return None
    mounts = [f"mount -t tmpfs none {shlex.quote(p)}" if os.path.isdir(p) else f"mount --bind /dev/null {shlex.quote(p)}"
              for p in paths]
    return ["unshare", "-m", "sh", "-c", " && ".join(mounts + ["exec " + shlex.join(then)])]


def test_wheel_works_without_build_tools(tmp_path):
    """tools/wheel.py's wheel, installed into a fresh venv, compiles and predicts with no C compiler, linker or LLVM
    tool on PATH, and, where a mount namespace can be made, with the repository (source and build), LLVM's libraries
    and the system's OpenMP runtime hidden: everything it uses comes from the wheel or the base system."""
    assert not str(tmp_path).startswith(ROOT + os.sep), "the scratch folder must lie outside the repository"
    builddir = os.path.join(ROOT, os.environ.get("GROVE_BUILDDIR") or "build")
    dist = tmp_path / "dist"
    made = run([sys.executable, os.path.join(ROOT, "tools", "wheel.py"), builddir, str(dist)],
               env={**os.environ, "GROVE_WHEEL_PYTHON": sys.executable}).stdout.strip()
    wheel = os.path.join(os.getcwd(), made) if not os.path.isabs(made) else made
    assert os.path.basename(wheel).startswith("grove_forest-") and "-py3-none-manylinux_" in wheel, wheel
    venv_bin = os.path.dirname(sys.executable)
    show = run([sys.executable, "-m", "auditwheel", "show", wheel],
               env={**os.environ, "PATH": venv_bin + os.pathsep + os.environ["PATH"]}).stdout
    assert "is consistent with" in " ".join(show.split()), show

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    python = str(venv / "bin" / "python")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GROVE_BUILDDIR")}
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    # numpy, the package's one dependency, copied in from this environment (offline)
    import numpy
    here = os.path.dirname(os.path.dirname(numpy.__file__))
    for name in os.listdir(here):
        if name in ("numpy", "numpy.libs") or (name.startswith("numpy-") and name.endswith(".dist-info")):
            shutil.copytree(os.path.join(here, name), os.path.join(site, name))
    run([python, "-m", "pip", "install", "--no-index", "--no-deps", "--disable-pip-version-check", wheel], env=clean)

    # ldd: every library the installed ones need is the wheel's own or the base system's
    installed = [os.path.join(d, f) for d in (os.path.join(site, "grove"), os.path.join(site, "grove_forest.libs"))
                 for f in os.listdir(d) if ".so" in f]
    assert len(installed) >= 5, installed
    for lib in installed:
        for line in run(["ldd", lib]).stdout.splitlines():
            name, _, where = line.strip().partition(" => ")
            name = os.path.basename(name.split()[0])
            assert name in BASE_SYSTEM or where.startswith(site), f"{lib} needs {line.strip()}"

    base = os.path.join(MODELS, "binary_logistic.x3")
    for suffix in (".json", ".rows.csv", ".pred.csv"):
        shutil.copy(base + suffix, tmp_path / ("model" + suffix))
    check = textwrap.dedent(f"""
        import os, shutil, grove, numpy as np
        assert grove.__file__.startswith({site!r}), grove.__file__
        for tool in ("cc", "gcc", "clang", "clang-16", "ld", "ld.lld", "llc-16", "llvm-config-16"):
            assert shutil.which(tool) is None, tool
        rows = np.genfromtxt("model.rows.csv", delimiter=",", dtype=np.float32)
        want = np.genfromtxt("model.pred.csv", delimiter=",")
        model = grove.compile("model.json")
        many = np.tile(rows, (400, 1))  # enough rows for the artifact's parallel loop
        got = model.predict(many)
        assert np.abs(got - np.tile(want, 400)).max() <= 1e-5, np.abs(got - np.tile(want, 400)).max()
        assert np.array_equal(model.predict(many, threads=1), got)  # omp_set_num_threads of the artifacts' libgomp
        maps = {{line.split()[-1] for line in open("/proc/self/maps") if line.split()[-1].startswith("/")}}
        gomp = [m for m in maps if "libgomp" in m]
        assert gomp == [os.path.join(os.path.dirname(grove.__file__), "libgomp.so.1")], gomp
        outside = [m for m in maps if m.startswith(({ROOT!r} + "/", "/usr/lib/llvm"))]
        assert not outside, outside
        print("ok", len(many))
        """)
    env = {"PATH": str(venv / "bin"), "HOME": str(tmp_path), "TMPDIR": str(tmp_path), "OMP_NUM_THREADS": "2",
           "GROVE_CACHE_DIR": str(tmp_path / "cache")}
    argv = [python, "-c", check]
    openmp = {os.path.realpath(line.split(" => ")[-1]) for line in run(["/sbin/ldconfig", "-p"]).stdout.splitlines()
              if line.strip().startswith("libgomp.so.1 ")}
    llvm = [p for p in glob.glob("/usr/lib/llvm-*") if os.path.isdir(p)]
    hidden = hiding([ROOT, *llvm, *sorted(openmp)], ["env", f"PATH={env['PATH']}", *argv])
    p = subprocess.run(hidden or argv, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                       env=env if hidden is None else {**env, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    assert p.returncode == 0 and p.stdout.startswith("ok "), f"{p.stdout}\n{p.stderr}"
