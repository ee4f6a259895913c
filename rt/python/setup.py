"""Build hook: copy libgrove.so and libgrovec.so from a grove build directory into the package.

The build directory is $GROVE_BUILDDIR, or the build/ of the source tree this file sits
in (rt/python/../../build). The package wraps those libraries (ctypes) and carries no
second implementation, so they must be built first: bash .ci/setup && ./configure.py &&
ninja, from the repository root.
"""
import os
import shutil

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARIES = ("libgrove.so", "libgrovec.so")


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
        for name in LIBRARIES:
            shutil.copy2(os.path.join(source, name), os.path.join(target, name))


class BinaryDistribution(Distribution):
    """The wheel holds shared libraries: tag it for this platform, not as pure Python."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibraries}, distclass=BinaryDistribution)
