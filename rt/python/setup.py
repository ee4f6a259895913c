"""Build hook: copy libgrove.so and libgrovec.so from a grove build directory into the package, and
libgomp.so.1 where that directory has one (tools/wheel.py stages the wheel's libraries so).

The build directory is $GROVE_BUILDDIR, or the build/ of the source tree this file sits
in (rt/python/../../build). The package wraps those libraries (ctypes) and carries no
second implementation, so they must be built first: bash .ci/setup && ./configure.py &&
ninja, from the repository root.
"""
import os
import shutil

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools before 70.1 (an install from the source tree by an old pip): the default tag
    bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARIES = ("libgrove.so", "libgrovec.so")
OPTIONAL = ("libgomp.so.1",)  # the OpenMP runtime for artifacts, which grove/_lib.py loads from the package first


def build_directory():
    directory = os.environ.get("GROVE_BUILDDIR") or os.path.join(HERE, "..", "..", "build")
    missing = [name for name in LIBRARIES if not os.path.isfile(os.path.join(directory, name))]
    if missing:
        raise SystemExit(f"grove: {', '.join(missing)} not found in {os.path.abspath(directory)}: build grove first "
                         "(from the repository root: bash .ci/setup && ./configure.py && ninja), or set "
                         "GROVE_BUILDDIR to a grove build directory (an absolute path: pip runs this hook in the "
                         "package's folder)")
    return directory


class BuildWithLibraries(build_py):
    """build_py, then the C libraries beside the package's modules."""

    def run(self):
        super().run()
        source = build_directory()
        target = os.path.join(self.build_lib, "grove")
        os.makedirs(target, exist_ok=True)
        for name in LIBRARIES + OPTIONAL:
            if name in LIBRARIES or os.path.isfile(os.path.join(source, name)):
                shutil.copy2(os.path.join(source, name), os.path.join(target, name))


class BinaryDistribution(Distribution):
    """The wheel holds shared libraries: tag it for this platform, not as pure Python."""

    def has_ext_modules(self):
        return True


commands = {"build_py": BuildWithLibraries}
if bdist_wheel is not None:
    class AnyPythonWheel(bdist_wheel):
        """The libraries are loaded through ctypes, not as extension modules: one wheel serves every Python 3."""

        def get_tag(self):
            return ("py3", "none", super().get_tag()[2])

    commands["bdist_wheel"] = AnyPythonWheel
setup(cmdclass=commands, distclass=BinaryDistribution)
