"""The files group of tests/run.py: output files handled as compilers handle them (issue 51).

Never replace a file that is not a regular one (/dev/null, a FIFO); refuse an output that is one of the inputs, or
two outputs that are one file; names beginning with '-'; no temporary file left by SIGINT, SIGTERM or SIGHUP; the
modes cc gives (0755 & ~umask for libraries, 0644 & ~umask for the rest); every write error reported; temporary
files and directories in $TMPDIR where it is set, a clear error where it is unusable. The cases that depend on
permissions also run as the user nobody when the suite runs as root."""
import os
import shutil
import signal
import stat
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL = os.path.join(ROOT, "..", "shared", "models", "real")
SMALL = os.path.join(ROOT, "tests", "models", "binary_logistic.x1")


def as_nobody():
    """The argv prefix that runs a command as nobody, or None when not root (then the suite's user is not root)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return None
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def public_directory(s, name):
    """A fresh directory under the scratch one that any user may write (for the cases run as nobody)."""
    path = s.path(name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    os.chmod(path, 0o777)
    os.chmod(s.scratch, 0o755)
    return path


def device(s, name):
    """/dev/null or /dev/full, or as root a node of the same device in the scratch directory: a grove that replaced
    the device it writes to would replace that node, not the machine's."""
    if os.geteuid() != 0:
        return f"/dev/{name}"
    path = os.path.join(public_directory(s, f"dev-{name}"), name)
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, {"null": 3, "full": 7}[name]))
    os.chmod(path, 0o666)
    return path


def run(s, argv, prefix=(), umask=None, cwd=None, env=None):
    """grove argv; its standard output as bytes where it may not be text (a library written to "-")."""
    def child():
        if umask is not None:
            os.umask(umask)
    p = subprocess.run([*prefix, s.grove, *argv], capture_output=True, timeout=600, cwd=cwd, preexec_fn=child,
                       env=None if env is None else {**os.environ, **env})
    p.stderr = p.stderr.decode(errors="replace")
    try:
        p.stdout = p.stdout.decode()
    except UnicodeDecodeError:
        pass
    return p


def check(s, name, p, code, text, extra=True, detail=""):
    if s.wanted("files", name):
        s.record("files", name, p.returncode == code and text in p.stderr and extra,
                 f"exit {p.returncode} {detail}: {p.stderr.strip()[-600:]}")


def device_cases(s, user, prefix, directory):
    """Outputs that are not regular files are written into, never replaced."""
    model = os.path.join(directory, "m.json")
    shutil.copyfile(SMALL + ".json", model)
    os.chmod(model, 0o644)
    null = device(s, "null")
    for kind in ("so", "obj", "asm"):
        p = run(s, ["compile", model, "--emit", kind, "-o", null], prefix)
        check(s, f"{user}_dev_null_{kind}", p, 0, "", stat.S_ISCHR(os.stat(null).st_mode) and not
              os.path.exists(null + ".h"))
    p = run(s, ["predict", SMALL + ".json", "--input", SMALL + ".rows.csv", "--output", null], prefix)
    check(s, f"{user}_predict_dev_null", p, 0, "", stat.S_ISCHR(os.stat(null).st_mode))
    fifo = os.path.join(directory, "fifo")
    os.mkfifo(fifo)
    os.chmod(fifo, 0o666)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    p = run(s, ["compile", model, "-o", fifo], prefix)
    reader.join(30)  # a grove that replaced the FIFO leaves the reader waiting for a writer (a daemon thread)
    check(s, f"{user}_fifo", p, 0, "", stat.S_ISFIFO(os.stat(fifo).st_mode) and got and got[0][:4] == b"\x7fELF",
          f"read {len(got[0]) if got else 'nothing'}")
    left = [f for f in os.listdir(directory) if f not in ("m.json", "fifo")]
    if s.wanted("files", f"{user}_no_temporaries"):
        s.record("files", f"{user}_no_temporaries", not left, f"left {left}")


def same_file_cases(s, user, prefix, directory):
    """An output that is an input, or two outputs that are one file, are refused before anything is written."""
    model = os.path.join(directory, "model.json")
    rows = os.path.join(directory, "rows.csv")
    shutil.copyfile(SMALL + ".rows.csv", rows)
    os.chmod(rows, 0o666)
    with open(SMALL + ".json", "rb") as f:
        original = f.read()

    def intact():
        texts = []
        for name in ("model.json", "hard.json", "soft.json"):
            with open(os.path.join(directory, name), "rb") as f:
                texts.append(f.read())
        return texts == [original] * 3 and os.path.samefile(model, os.path.join(directory, "hard.json"))

    def restore():
        for name in ("model.json", "hard.json", "soft.json", "s.sched"):
            if os.path.lexists(os.path.join(directory, name)):
                os.unlink(os.path.join(directory, name))
        shutil.copyfile(SMALL + ".json", model)
        shutil.copyfile(SMALL + ".rows.csv", rows)
        os.chmod(model, 0o666)
        os.link(model, os.path.join(directory, "hard.json"))
        os.symlink("model.json", os.path.join(directory, "soft.json"))

    cases = [
        ("compile_onto_model", ["compile", model, "-o", model], "-o " + model + ": the same file as the input"),
        ("compile_onto_hard_link", ["compile", model, "-o", os.path.join(directory, "hard.json")], "the same file as"),
        ("compile_onto_symlink", ["compile", model, "--emit", "asm", "-o", os.path.join(directory, "soft.json")],
         "the same file as"),
        ("compile_onto_model_dotted", ["compile", model, "-o", os.path.join(directory, ".", "model.json")],
         "the same file as"),
        ("compile_model_is_default_output", ["compile", os.path.join(directory, "model.so")], "model.so"),
        ("compile_header_onto_object", ["compile", model, "--emit", "obj", "-o", os.path.join(directory, "m.h")],
         "the object and its header would both be"),
        ("compile_header_onto_model", ["compile", model, "--emit", "obj", "-o", os.path.join(directory, "model.o")],
         "never"),  # model.json is no header: this one must succeed (below)
        ("predict_onto_rows", ["predict", model, "--input", rows, "--output", rows], "the same file as the input"),
        ("predict_onto_model", ["predict", model, "--input", rows, "--output", model], "the same file as the input"),
        ("tune_onto_model", ["tune", model, "--budget", "1", "-o", model, "--log", ""], "the same file as the input"),
        ("tune_log_onto_model", ["tune", model, "--budget", "1", "--log", model], "the same file as the input"),
        ("tune_log_onto_schedule", ["tune", model, "--budget", "1", "-o", os.path.join(directory, "s.sched"), "--log",
                                    os.path.join(directory, "s.sched")], "the same file as the input"),
        ("compile_empty_output", ["compile", model, "-o", ""], "an empty file name"),
    ]
    shutil.copyfile(SMALL + ".json", os.path.join(directory, "model.so"))
    for name, argv, text in cases:
        if not s.wanted("files", f"{user}_{name}"):
            continue
        restore()
        p = run(s, argv, prefix)
        if text == "never":
            header = os.path.join(directory, "model.h")
            s.record("files", f"{user}_{name}", p.returncode == 0 and intact() and os.path.exists(header),
                     f"exit {p.returncode}: {p.stderr.strip()}")
            continue
        check(s, f"{user}_{name}", p, 1, text, intact(), "(model changed)" if not intact() else "")
    # a header that would overwrite the model: model m.h, object m.o
    header_model = os.path.join(directory, "m.h")
    shutil.copyfile(SMALL + ".json", header_model)
    p = run(s, ["compile", header_model, "--format", "xgboost", "--emit", "obj", "-o", os.path.join(directory, "m.o")],
            prefix)
    with open(header_model, "rb") as f:
        check(s, f"{user}_compile_header_onto_input", p, 1, "its header " + header_model + " is the input",
              f.read() == original and not os.path.exists(os.path.join(directory, "m.o")))


def mode_cases(s, user, prefix, directory):
    """Outputs get the modes cc would give them."""
    for umask in (0o022, 0o077, 0o000, 0o027):
        for kind, extension, mode in (("so", ".so", 0o755), ("obj", ".o", 0o644), ("asm", ".s", 0o644),
                                      ("llvm", ".ll", 0o644)):
            out = os.path.join(directory, f"m{umask:o}{kind}{extension}")
            p = run(s, ["compile", SMALL + ".json", "--emit", kind, "-o", out], prefix, umask=umask)
            modes = [stat.S_IMODE(os.stat(f).st_mode) for f in (out, out[:-len(extension)] + ".h") if os.path.exists(f)]
            want = [mode & ~umask] + ([0o644 & ~umask] if kind == "obj" else [])
            check(s, f"{user}_mode_{kind}_umask{umask:03o}", p, 0, "", modes == want,
                  f"modes {[oct(m) for m in modes]}, expected {[oct(m) for m in want]}")
        out = os.path.join(directory, f"p{umask:o}.csv")
        p = run(s, ["predict", SMALL + ".json", "--input", SMALL + ".rows.csv", "--output", out], prefix, umask=umask)
        got = stat.S_IMODE(os.stat(out).st_mode) if os.path.exists(out) else None
        check(s, f"{user}_mode_predict_umask{umask:03o}", p, 0, "", got == 0o644 & ~umask, f"mode {got and oct(got)}")


def dash_cases(s, user, prefix, directory):
    """Names beginning with '-' are files, never options of the linker."""
    p = run(s, ["compile", SMALL + ".json", "-o", "-out.so"], prefix, cwd=directory)
    q = run(s, ["predict", "./-out.so", "--input", SMALL + ".rows.csv", "--output", "-"], prefix, cwd=directory)
    with open(SMALL + ".pred.csv") as f:
        want = [float(x) for x in f.read().split()]
    got = [float(x) for x in q.stdout.split()] if q.returncode == 0 else []
    check(s, f"{user}_dash_output", p, 0, "", len(got) == len(want) and
          all(abs(a - b) < 1e-5 for a, b in zip(got, want)), f"predict: exit {q.returncode} {q.stderr.strip()}")
    p = run(s, ["compile", SMALL + ".json", "--emit", "asm", "-o", "-"], prefix, cwd=directory)
    check(s, f"{user}_dash_is_standard_output", p, 0, "", ".text" in p.stdout and not
          os.path.exists(os.path.join(directory, "-")))


def signal_cases(s):
    """SIGINT, SIGTERM and SIGHUP at any moment of a compile leave no temporary file, also while the linker runs; the
    output is left only whole (a signal after its rename, while grove frees its memory, may still end grove)."""
    higgs = os.path.join(REAL, "higgs.json")
    directory = s.path("signals")
    os.makedirs(directory, exist_ok=True)
    slow_cc = s.path("slow-cc")
    with open(slow_cc, "w") as f:  # a linker that takes its time: the signal comes while it runs
        f.write('#!/bin/sh\nsleep 1\nexec cc "$@"\n')
    os.chmod(slow_cc, 0o755)
    wholes = {}  # what an uninterrupted compile writes (artifacts are deterministic), by grove's linker and by cc
    for linker in ("grove", "cc"):
        path = s.path(f"signals-whole-{linker}.so")
        subprocess.run([s.grove, "compile", higgs, "--no-cache", "-o", path], capture_output=True, check=True,
                       env={**os.environ, "GROVE_LINKER": linker})
        with open(path, "rb") as f:
            wholes[linker] = f.read()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        for when in (0.05, 0.2, 0.4, 0.6, "linking"):
            name = f"signal_{signal.Signals(sig).name.lower()}_{when if when == 'linking' else int(when * 1000)}"
            if not s.wanted("files", name):
                continue
            env = {**os.environ, "GROVE_LINKER": slow_cc} if when == "linking" else None
            p = subprocess.Popen([s.grove, "compile", higgs, "--no-cache", "-o", os.path.join(directory, "out.so")],
                                 stderr=subprocess.PIPE, env=env)
            time.sleep(0.5 if when == "linking" else when)
            p.send_signal(sig)
            p.wait(60)
            time.sleep(1.5 if when == "linking" else 0.1)  # a linker left running would write its output by now
            left = os.listdir(directory)
            whole = True
            if left == ["out.so"]:
                with open(os.path.join(directory, "out.so"), "rb") as f:
                    whole = f.read() == wholes["cc" if when == "linking" else "grove"]
            s.record("files", name, p.returncode in (-sig, 0) and (not left or left == ["out.so"]) and whole,
                     f"exit {p.returncode}, left {left}{'' if whole else ' (out.so not whole)'}")
            for f in left:
                os.unlink(os.path.join(directory, f))


def write_error_cases(s):
    """Every write error is reported: the tuner's log, a schedule, an artifact, a header on a full device."""
    base = os.path.join(ROOT, "tests", "models", "multi_softprob7.x1")
    full = device(s, "full")
    p = run(s, ["tune", base + ".json", "--batch", "64", "--budget", "1", "--input", base + ".rows.csv", "-o",
                s.path("full.sched"), "--log", full])
    check(s, "tune_log_dev_full", p, 1, f"--log {full}: No space left on device", stat.S_ISCHR(os.stat(full).st_mode))
    p = run(s, ["tune", base + ".json", "--batch", "64", "--budget", "1", "--input", base + ".rows.csv", "-o",
                full, "--log", ""])
    check(s, "tune_schedule_dev_full", p, 1, f"{full}: No space left on device", stat.S_ISCHR(os.stat(full).st_mode))
    for kind in ("so", "obj", "llvm"):
        p = run(s, ["compile", SMALL + ".json", "--emit", kind, "-o", full])
        check(s, f"compile_{kind}_dev_full", p, 1, f"{full}: No space left on device",
              stat.S_ISCHR(os.stat(full).st_mode))
    p = run(s, ["compile", SMALL + ".json", "-o", s.path("no/such/dir/m.so")])
    check(s, "compile_missing_directory", p, 1, "No such file or directory")
    p = run(s, ["compile", SMALL + ".json", "-o", s.scratch])
    check(s, "compile_onto_directory", p, 1, f"{s.scratch}: cannot write: it is a directory", os.path.isdir(s.scratch))


def tmpdir_cases(s):
    """Temporary directories (predict's, tune's) and files (compile -o -) go to $TMPDIR, seen by a linker
    ($GROVE_LINKER, a compiler driver) that notes the path it writes, and nothing is left there; an unusable $TMPDIR is
    an error that names it."""
    directory = public_directory(s, "tmpdir")
    log = s.path("tmpdir-cc.log")
    noting_cc = s.path("noting-cc")
    with open(noting_cc, "w") as f:
        f.write(f'#!/bin/sh\nprev=\nfor a in "$@"; do [ "$prev" = -o ] && echo "$a" >> {log}; prev="$a"; done\n'
                'exec cc "$@"\n')
    os.chmod(noting_cc, 0o755)
    rows = SMALL + ".rows.csv"
    commands = (("predict", ["predict", SMALL + ".json", "--input", rows], "grove-", "a temporary directory"),
                ("compile_stdout", ["compile", SMALL + ".json", "--no-cache", "-o", "-"], "grove-output.",
                 "a temporary file"),
                ("tune", ["tune", SMALL + ".json", "--batch", "16", "--budget", "1", "--input", rows, "-o",
                          s.path("tmpdir.sched"), "--log", ""], "grove-tune-", "a temporary directory"))
    for name, argv, stem, what in commands:
        if s.wanted("files", f"tmpdir_{name}"):
            if os.path.exists(log):
                os.unlink(log)
            p = run(s, argv, env={"TMPDIR": directory, "GROVE_LINKER": noting_cc})
            with open(log) if os.path.exists(log) else open(os.devnull) as f:
                written = f.read().split()
            left = os.listdir(directory)
            s.record("files", f"tmpdir_{name}", p.returncode == 0 and written and not left and
                     all(w.startswith(os.path.join(directory, stem)) for w in written),
                     f"exit {p.returncode}, linked {written[:3]}, left {left}: {p.stderr.strip()[-300:]}")
        for case, tmpdir, error in (("missing", s.path("no/such/tmpdir"), "No such file or directory"),
                                    ("file", rows, "Not a directory")):
            p = run(s, argv, env={"TMPDIR": tmpdir})
            check(s, f"tmpdir_{name}_{case}", p, 1, f"grove: cannot create {what} in {tmpdir}, which $TMPDIR names: "
                  f"{error} (set TMPDIR to a writable directory, or unset it for /tmp)")
        nobody = as_nobody()
        if nobody:  # a directory nobody may not write into
            closed = s.path("tmpdir-closed")
            os.makedirs(closed, exist_ok=True)
            os.chmod(closed, 0o755)
            p = run(s, argv, prefix=nobody, env={"TMPDIR": closed})
            check(s, f"tmpdir_{name}_nobody", p, 1, f"cannot create {what} in {closed}, which $TMPDIR names: "
                  "Permission denied")


def file_tests(s):
    nobody = as_nobody()
    users = [("user", ())] + ([("nobody", nobody)] if nobody else [])
    for user, prefix in users:
        for cases in (device_cases, same_file_cases, mode_cases, dash_cases):
            cases(s, user, prefix, public_directory(s, f"files-{user}-{cases.__name__}"))
    signal_cases(s)
    write_error_cases(s)
    tmpdir_cases(s)
