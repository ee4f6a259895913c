"""The cpu group of tests/run.py: an artifact never runs on a CPU that lacks what its code uses (issue 51).

Artifacts record the x86-64 features their code may use; grove_load refuses, naming the missing ones, on a CPU
without them: here for x86-64-v4 code where this CPU has no AVX-512, and under qemu-x86_64 -cpu Nehalem (an older CPU,
no AVX) for code compiled with --cpu native and x86-64-v3, while --cpu x86-64 code runs there."""
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


def cpu_tests(s):
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
