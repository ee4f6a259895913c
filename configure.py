#!/usr/bin/env python3
"""Write build.ninja for grove.

    ./configure.py [--llvm-config llvm-config-16] [--cc cc] [--asan] [--debug]
                   [--builddir build] [--no-werror] [--cc-aarch64 aarch64-linux-gnu-gcc]

`PREFIX=/usr/local DESTDIR= ninja install` installs them (tools/install.sh).

Targets: build/grove (the compiler), build/libgrove.a and build/libgrove.so (the
runtime), build/libgrovec.a and build/libgrovec.so (the compiler as a library,
rt/grove_compile.h), build/tests/* (unit tests), and the phony `test`, which runs
tests/run.py. Where the AArch64 cross compiler is found (--cc-aarch64), also
build/aarch64/libgrove.so and build/aarch64/predict: the runtime and a driver that
tests/run.py's aarch64 group runs under qemu-aarch64. Where LLVM has static libraries (not with
--asan), also build/wheel/libgrovec.so, the compiler library of the Python wheel, which the
phony `wheel` packs into build/dist/ (tools/wheel.py).
build.ninja regenerates itself when configure.py changes, with the same arguments.
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))


class Writer:
    """Just enough of a ninja file writer."""

    def __init__(self):
        self.lines = []

    def var(self, name, value):
        self.lines.append(f"{name} = {value}")

    def rule(self, name, command, description, **extra):
        self.lines.append(f"rule {name}")
        self.lines.append(f"  command = {command}")
        self.lines.append(f"  description = {description}")
        for key, value in extra.items():
            self.lines.append(f"  {key} = {value}")
        self.lines.append("")

    def build(self, outputs, rule, inputs=(), implicit=(), order_only=(), **variables):
        line = f"build {' '.join(outputs)}: {rule} {' '.join(inputs)}"
        if implicit:
            line += " | " + " ".join(implicit)
        if order_only:
            line += " || " + " ".join(order_only)
        self.lines.append(line)
        for key, value in variables.items():
            self.lines.append(f"  {key} = {value}")

    def text(self):
        return "\n".join(self.lines) + "\n"


def llvm(config, *args):
    try:
        out = subprocess.run([config, *args], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"configure.py: cannot run {config} {' '.join(args)}: {exc}\n"
                 "install LLVM 16 (bash .ci/setup) or pass --llvm-config")
    return out.split()


SOURCE_DIRS = ["ir", "front", "lower", "target", "rt", "tools", "tests/unit", "tests/fuzz"]
# Built twice, apart from the globs: with the trained cost model compiled from COST_MODEL_JSON, and without.
COST_MODEL_SOURCE = "lower/cost_model.c"
COST_MODEL_JSON = "lower/cost_model.json"
# The parts of LLVM grove uses (llvm-config --libs).
LLVM_COMPONENTS = ["core", "target", "passes", "x86codegen", "x86asmparser", "x86desc", "x86info",
                   "aarch64codegen", "aarch64asmparser", "aarch64desc", "aarch64info", "nvptxcodegen", "nvptxdesc",
                   "nvptxinfo", "amdgpucodegen", "amdgpuasmparser", "amdgpudesc", "amdgpuinfo", "irreader", "linker"]


def sources(*dirs):
    return sorted(f for d in dirs for f in glob.glob(os.path.join(d, "*.c")))


# The runtime (with its GPU back-ends) and the driver of tests/aarch64, cross-compiled for AArch64 (the driver reads
# rows with tools/csv.c and csv_header.c, which need ir/common.c).
AARCH64_RUNTIME = ["rt/runtime.c", "rt/cpu.c", "rt/fork.c", "rt/gpusim.c", "rt/chunks.c", "rt/cuda.c", "rt/hsa.c"]
AARCH64_DRIVER = ["tests/aarch64/predict.c", "tools/csv.c", "tools/csv_header.c", "tools/csv_categories.c", "ir/common.c"]


def abi_version():
    """GROVE_ABI_VERSION of rt/grove.h: the N of the shared libraries' SONAMEs (libgrove.so.N)."""
    with open("rt/grove.h") as f:
        found = re.search(r"^#define GROVE_ABI_VERSION (\d+)$", f.read(), re.M)
    if not found:
        sys.exit("configure.py: rt/grove.h defines no GROVE_ABI_VERSION")
    return found.group(1)


def shared_library(w, rule, name, objects, libs, implicit=()):
    """name (a path ending .so) built by rule as name.N with SONAME its base name.N, and name a link to it."""
    real = f"{name}.{abi_version()}"
    soname = os.path.basename(real)
    w.build([real], rule, objects, implicit=list(implicit), libs=f"-Wl,-soname,{soname} {libs}")
    w.build([name], "symlink", [real], target=soname)
    return [real, name]


def wheel_compiler(w, config, objects):
    """Rules for $builddir/wheel/libgrovec.so, the compiler library of the Python wheel (tools/wheel.py): LLVM and
    libstdc++ linked in statically and hidden, stripped, so that it needs no LLVM installed. The outputs, or none (with
    a note) where LLVM has no static libraries."""
    try:
        libs = subprocess.run([config, "--link-static", "--libs", *LLVM_COMPONENTS], check=True, capture_output=True,
                              text=True).stdout.split()
        system = subprocess.run([config, "--link-static", "--system-libs", *LLVM_COMPONENTS], check=True,
                                capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        print(f"configure.py: {config} has no static libraries: skipping the wheel's compiler library")
        return []
    w.rule("shared_static", "$cc -shared -s -o $out $in $libs", "LINK $out")
    out = "$builddir/wheel/libgrovec.so"
    # --as-needed drops the system libraries that the LLVM parts grove uses do not call (Z3, libxml2)
    w.build([out], "shared_static", objects, implicit=["rt/libgrovec.map"],
            libs=f"-Wl,-soname,libgrovec.so.{abi_version()} -Wl,--version-script=rt/libgrovec.map "
                 f"-Wl,--exclude-libs,ALL -Wl,--gc-sections -L{llvm(config, '--libdir')[0]} {' '.join(libs)} "
                 f"-Wl,-Bstatic -lstdc++ -Wl,-Bdynamic -static-libgcc -Wl,--as-needed {' '.join(system)} -lm")
    return [out]


def aarch64_runtime(w, cross_cc, cflags):
    """Rules for $builddir/aarch64/libgrove.so and $builddir/aarch64/predict, built by cross_cc; the outputs, or
    none (with a note) when cross_cc is not installed: the host build does not need it."""
    if not shutil.which(cross_cc):
        print(f"configure.py: {cross_cc} not found: skipping the AArch64 runtime (install gcc-aarch64-linux-gnu, "
              "e.g. with bash .ci/setup, for the aarch64 tests)")
        return []
    w.var("cc_aarch64", cross_cc)
    w.var("cflags_aarch64", cflags)
    w.rule("cc_aarch64", "$cc_aarch64 -MMD -MF $out.d $cflags_aarch64 -c $in -o $out", "CC $out", depfile="$out.d",
           deps="gcc")
    w.rule("link_aarch64", "$cc_aarch64 -fopenmp -o $out $in $libs", "LINK $out")

    def objects(srcs):
        outs = [f"$builddir/aarch64/obj/{src[:-2]}.o" for src in srcs]
        for src, out in zip(srcs, outs):
            w.build([out], "cc_aarch64", [src])
        return outs

    library = shared_library(w, "link_aarch64", "$builddir/aarch64/libgrove.so", objects(AARCH64_RUNTIME),
                             "-shared -ldl -lm")
    # The driver finds libgrove.so.N beside itself, also under qemu-aarch64.
    w.build(["$builddir/aarch64/predict"], "link_aarch64", objects(AARCH64_DRIVER), implicit=library,
            libs=f"-L$builddir/aarch64 -lgrove -lm '-Wl,-rpath,$$ORIGIN'")
    return [*library, "$builddir/aarch64/predict"]


def model_formats():
    """The formats' names, in the order of the readers' table (front/front.c, formats[])."""
    with open(os.path.join(ROOT, "front", "front.c")) as f:
        table = re.search(r"static const Format formats\[\] = \{(.*?)\n\};", f.read(), re.S)
    return re.findall(r'^\s*\{"([a-z0-9-]+)",', table.group(1), re.M)


# The libFuzzer harnesses: name, source, extra compiler flags. The model harness is built once per format.
FUZZ_HARNESSES = [(f"model-{name}", "tests/fuzz/model.c", f'-DFUZZ_FORMAT=\\"{name}\\"')
                  for name in model_formats()] + [
    ("schedule", "tests/fuzz/schedule.c", ""), ("csv", "tests/fuzz/csv.c", ""), ("csv-header", "tests/fuzz/csv_header.c", ""),
    ("artifact", "tests/fuzz/artifact.c", "")]


def fuzz_harnesses(w, libs):
    """Rules for $builddir/fuzz/NAME, each a libFuzzer program (tools/fuzz.sh runs them); their paths."""
    w.rule("fuzz_link", "$cc $ldflags -fsanitize=fuzzer -o $out $in $libs", "LINK $out")
    outs = []
    for name, src, extra in FUZZ_HARNESSES:
        obj = f"$builddir/obj/fuzz/{name}.o"
        w.build([obj], "cc", [src], extra=extra)
        # csv.c and csv_header.c are the command line's; the others are in the libraries.
        inputs = [obj] + (["$builddir/obj/tools/csv.o", "$builddir/obj/tools/csv_header.o", "$builddir/obj/tools/csv_categories.o"] if name.startswith("csv")
                          else [])
        w.build([f"$builddir/fuzz/{name}"], "fuzz_link", inputs,
                implicit=["$builddir/libgrovec.a", "$builddir/libgrove.a"], libs=libs)
        outs.append(f"$builddir/fuzz/{name}")
    return outs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llvm-config", default=os.environ.get("LLVM_CONFIG", "llvm-config-16"))
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--builddir", default="build")
    ap.add_argument("--output", default="build.ninja", help="the ninja file to write")
    ap.add_argument("--asan", action="store_true", help="build with AddressSanitizer and UBSan")
    ap.add_argument("--fuzz", action="store_true",
                    help="also build the libFuzzer harnesses of tests/fuzz into $builddir/fuzz/ (with --asan; needs --cc clang-16)")
    ap.add_argument("--debug", action="store_true", help="-O0 -g")
    ap.add_argument("--no-werror", action="store_true", help="do not treat warnings as errors")
    ap.add_argument("--cc-aarch64", default=os.environ.get("GROVE_CC_AARCH64", "aarch64-linux-gnu-gcc"),
                    help="the AArch64 cross compiler that builds build/aarch64/ (skipped when not installed)")
    args = ap.parse_args()
    os.chdir(ROOT)

    llvm_include = llvm(args.llvm_config, "--includedir")[0]
    llvm_ldflags = llvm(args.llvm_config, "--ldflags")
    llvm_libs = llvm(args.llvm_config, "--link-shared", "--libs", *LLVM_COMPONENTS)
    llvm_defs = [f for f in llvm(args.llvm_config, "--cflags") if f.startswith("-D") and f != "-D_GNU_SOURCE"]

    warnings = "-Wall -Wextra -Wshadow -Wmissing-prototypes -Wpedantic -Wno-overlength-strings"
    if not args.no_werror:
        warnings += " -Werror"
    opt = "-O0 -g" if args.debug else "-O2 -g"
    if args.fuzz and ("clang" not in os.path.basename(args.cc) or not args.asan):
        sys.exit("configure.py: --fuzz needs --asan and --cc clang-16 (libFuzzer is clang's)")
    sanitize = " -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" if args.asan else ""
    if args.fuzz:  # every object gets the fuzzer's coverage instrumentation; the harnesses link its main
        sanitize += " -fsanitize=fuzzer-no-link"
    b = args.builddir

    w = Writer()
    w.lines.append("# Generated by configure.py; edit that instead.")
    w.var("ninja_required_version", "1.8")
    w.var("builddir", b)
    w.var("cc", args.cc)
    w.var("cflags", f"-std=c11 -D_GNU_SOURCE {opt} {warnings} -I. -isystem {llvm_include} "
          f"{' '.join(llvm_defs)} -fopenmp{sanitize}")
    w.var("ldflags", f"-fopenmp{sanitize}")
    w.var("llvm_libs", " ".join(llvm_ldflags + llvm_libs + [f"-Wl,-rpath,{llvm_ldflags[0][2:]}"]))
    w.lines.append("")
    w.rule("cc", "$cc -MMD -MF $out.d $cflags $extra -c $in -o $out", "CC $out", depfile="$out.d", deps="gcc")
    w.rule("ar", "rm -f $out && ar crs $out $in", "AR $out")
    w.rule("link", "$cc $ldflags -o $out $in $libs", "LINK $out")
    w.rule("shared", "$cc $ldflags -shared -o $out $in $libs", "LINK $out")
    w.rule("symlink", "ln -sfn $target $out", "LN $out")
    w.rule("configure", shlex.join(["python3", "configure.py", *sys.argv[1:]]),
           "CONFIGURE", generator="1")
    w.rule("test", f"python3 tests/run.py --builddir {b}", "TEST", pool="console")
    w.rule("install", "tools/install.sh $builddir", "INSTALL", pool="console")
    w.rule("wheel", "python3 tools/wheel.py $builddir", "WHEEL $builddir/dist", pool="console")
    # The cost model's forest, compiled by the first grove: portable code, no cache, the heuristic's schedule.
    # One thread: it predicts a few hundred rows at a time, and libgrovec then needs no OpenMP runtime.
    w.rule("cost_model", "$builddir/grove0 compile $in --emit obj --prefix grove_cost_model --cpu generic --no-cache "
           "--schedule-text 'tile(batch, b0, b1, 16); interleave(b1)' -o $builddir/gen/cost_model.o", "GROVE $out")

    def objects(srcs, suffix="o", extra="", order_only=(), implicit=()):
        outs = []
        for src in srcs:
            out = f"$builddir/obj/{src[:-2]}.{suffix}"
            w.build([out], "cc", [src], implicit=implicit, order_only=order_only, **({"extra": extra} if extra else {}))
            outs.append(out)
        return outs

    def cost_model(w, tool):
        """The cost model's objects for libgrovec (lower/cost_model.c): lower/cost_model.json compiled by a first
        grove, $builddir/grove0, which is linked without it, or none where the repository holds no trained model."""
        none = objects([COST_MODEL_SOURCE], "none.o", "-fPIC")
        if not os.path.exists(COST_MODEL_JSON):
            return none
        w.build(["$builddir/libgrovec0.a"], "ar", compiler + none)
        w.build(["$builddir/grove0"], "link", tool, implicit=["$builddir/libgrovec0.a", "$builddir/libgrove.a"],
                libs="$builddir/libgrovec0.a $builddir/libgrove.a $llvm_libs -ldl -lm")
        w.build(["$builddir/gen/cost_model.o", "$builddir/gen/cost_model.h"], "cost_model", [COST_MODEL_JSON],
                implicit=["$builddir/grove0"])
        return objects([COST_MODEL_SOURCE], "o", "-fPIC -DWITH_COST_MODEL -I$builddir/gen",
                       implicit=["$builddir/gen/cost_model.h"]) + ["$builddir/gen/cost_model.o"]

    # Position-independent, so that one set of objects makes both libgrovec.a and libgrovec.so.
    compiler = objects([s for s in sources("ir", "lower", "target") if s != COST_MODEL_SOURCE], extra="-fPIC")
    compiler += objects(sources("front"), extra="-fPIC")
    runtime = objects(sources("rt"))
    runtime_pic = objects(sources("rt"), "pic.o", "-fPIC")
    w.build(["$builddir/libgrove.a"], "ar", runtime)
    shared = shared_library(w, "shared", "$builddir/libgrove.so", runtime_pic, "-ldl -lm")
    tool = objects(sources("tools"))
    compiler += cost_model(w, tool)
    w.build(["$builddir/libgrovec.a"], "ar", compiler)
    # libgrovec.so exports the compiler's C entry points (rt/grove_compile.h) and nothing else.
    shared += shared_library(w, "shared", "$builddir/libgrovec.so", compiler, "-Wl,--version-script=rt/libgrovec.map "
                             "$llvm_libs -lm", implicit=["rt/libgrovec.map"])
    wheel = [] if args.asan else wheel_compiler(w, args.llvm_config, compiler)
    libs = "$builddir/libgrovec.a $builddir/libgrove.a $llvm_libs -ldl -lm"
    w.build(["$builddir/grove"], "link", tool, implicit=["$builddir/libgrovec.a", "$builddir/libgrove.a"], libs=libs)

    tests = []
    for src in sources("tests/unit"):
        name = os.path.basename(src)[:-2]
        out = f"$builddir/tests/{name}"
        w.build([out], "link", objects([src]), implicit=["$builddir/libgrovec.a", "$builddir/libgrove.a"], libs=libs)
        tests.append(out)

    # The oom group's programs: grove, and a runtime driver, whose own allocations go through tests/oom/failmalloc.c.
    wrap = "-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc"
    failmalloc = objects(["tests/oom/failmalloc.c"])
    oom = ["$builddir/tests/oom/grove", "$builddir/tests/oom/runtime"]
    w.build([oom[0]], "link", tool + failmalloc, implicit=["$builddir/libgrovec.a", "$builddir/libgrove.a"],
            libs=f"{wrap} {libs}")
    w.build([oom[1]], "link", objects(["tests/oom/runtime.c"]) + failmalloc, implicit=["$builddir/libgrove.a"],
            libs=f"{wrap} $builddir/libgrove.a -ldl -lm")
    tests += oom

    fuzzers = fuzz_harnesses(w, libs) if args.fuzz else []
    cross = aarch64_runtime(w, args.cc_aarch64, f"-std=c11 -D_GNU_SOURCE {opt} {warnings} -I. -fPIC -fopenmp")

    w.lines.append("")
    # The source lists are globbed: a directory's mtime changes when a file is added or removed.
    w.build([args.output], "configure", implicit=["configure.py", *SOURCE_DIRS])
    w.build(["all"], "phony", ["$builddir/grove", "$builddir/libgrove.a", *shared, "$builddir/libgrovec.a", *tests,
                               *cross, *fuzzers, *wheel])
    w.build(["test"], "test", implicit=["all"])
    w.build(["install"], "install", implicit=["all"])
    if wheel:
        w.build(["wheel"], "wheel", implicit=["all"])
    w.lines.append("default all")
    with open(args.output, "w") as f:
        f.write(w.text())
    os.makedirs(b, exist_ok=True)
    # How this build was configured, for tests/run.py (a sanitized build links test programs with its compiler and flags).
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump({"cc": args.cc, "asan": args.asan, "fuzz": args.fuzz}, f)
        f.write("\n")
    # What a program linking the static libgrovec.a needs besides it (grove-compiler.pc's Libs.private).
    with open(os.path.join(b, "libgrovec.deps"), "w") as f:
        f.write(" ".join(llvm_ldflags + llvm_libs + ["-lm"]) + "\n")
    print(f"configure.py: wrote {args.output} (builddir {b}{', asan' if args.asan else ''})")


if __name__ == "__main__":
    main()
