"""The cost group of tests/run.py: the learned cost model (lower/cost.h) as the build links it.

lower/cost_model.json compiles and predicts the candidates tools/cost_train.py kept beside it as XGBoost did (the
build compiles it the same way into grove); grove tune, where grove has the model, ranks by it and reports each
candidate's predicted time; grove compile --learned predicts as the library does."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "lower", "cost_model")


def floats(path):
    with open(path) as f:
        return [float(x) for x in f.read().replace(",", " ").split()]


def cost_tests(s):
    if not os.path.exists(MODEL + ".json"):
        return
    if s.wanted("cost", "model_predicts"):
        out = s.path("cost_model.pred.csv")
        p = s.run("predict", MODEL + ".json", "--input", MODEL + ".rows.csv", "--output", out)
        got = floats(out) if p.returncode == 0 else []
        want = floats(MODEL + ".pred.csv")
        s.record("cost", "model_predicts", len(got) == len(want) and all(abs(a - b) <= 1e-5 * max(1, abs(b))
                                                                         for a, b in zip(got, want)),
                 f"exit {p.returncode}: {p.stderr.strip()} {got[:4]} {want[:4]}")
    if s.wanted("cost", "learned"):
        for name in ("binary_logistic.x3", "multi_softprob7.x1"):
            base = os.path.join(ROOT, "tests", "models", name)
            out = s.path(f"cost-learned-{name}.csv")
            p = s.run("predict", base + ".json", "--learned", "--input", base + ".rows.csv", "--output", out)
            got = floats(out) if p.returncode == 0 else []
            want = floats(base + ".pred.csv")
            s.record("cost", f"learned_{name}", len(got) == len(want) and all(abs(a - b) <= 1e-5 * max(1, abs(b))
                                                                               for a, b in zip(got, want)),
                     f"exit {p.returncode}: {p.stderr.strip()}")
    if s.wanted("cost", "tune_ranks"):
        base = os.path.join(ROOT, "tests", "models", "multi_softprob7.x1")
        p = s.run("tune", base + ".json", "--batch", "64", "--budget", "3", "--input", base + ".rows.csv", "-o",
                  s.path("cost-tune.sched"), "--log", "")
        s.record("cost", "tune_ranks", p.returncode == 0 and "(predicted: the cost model's time against the heuristic's, as us/row)" in p.stdout and
                 "(heuristic)" in p.stdout, f"exit {p.returncode}: {p.stdout[-1500:]}{p.stderr.strip()}")
