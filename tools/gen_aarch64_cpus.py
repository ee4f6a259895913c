#!/usr/bin/env python3
"""Writes target/aarch64_cpus.h: the AArch64 CPUs LLVM 16 knows and, for each, the features its code may use that
grove records in artifacts for grove_load to check (rt/cpu.c, by the kernel's HWCAP bits).

    python3 tools/gen_aarch64_cpus.py > target/aarch64_cpus.h

The names come from `llc-16 -march=aarch64 -mcpu=help`. A CPU has a feature when LLVM 16's backend, compiling for
it, selects the feature's instruction for a probe (PROBES): the backend's processor definitions, with what their
architecture versions imply, are what grove's code generator uses (clang's target parser disagrees with them for
some CPUs: saphira is v8.4-a in the backend, v8.3-a in clang).

Recorded are only the extensions whose instructions LLVM 16 may select for grove's code, which uses atomics
(atomicrmw) besides arithmetic and vectors: fp-armv8, neon, fullfp16, lse, rcpc and sve by instruction selection
from ordinary IR; rdm, dotprod, complxnum and sve2 by patterns of the vectorisers and the DAG combiner (their
probes are intrinsics, which select only with the feature). The others are not: those LLVM uses only for
intrinsics or function attributes grove never emits (crc, aes, sha2, sha3, sm4, fp16fml, bf16, i8mm, rand, mte,
pauth, bti, sb, ssbs, jsconv, fptoint, flagm) would refuse code on chips that lack an optional extension the code
never uses (the Raspberry Pi 4's Cortex-A72 has no crypto); lse2 and rcpc-immo change only how 128-bit and offset
acquire atomics lower (grove emits neither); ras and spe are the system's.
"""
import concurrent.futures
import re
import subprocess

# Feature: (IR of a function @f, an instruction its assembly has only when the CPU has the feature).
PROBES = {
    "fp-armv8": ("define float @f(float %a, float %b) {\n %r = fadd float %a, %b\n ret float %r\n}", r"fadd\ts0"),
    "neon": ("define <4 x float> @f(<4 x float> %a, <4 x float> %b) {\n %r = fadd <4 x float> %a, %b\n"
             " ret <4 x float> %r\n}", r"fadd\tv0\.4s"),
    "fullfp16": ("define half @f(half %a, half %b) {\n %r = fadd half %a, %b\n ret half %r\n}", r"fadd\th0"),
    "lse": ("define i32 @f(ptr %p) {\n %r = atomicrmw add ptr %p, i32 1 monotonic\n ret i32 %r\n}", r"ldadd"),
    "rdm": ("declare <4 x i32> @llvm.aarch64.neon.sqrdmlah.v4i32(<4 x i32>, <4 x i32>, <4 x i32>)\n"
            "define <4 x i32> @f(<4 x i32> %a, <4 x i32> %b, <4 x i32> %c) {\n"
            " %r = call <4 x i32> @llvm.aarch64.neon.sqrdmlah.v4i32(<4 x i32> %a, <4 x i32> %b, <4 x i32> %c)\n"
            " ret <4 x i32> %r\n}", r"sqrdmlah"),
    "rcpc": ("define i32 @f(ptr %p) {\n %r = load atomic i32, ptr %p acquire, align 4\n ret i32 %r\n}", r"ldapr"),
    "dotprod": ("declare <4 x i32> @llvm.aarch64.neon.udot.v4i32.v16i8(<4 x i32>, <16 x i8>, <16 x i8>)\n"
                "define <4 x i32> @f(<4 x i32> %a, <16 x i8> %b, <16 x i8> %c) {\n"
                " %r = call <4 x i32> @llvm.aarch64.neon.udot.v4i32.v16i8(<4 x i32> %a, <16 x i8> %b, <16 x i8> %c)\n"
                " ret <4 x i32> %r\n}", r"udot"),
    "complxnum": ("declare <4 x float> @llvm.aarch64.neon.vcmla.rot0.v4f32(<4 x float>, <4 x float>, <4 x float>)\n"
                  "define <4 x float> @f(<4 x float> %a, <4 x float> %b, <4 x float> %c) {\n"
                  " %r = call <4 x float> @llvm.aarch64.neon.vcmla.rot0.v4f32(<4 x float> %a, <4 x float> %b,"
                  " <4 x float> %c)\n ret <4 x float> %r\n}", r"fcmla"),
    "sve": ("define <vscale x 4 x i32> @f(<vscale x 4 x i32> %a, <vscale x 4 x i32> %b) {\n"
            " %r = add <vscale x 4 x i32> %a, %b\n ret <vscale x 4 x i32> %r\n}", r"add\tz0\.s"),
    "sve2": ("declare <vscale x 4 x i32> @llvm.aarch64.sve.saba.nxv4i32(<vscale x 4 x i32>, <vscale x 4 x i32>,"
             " <vscale x 4 x i32>)\ndefine <vscale x 4 x i32> @f(<vscale x 4 x i32> %a, <vscale x 4 x i32> %b,"
             " <vscale x 4 x i32> %c) {\n %r = call <vscale x 4 x i32> @llvm.aarch64.sve.saba.nxv4i32("
             "<vscale x 4 x i32> %a, <vscale x 4 x i32> %b, <vscale x 4 x i32> %c)\n ret <vscale x 4 x i32> %r\n}",
             r"saba\tz0\.s"),
}


def cpu_names():
    p = subprocess.run(["llc-16", "-march=aarch64", "-mcpu=help"], capture_output=True, text=True)
    block = (p.stdout + p.stderr).split("Available CPUs for this target:")[1].split("Available features")[0]
    return sorted({m.group(1) for m in re.finditer(r"^\s+(\S+)\s+- Select the", block, re.M)})


def has(cpu, feature):
    ir, instruction = PROBES[feature]
    p = subprocess.run(["llc-16", "-mtriple=aarch64-linux-gnu", f"-mcpu={cpu}", "-o", "-"], input=ir,
                       capture_output=True, text=True)
    return p.returncode == 0 and re.search(instruction, p.stdout) is not None


def features(cpu):
    return ",".join(f for f in PROBES if has(cpu, f))


def main():
    names = cpu_names()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        recorded = list(pool.map(features, names))
    print("/*\n * AArch64 CPU names LLVM 16 knows, for checking --cpu, and the features of each that an\n"
          " * artifact records (target/cpu_features.c). Written by tools/gen_aarch64_cpus.py, which says\n"
          " * what is recorded and why.\n */")
    print("static const char *const aarch64_cpus[] = {")
    line = "\t"
    for n in names:
        item = f'"{n}", '
        if len(line) + len(item) > 110:
            print(line.rstrip())
            line = "\t"
        line += item
    print(line.rstrip())
    print("};\n")
    print("/* Each CPU's recorded features (LLVM's names, comma-separated), in the order of aarch64_cpus. */")
    print("static const char *const aarch64_cpu_features[] = {")
    for n, f in zip(names, recorded):
        print(f'\t"{f}", /* {n} */')
    print("};")


if __name__ == "__main__":
    main()
