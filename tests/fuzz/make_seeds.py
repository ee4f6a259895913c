#!/usr/bin/env python3
"""Write the fuzzers' seed corpora (tests/fuzz/corpus/HARNESS/) and dictionaries (tests/fuzz/HARNESS.dict) from the
project's own fixtures: the small model files of tests/models, tests/golden and tests/bad per format, the schedules of
tests/schedules (good and bad), and CSV rows of a few shapes. Run it again after adding fixtures; the output is the
same for the same fixtures. tools/fuzz.sh adds a compiled artifact to the artifact harness's corpus when it runs.

    python3 tests/fuzz/make_seeds.py
"""
import glob
import hashlib
import os
import re
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUZZ = os.path.join(ROOT, "tests", "fuzz")
MAX_SEED = 16 * 1024  # bytes: small seeds mutate faster
MAX_SEEDS = 80


def model_files(*patterns):
    files = sorted(set(f for p in patterns for f in glob.glob(os.path.join(ROOT, p), recursive=True)))
    return [f for f in files if os.path.getsize(f) <= MAX_SEED][:MAX_SEEDS]


def write_corpus(name, blobs):
    directory = os.path.join(FUZZ, "corpus", name)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    for blob in blobs:
        with open(os.path.join(directory, hashlib.sha1(blob).hexdigest()[:16]), "wb") as f:
            f.write(blob)
    return len(blobs)


def table_names(header, table):
    """The names (the first string of each X(...) row) of X-macro table `table` in header."""
    with open(os.path.join(ROOT, header)) as f:
        text = f.read()
    body = re.search(rf"#define {table}\(X\)((?:.*\\\n)*.*)", text).group(1)
    return [name for name in re.findall(r'X\(\w+,\s*"([^"]*)"', body) if name]


def representation_names():
    """The representations' names, from lower/rep.c's table (&rep_NAME, the representation named NAME)."""
    with open(os.path.join(ROOT, "lower", "rep.c")) as f:
        table = re.search(r"representations\[\] = \{(.*?)\};", f.read(), re.S).group(1)
    return re.findall(r"&rep_(\w+)", table)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write_dict(name, tokens):
    with open(os.path.join(FUZZ, f"{name}.dict"), "w") as f:
        f.write(f"# libFuzzer dictionary for the {name} harness (tests/fuzz/make_seeds.py)\n")
        for token in sorted(set(tokens)):
            escaped = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else f"\\x{ord(c):02x}" for c in token)
            f.write(f'"{escaped}"\n')


def json_keys(files):
    keys = set()
    for f in files:
        keys.update(re.findall(rb'"([A-Za-z_:][A-Za-z0-9_:.]{1,40})"', read(f)))
    return [f'"{k.decode()}"' for k in keys] + ["null", "true", "false", "[]", "{}", "1e309", "-0", "NaN", '"\\u0000"']


def lightgbm_keys(files):
    keys = set()
    for f in files:
        keys.update(re.findall(rb"^([a-z_]+)=", read(f), re.M))
    return [k.decode() + "=" for k in keys] + ["Tree=", "end of trees", "average_output", "pandas_categorical:", "\n", " ", "nan", "inf",
                                         "1e300"]


def main():
    counts = {}
    xgb = model_files("tests/models/*.json", "tests/models/xgboost/*.json", "tests/models/category_values/*.json",
                      "tests/golden/*.json", "tests/bad/*.json", "tests/bad/xgboost/*.json")
    ubj = model_files("tests/models/xgboost/*.ubj", "tests/models/category_values/*.ubj", "tests/bad/xgboost/*.ubj")
    lgb = model_files("tests/models/lightgbm/*.txt", "tests/models/category_values/*.txt", "tests/golden/*.txt",
                      "tests/bad/lightgbm/*.txt")
    onnx = model_files("tests/models/onnx/*.onnx", "tests/golden/*.onnx", "tests/bad/onnx/*.onnx")
    cb = model_files("tests/models/catboost/*.json", "tests/bad/catboost/*.json")
    counts["model-xgboost"] = write_corpus("model-xgboost", [read(f) for f in xgb])
    counts["model-xgboost-ubj"] = write_corpus("model-xgboost-ubj", [read(f) for f in ubj])
    counts["model-lightgbm"] = write_corpus("model-lightgbm", [read(f) for f in lgb])
    counts["model-onnx"] = write_corpus("model-onnx", [read(f) for f in onnx])
    counts["model-catboost"] = write_corpus("model-catboost", [read(f) for f in cb])
    write_dict("model-xgboost", json_keys(xgb))
    write_dict("model-xgboost-ubj", [k.strip('"') for k in json_keys(xgb)] + ["{L", "[$d#L", "[$l#L", "[$U#L", "SL", "i", "U"])
    write_dict("model-lightgbm", lightgbm_keys(lgb))
    write_dict("model-catboost", json_keys(cb) + ['"FloatFeature"', '"OneHotFeature"', '"OnlineCtr"', '"AsTrue"'])
    onnx_words = set()
    for f in onnx:
        onnx_words.update(w.decode() for w in re.findall(rb"[A-Za-z_.]{4,40}", read(f)))
    write_dict("model-onnx", sorted(onnx_words))

    schedules = model_files("tests/schedules/*.sched", "tests/schedules/bad/*.sched")
    counts["schedule"] = write_corpus("schedule", [read(f) for f in schedules])
    write_dict("schedule", table_names("ir/schedule.h", "HIR_DIRECTIVES") + table_names("ir/schedule.h", "HIR_GPU_DIMS")
               + representation_names() + ["depth", "uniform", "probability", "prefetch", "N_t", "N_f", "N_c", "batch", "tree", "(", ")", ",", ";", "#",
                                           "\n", "0", "1", "16", "4294967296"])

    csvs = [b"1,2,3\n4,5,6\n", b"a,b\n1,\n,2\n", b"nan,NaN,inf,-inf\r\n0x1p-149,-0,1e-45,3.4e38\n",
            b"1\n\n2\n", b" 1 , 2 \n3,4", b"1,2\n3\n", b"1,x\n"]
    counts["csv"] = write_corpus("csv", csvs)
    write_dict("csv", [",", "\n", "\r\n", "nan", "NaN", "inf", "-inf", "1e-45", "0x1p-149", "-0", "3.4e38", "1e309", " "])
    # csv-header: a mode byte (auto, yes, no), the model's names one a line, a NUL, the CSV
    headers = [b"\0a\nb\nc\0c,a,b\n1,2,3\n", b"\1a\nb\0b,a\n1,2\n", b"\2a\nb\0a,b\n", b"\0" + b"0\n1\0" + b"0,1\n2,3\n",
               b"\0x\ny\0\xef\xbb\xbfy,x\n\"1\",\"2\"\n", b"\0a\nb\0a,a\n", b"\0a\nb\0a,zz\n", b"\0a\0\"1;2;3\"\n",
               b"\0a\nb\0\"a,\"\"\",b\n1,2\n", b"\0a\nb\01,b\n"]
    counts["csv-header"] = write_corpus("csv-header", headers)
    write_dict("csv-header", [",", "\n", "\0", "\"", "\"\"", ";", "\t", "nan", "\xef\xbb\xbf", "1", "a", "b"])
    # Artifacts that once crashed (tests/bad/artifact), an ELF header, a seal alone.
    artifacts = [read(f) for f in sorted(glob.glob(os.path.join(ROOT, "tests", "bad", "artifact", "*.so")))]
    counts["artifact"] = write_corpus("artifact", artifacts + [b"\x7fELF\x02\x01\x01" + bytes(57), b"GRVSEAL1" + bytes(24)])
    write_dict("artifact", ["\x7fELF", "GRVSEAL1", "GRV1"])
    for name, n in sorted(counts.items()):
        print(f"{name}: {n} seeds")


if __name__ == "__main__":
    main()
