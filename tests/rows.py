"""The rows group of tests/run.py: memory bounded by the work, and CSV rows never silently dropped or misread (issue 51).

A model read from a pipe or device stops at --limit stream (default 1 GiB) with a message; predict's memory follows
rows x (features + outputs), not outputs alone; the CSV reader's edges: a byte-order mark, one-line files, headers
matched to the model's feature names by name (--header yes|no|auto), labels quoted in the output."""
import csv
import io
import json
import os
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = os.path.join(ROOT, "tests", "models", "binary_logistic.x1")


def run(s, argv, stdin=None, limit_memory=None):
    def child():
        if limit_memory and not s.sanitized:  # under ASan the limit cannot be set; the message is still checked
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


def named_model(s, names, path):
    """SMALL with feature names (XGBoost's learner.feature_names)."""
    with open(SMALL + ".json") as f:
        model = json.load(f)
    model["learner"]["feature_names"] = names
    model["learner"]["feature_types"] = ["float"] * len(names)
    with open(path, "w") as f:
        json.dump(model, f)
    return path


def csv_cases(s):
    """The CSV reader's edges: every row read as a row, columns matched by name, or an error; never a row lost."""
    with open(SMALL + ".rows.csv") as f:
        rows = [line.strip() for line in f if line.strip()][:20]
    with open(SMALL + ".pred.csv") as f:
        want = [float(line) for line in f if line.strip()][:20]
    width = len(rows[0].split(","))
    names = [f"feat {chr(97 + i)}" for i in range(width)]
    named = named_model(s, names, s.path("rows-named.json"))
    numbered = named_model(s, [str(i) for i in range(width)], s.path("rows-numbered.json"))
    reverse = list(reversed(range(width)))

    def permuted(line, order):
        fields = line.split(",")
        return ",".join(fields[j] for j in order)

    def write(name, text):
        path = s.path(f"rows-{name}.csv")
        with open(path, "w", newline="") as f:
            f.write(text)
        return path

    plain = "\n".join(rows) + "\n"
    header = ",".join(names) + "\n"
    cases = [  # name, model, CSV text, extra options, expected exit, predictions (their row numbers) or message
        ("bom", SMALL + ".json", "\ufeff" + plain, [], 0, range(20)),
        ("bom_crlf", SMALL + ".json", "\ufeff" + plain.replace("\n", "\r\n"), [], 0, range(20)),
        ("bom_header_named", named, "\ufeff" + header + plain, [], 0, range(20)),
        ("one_line", SMALL + ".json", rows[0] + "\n", [], 0, [0]),
        ("one_line_no_newline", SMALL + ".json", rows[0], [], 0, [0]),
        ("one_line_quoted", SMALL + ".json", ",".join(f'"{x}"' for x in rows[0].split(",")) + "\n", [], 0, [0]),
        ("quoted_rows", SMALL + ".json", "".join(",".join(f'"{x}"' for x in r.split(",")) + "\n" for r in rows), [], 0,
         range(20)),
        ("one_line_semicolons", SMALL + ".json", rows[0].replace(",", ";") + "\n", [], 1,
         "looks like numbers separated by ';'; grove reads comma-separated values"),
        ("one_line_tabs", SMALL + ".json", rows[0].replace(",", "\t") + "\n", [], 1, "looks like numbers separated by '\\t'"),
        ("one_line_spaces", SMALL + ".json", rows[0].replace(",", " ") + "\n", [], 1, "separated by 'a space'"),
        ("one_line_quoted_semicolons", SMALL + ".json", ";".join(f'"{x}"' for x in rows[0].split(",")) + "\n", [], 1,
         "rows-one_line_quoted_semicolons.csv:1: field 1: text after its closing quote"),
        ("quote_left_open", SMALL + ".json", '"1,2\n', [], 1, "rows-quote_left_open.csv:1: field 1: a quote left open"),
        ("mixed_first_line", SMALL + ".json", "1,abc," + ",".join(["2"] * (width - 2)) + "\n" + plain, [], 1,
         "rows-mixed_first_line.csv:1: a header or a row? field 1 is a number and field 2, 'abc', is not"),
        ("header_in_order", named, header + plain, [], 0, range(20)),
        ("header_reordered", named, ",".join(names[j] for j in reverse) + "\n" +
         "".join(permuted(r, reverse) + "\n" for r in rows), [], 0, range(20)),
        ("header_quoted_reordered", named, ",".join(f'"{names[j]}"' for j in reverse) + "\n" +
         "".join(permuted(r, reverse) + "\n" for r in rows), [], 0, range(20)),
        ("header_unknown", named, "zzz," + ",".join(names[1:]) + "\n" + plain, [], 1,
         "rows-header_unknown.csv:1: column 1, 'zzz', is none of the model's 8 features"),
        ("header_missing", named, ",".join(names[1:]) + "\n" + "".join(r.split(",", 1)[1] + "\n" for r in rows), [], 1,
         "rows-header_missing.csv:1: no column names the model's feature 1, 'feat a'"),
        ("header_repeated", named, ",".join(names[:-1] + [names[0]]) + "\n" + plain, [], 1,
         f"column {width}, 'feat a', names the feature column 1 named already"),
        ("header_extra", named, header[:-1] + ",label\n" + "".join(r + ",1\n" for r in rows), [], 1,
         f"column {width + 1}, 'label', is none of the model's"),
        ("header_row_wider", named, header + rows[0] + ",1\n", [], 1,
         f"rows-header_row_wider.csv:2: {width + 1} fields, the header names {width}"),
        ("header_yes_unnamed_model", SMALL + ".json", plain, ["--header", "yes"], 0, range(1, 20)),
        ("header_yes_named_row", named, plain, ["--header", "yes"], 1, "is none of the model's 8 features"),
        ("header_no", named, header + plain, ["--header", "no"], 1, "rows-header_no.csv:1: field 1: 'feat a' is not a number"),
        ("header_no_rows", SMALL + ".json", plain, ["--header", "no"], 0, range(20)),
        ("numeric_names_ambiguous", numbered, ",".join(str(i) for i in reverse) + "\n" + plain, [], 1,
         "the first line is numbers that are also the model's feature names: say whether it is a header"),
        ("numeric_names_header_yes", numbered, ",".join(str(i) for i in reverse) + "\n" +
         "".join(permuted(r, reverse) + "\n" for r in rows), ["--header", "yes"], 0, range(20)),
        ("numeric_names_rows", numbered, plain, [], 0, range(20)),
        ("header_bad_option", SMALL + ".json", plain, ["--header", "maybe"], 1, "--header maybe: expected yes, no or auto"),
    ]
    for name, model, text, options, code, expected in cases:
        if not s.wanted("rows", "csv_" + name):
            continue
        p = run(s, ["predict", model, "--input", write(name, text), *options])
        out = p.stdout.decode()
        if code == 0:
            got = [float(x) for x in out.split()] if p.returncode == 0 else []
            wanted = [want[i] for i in expected]
            ok = len(got) == len(wanted) and all(abs(a - b) < 1e-5 for a, b in zip(got, wanted))
            record(s, "csv_" + name, p, 0, "", ok, f"{len(got)} predictions, expected {len(wanted)}")
        else:
            record(s, "csv_" + name, p, code, expected, out == "")


def label_cases(s):
    """Labels holding a comma, a quote or a line end are quoted in predict --label's output."""
    if not s.wanted("rows", "labels_quoted"):
        return
    base = os.path.join(ROOT, "tests", "models", "onnx", "classifier_strings")
    with open(base + ".onnx", "rb") as f:
        model = f.read()
    renamed = {b"ant": b'a,"', b"bee": b"b\ne"}  # as long as the old: the protobuf's lengths stay right
    for old, new in renamed.items():
        assert model.count(b"J\x03" + old) == 1
        model = model.replace(b"J\x03" + old, b"J\x03" + new)
    path = s.path("rows-labels.onnx")
    with open(path, "wb") as f:
        f.write(model)
    with open(base + ".label.csv") as f:
        want = [renamed.get(line.encode(), line.encode()).decode() for line in f.read().split("\n") if line]
    p = run(s, ["predict", path, "--input", base + ".rows.csv", "--label"])
    got = [row[0] for row in csv.reader(io.StringIO(p.stdout.decode(), newline=""))] if p.returncode == 0 else []
    record(s, "labels_quoted", p, 0, "", got == want and 'a,"' in got and "b\ne" in got,
           f"{len(got)} labels, {sum(a != b for a, b in zip(got, want))} differ")


def category_cases(s):
    """Categorical columns given by value, through the category lists the model names (LightGBM's pandas_categorical,
    XGBoost's categories; tests/gen/gen_category_values.py): predictions equal the library's on the DataFrame, with or
    without a header, in any column order; what the library refuses, or what is likely a code, is an error."""
    directory = os.path.join(ROOT, "tests", "models", "category_values")

    def lines(name):
        with open(os.path.join(directory, name)) as f:
            return [line for line in f.read().split("\n") if line]

    def write(name, text_lines):
        path = s.path(f"rows-categories-{name}.csv")
        with open(path, "w") as f:
            f.write("\n".join(text_lines) + "\n")
        return path

    cases = []  # name, model, rows, expected predictions (or None), exit, message
    for model, base in (("lightgbm_frame.txt", "lightgbm_frame"), ("xgboost_frame.json", "xgboost_frame"),
                        ("xgboost_frame.ubj", "xgboost_frame")):
        rows = lines(base + ".rows.csv")
        want = [float(x) for x in lines(base + ".pred.csv")]
        tag = model.replace(".", "_")
        order = [3, 1, 0, 2]
        cases += [(tag, model, write(tag, rows), want, 0, ""),
                  (tag + "_no_header", model, write(tag + "_no_header", rows[1:]), want, 0, ""),
                  (tag + "_reordered", model, write(tag + "_reordered", [_reorder(r, order) for r in rows]), want, 0, "")]
    cases += [
        ("xgboost_unseen", "xgboost_frame.json", os.path.join(directory, "xgboost_frame.unseen.csv"), None, 1,
         "field 2: 'ultraviolet' is none of the 6 categories the model knows for this column"),
        ("code_for_text", "lightgbm_frame.txt", write("code", ["a,colour,k,size", "0.5,2,1,10"]), None, 1,
         "field 2: '2' is a number, but this column takes the model's 6 categories by value"),
        ("lists_unplaced", "lightgbm_by_hand.txt", os.path.join(directory, "lightgbm_frame.rows.csv"), None, 1,
         "field 2: 'amber' is not a number"),
        ("header_misspelled", "lightgbm_frame.txt", write("misspelled", ["a,colour,k,sise", "0.5,red,1,10"]), None, 1,
         "column 4, 'sise', is none of the model's 4 features"),
        ("first_row_unseen", "lightgbm_frame.txt", write("unseen", ["0.5,ultraviolet,1,10"]), None, 1,
         "a header or a row?"),  # no category it knows: it could be either
    ]
    for name, model, rows, want, code, message in cases:
        if not s.wanted("rows", "categories_" + name):
            continue
        p = run(s, ["predict", os.path.join(directory, model), "--input", rows])
        if code == 0:
            got = [float(x) for x in p.stdout.decode().split()] if p.returncode == 0 else []
            ok = len(got) == len(want) and all(abs(a - b) < 1e-5 for a, b in zip(got, want))
            record(s, "categories_" + name, p, 0, "", ok, f"{len(got)} predictions, expected {len(want)}")
        else:
            record(s, "categories_" + name, p, code, message, p.stdout == b"")
    if s.wanted("rows", "categories_dump"):  # the HIR shows the lists, on the features they were placed on
        p = run(s, ["dump", "--level", "hir", os.path.join(directory, "lightgbm_frame.txt")])
        record(s, "categories_dump", p, 0, "", b'category_values unseen=missing x[1] "amber" "\\"quoted\\""' in p.stdout
               and b'x[3] "30" "10" "20"' in p.stdout, p.stdout.decode()[:300])


def _reorder(line, order):
    """A CSV line's fields in another order (quotes kept)."""
    fields = next(csv.reader([line]))
    return ",".join('"' + f.replace('"', '""') + '"' if any(c in f for c in ',"') else f for f in (fields[j] for j in order))


def stack_cases(s, write_many_classes):
    """A schedule whose stack arrays would overflow a thread's stack is refused, not compiled into code that crashes:
    a parallel tree loop keeps a copy of the margins per iteration (250 of 1000 margins), for each of 16 rows."""
    if not s.wanted("rows", "stack_bounded"):
        return
    model = s.path("rows-1000.json")
    write_many_classes(model, 1000)
    p = run(s, ["compile", model, "-o", s.path("rows-1000.so"), "--schedule-text",
                "tile(batch, b0, b1, 16); interleave(b1); tile(tree, t0, t1, 4); parallel(t0)"])
    record(s, "stack_bounded", p, 1, "bytes on the stack", not os.path.exists(s.path("rows-1000.so")))


def row_tests(s, write_many_classes):
    stream_cases(s)
    wide_output_cases(s, write_many_classes)
    stack_cases(s, write_many_classes)
    csv_cases(s)
    category_cases(s)
    label_cases(s)
