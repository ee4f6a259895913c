#!/bin/sh
# Install grove from a build directory: `ninja install` runs this.
#
#   [PREFIX=/usr/local] [DESTDIR=] tools/install.sh [BUILDDIR]
#
# Installs bin/grove, lib/libgrove.{so,a} (the runtime), lib/libgrovec.{so,a} (the
# compiler as a library), include/grove.h, grove.hpp (C++) and grove_compile.h, and the
# pkg-config files lib/pkgconfig/grove.pc and grove-compiler.pc, under $DESTDIR$PREFIX.
# The shared libraries are lib/libNAME.so.N (their SONAME; N is grove.h's
# GROVE_ABI_VERSION) with lib/libNAME.so a link to it. Where the build has the AArch64
# runtime, it goes beside them in the multiarch directory, lib/aarch64-linux-gnu/. The
# .pc files name $PREFIX (DESTDIR is for staging and packaging).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
prefix=${PREFIX:-/usr/local}
root=${DESTDIR:-}$prefix
version=$(sed -n 's/^#define GROVE_VERSION "\(.*\)"/\1/p' rt/grove.h)
abi=$(sed -n 's/^#define GROVE_ABI_VERSION \([0-9]*\)$/\1/p' rt/grove.h)
case $prefix in /*) ;; *) echo "install.sh: PREFIX must be an absolute path, not '$prefix'" >&2; exit 1 ;; esac
for f in grove libgrove.so.$abi libgrove.a libgrovec.so.$abi libgrovec.a libgrovec.deps; do
	[ -f "$build/$f" ] || { echo "install.sh: $build/$f is not built (run ./configure.py && ninja)" >&2; exit 1; }
done

install -d "$root/bin" "$root/lib/pkgconfig" "$root/include"
install -m 755 "$build/grove" "$root/bin/grove"
# libNAME.so.N from DIR into TARGET, and libNAME.so, the name programs link with, a link to it.
shared() {
	install -m 755 "$2/$1.so.$abi" "$3/"
	ln -sfn "$1.so.$abi" "$3/$1.so"
}
shared libgrove "$build" "$root/lib"
shared libgrovec "$build" "$root/lib"
if [ -f "$build/aarch64/libgrove.so.$abi" ]; then
	install -d "$root/lib/aarch64-linux-gnu"
	shared libgrove "$build/aarch64" "$root/lib/aarch64-linux-gnu"
fi
install -m 644 "$build/libgrove.a" "$build/libgrovec.a" "$root/lib/"
install -m 644 rt/grove.h rt/grove.hpp rt/grove_compile.h "$root/include/"

# What the static compiler library needs (LLVM), as configure.py found it.
private=$(cat "$build/libgrovec.deps")
cat > "$root/lib/pkgconfig/grove.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: grove
Description: Load and run decision-forest models compiled by grove
Version: $version
Libs: -L\${libdir} -lgrove
Libs.private: -ldl -lm
Cflags: -I\${includedir}
PC
cat > "$root/lib/pkgconfig/grove-compiler.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: grove-compiler
Description: Compile decision-forest models into grove artifacts in-process
Version: $version
Requires: grove = $version
Libs: -L\${libdir} -lgrovec
Libs.private: $private
Cflags: -I\${includedir}
PC
echo "installed grove $version into $root"
