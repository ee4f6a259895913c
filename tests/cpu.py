"""The cpu group of tests/run.py: an artifact never runs on a CPU that lacks what its code uses (issue 51).

Artifacts record the x86-64 features their code may use; grove_load refuses, naming the missing ones, on a CPU
without them: here for x86-64-v4 code where this CPU has no AVX-512, and under qemu-x86_64 -cpu Nehalem (an older CPU,
no AVX) for code compiled with --cpu native and x86-64-v3, while --cpu x86-64 code runs there. The simulator's GPU
artifacts (kernels compiled for the host CPU) likewise; CUDA's and ROCm's host libraries hold no code and record
none. AArch64 artifacts record the AArch64 features, checked by the cross-built runtime under qemu-aarch64 -cpu:
neoverse-n1 code refused on a Cortex-A53 and run on a Neoverse-N1, generic code run on a Cortex-A53."""
import os
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = os.path.join(ROOT, "tests", "models", "binary_logistic.x1")
LACKS = "which this CPU lacks; its code would stop with an illegal instruction here"


def host_has(flag):
    with open("/proc/cpuinfo") as f:
        return any(line.startswith("flags") and flag in line.split() for line in f)


def predictions_match(text):
    with open(SMALL + ".pred.csv") as f:
        want = [float(x) for x in f.read().split()]
    got = [float(x) for x in text.split()]
    return len(got) == len(want) and all(abs(a - b) < 1e-5 for a, b in zip(got, want))


def gpu_tests(s):
    """gpusim kernels are host code: x86-64-v4 ones refused here without AVX-512, x86-64 ones run; a CUDA library
    compiled for x86-64-v4 is not refused for its CPU (whatever then says there is no GPU)."""
    for target, cpu, name in (("gpusim", "x86-64-v4", "gpusim_x86_64_v4"), ("gpusim", "x86-64", "gpusim_x86_64"),
                              ("cuda", "x86-64-v4", "cuda_x86_64_v4")):
        if not s.wanted("cpu", name) or (cpu == "x86-64-v4" and target == "gpusim" and host_has("avx512f")):
            continue
        artifact = s.path(f"cpu-{name}.so")
        p = s.run("compile", SMALL + ".json", "--target", target, "--cpu", cpu, "-o", artifact)
        if p.returncode != 0:
            s.record("cpu", name, False, f"compile failed: {p.stderr.strip()}")
            continue
        p = s.run("predict", artifact, "--input", SMALL + ".rows.csv")
        if name == "gpusim_x86_64_v4":
            ok = p.returncode == 1 and "compiled for a CPU with avx512f" in p.stderr and LACKS in p.stderr and not p.stdout
        elif name == "gpusim_x86_64":
            ok = p.returncode == 0 and predictions_match(p.stdout)
        else:
            ok = LACKS not in p.stderr and (p.returncode == 0 or "cuda" in p.stderr)
        s.record("cpu", name, ok, f"exit {p.returncode}: {p.stderr.strip()[-400:]}")


def aarch64_tests(s, aarch64_missing):
    """AArch64 artifacts under qemu-aarch64 -cpu: (name, --cpu, qemu's CPU, the features named as missing or None)."""
    cases = (("aarch64_neoverse_n1_on_a53", "neoverse-n1", "cortex-a53", "fullfp16, lse, rdm, rcpc, dotprod"),
             ("aarch64_neoverse_v1_on_n1", "neoverse-v1", "neoverse-n1", "complxnum, sve"),
             ("aarch64_neoverse_n1_on_n1", "neoverse-n1", "neoverse-n1", None),
             ("aarch64_generic_on_a53", "generic", "cortex-a53", None))
    cases = [c for c in cases if s.wanted("cpu", c[0])]
    missing = aarch64_missing(s) if cases else None
    if missing:
        return s.record("cpu", "aarch64", False, missing)
    driver = os.path.join(ROOT, s.args.builddir, "aarch64", "predict")
    for name, cpu, qemu_cpu, lacking in cases:
        artifact = s.path(f"cpu-aarch64-{cpu}.so")
        if not os.path.exists(artifact):
            p = s.run("compile", SMALL + ".json", "--target", "aarch64-linux-gnu", "--cpu", cpu, "-o", artifact)
            if p.returncode != 0:
                s.record("cpu", name, False, f"compile failed: {p.stderr.strip()}")
                continue
        p = subprocess.run(["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", "-cpu", qemu_cpu, driver, artifact,
                            SMALL + ".rows.csv"], capture_output=True, text=True, timeout=600)
        if lacking:
            ok = (p.returncode != 0 and f"compiled for a CPU with {lacking}, {LACKS}" in p.stderr and
                  "--cpu generic for any AArch64 CPU" in p.stderr and not p.stdout)
        else:
            ok = p.returncode == 0 and predictions_match(p.stdout.replace(",", " "))
        s.record("cpu", name, ok, f"exit {p.returncode}: {p.stderr.strip()[-400:]}")


def cpu_tests(s, aarch64_missing):
    gpu_tests(s)
    aarch64_tests(s, aarch64_missing)
    artifacts = {}
    for cpu in ("native", "x86-64", "x86-64-v3", "x86-64-v4"):
        if s.wanted("cpu", cpu.replace("-", "_")) or s.wanted("cpu", "qemu"):
            artifacts[cpu] = s.path(f"cpu-{cpu}.so")
            p = s.run("compile", SMALL + ".json", "--cpu", cpu, "-o", artifacts[cpu])
            if p.returncode != 0:
                s.record("cpu", "compile_" + cpu, False, p.stderr.strip())
    if "x86-64-v4" in artifacts and s.wanted("cpu", "x86_64_v4") and not host_has("avx512f"):
        p = s.run("predict", artifacts["x86-64-v4"], "--input", SMALL + ".rows.csv")
        s.record("cpu", "x86_64_v4", p.returncode == 1 and "compiled for a CPU with avx512f" in p.stderr and
                 LACKS in p.stderr and not p.stdout, f"exit {p.returncode}: {p.stderr.strip()}")
    qemu = shutil.which("qemu-x86_64")
    for cpu, refused in (("native", host_has("avx")), ("x86-64-v3", True), ("x86-64", False)):
        name = f"qemu_nehalem_{cpu.replace('-', '_')}"
        if cpu not in artifacts or not s.wanted("cpu", name):
            continue
        if s.sanitized:
            print(f"cpu/{name}: skipped: qemu-x86_64 cannot reserve ASan's shadow memory", flush=True)
            continue
        if not qemu:
            s.record("cpu", name, False, "qemu-x86_64 is not installed (apt-get install qemu-user)")
            continue
        p = subprocess.run(["qemu-x86_64", "-cpu", "Nehalem", s.grove, "predict", artifacts[cpu], "--input",
                            SMALL + ".rows.csv"], capture_output=True, text=True, timeout=600)
        if refused:
            ok = p.returncode == 1 and LACKS in p.stderr and "avx" in p.stderr and not p.stdout
        else:
            ok = p.returncode == 0 and predictions_match(p.stdout)
        s.record("cpu", name, ok, f"exit {p.returncode}: {p.stderr.strip()[-400:]}")
