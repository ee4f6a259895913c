"""The rows group of tests/run.py: memory bounded by the work, and CSV rows never silently dropped or misread (issue 51).

A model read from a pipe or device stops at --limit stream (default 1 GiB) with a message; predict's memory follows
rows x (features + outputs), not outputs alone; the CSV reader's edges: a byte-order mark, one-line files, headers
matched to the model's feature names by name (--header yes|no|auto), labels quoted in the output."""
import os
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = os.path.join(ROOT, "tests", "models", "binary_logistic.x1")


def run(s, argv, stdin=None, limit_memory=None):
    def child():
        if limit_memory:
            resource.setrlimit(resource.RLIMIT_AS, (limit_memory, limit_memory))
    return subprocess.run([s.grove, *argv], capture_output=True, timeout=600, input=stdin, preexec_fn=child)


def record(s, name, p, code, text, extra=True, detail=""):
    if s.wanted("rows", name):
        err = p.stderr.decode(errors="replace") if isinstance(p.stderr, bytes) else p.stderr
        s.record("rows", name, p.returncode == code and text in err and extra,
                 f"exit {p.returncode} {detail}: {err.strip()[-600:]}")


def stream_cases(s):
    """Models from files that are not regular ones: read to --limit stream, then a message."""
    with open(SMALL + ".json", "rb") as f:
        model = f.read()
    limit = "not a regular file, and longer than grove's limit of"
    if s.wanted("rows", "stream_dev_zero"):  # the default limit: 1 GiB read, never more
        p = run(s, ["compile", "/dev/zero", "-o", s.path("zero.so")], limit_memory=3 << 30)
        record(s, "stream_dev_zero", p, 1, "/dev/zero: " + limit + " 1073741824 bytes")
    if s.wanted("rows", "stream_dev_zero_limit"):
        p = run(s, ["compile", "/dev/zero", "--limit", "stream=100000", "-o", s.path("zero.so")])
        record(s, "stream_dev_zero_limit", p, 1, limit + " 100000 bytes for one (raise it with --limit stream=N")
    p = run(s, ["compile", "/dev/stdin", "--limit", f"stream={len(model) - 1}", "-o", s.path("pipe.so")], stdin=model)
    record(s, "stream_pipe_one_byte_over", p, 1, limit + f" {len(model) - 1} bytes")
    p = run(s, ["compile", "/dev/stdin", "--limit", f"stream={len(model)}", "-o", s.path("pipe.so")], stdin=model)
    record(s, "stream_pipe_at_limit", p, 0, "", os.path.exists(s.path("pipe.so")))
    p = run(s, ["compile", "/dev/stdin", "--limit", "stream=0", "-o", s.path("pipe.so")], stdin=model)
    record(s, "stream_limit_zero", p, 1, "--limit stream=0: stream needs a whole number above 0")


def wide_output_cases(s, write_many_classes):
    """predict's chunks hold rows x (features + outputs): 4 rows of a 30,000-class model take megabytes."""
    if not s.wanted("rows", "many_outputs_memory"):
        return
    model, artifact, rows = s.path("rows-30k.json"), s.path("rows-30k.so"), s.path("rows-30k.csv")
    write_many_classes(model, 30000)
    with open(rows, "w") as f:
        f.write("0.5,0.5\n1,1\n2,2\n3,3\n")
    p = run(s, ["compile", model, "-o", artifact])
    if p.returncode != 0:
        return record(s, "many_outputs_memory", p, 0, "")
    p = run(s, ["predict", artifact, "--input", rows], limit_memory=1 << 30)
    lines = p.stdout.decode().split("\n") if p.returncode == 0 else []
    record(s, "many_outputs_memory", p, 0, "", len(lines) == 5 and len(lines[0].split(",")) == 30000,
           f"{len(lines)} lines")


def row_tests(s, write_many_classes):
    stream_cases(s)
    wide_output_cases(s, write_many_classes)
