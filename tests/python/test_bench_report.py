"""tools/bench/report.py's merge (bench.py --merge): runs of the same models together, each cell the median of the
runs' medians, so that a run a VM's neighbours slowed does not make the table; runs of other models side by side."""
import importlib.util
import os

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("report", os.path.join(ROOT, "tools", "bench", "report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)


def run(date, grove, peer, diff, model="m"):
    """One run's document: one model at one batch, grove and XGBoost timed."""
    machine = {"date": date, "cpu": "cpu", "isa": "isa", "threads": 1, "cores": 2, "wait_policy": "passive",
               "loadavg_start": [0.5], "loadavg_end": [0.7], "gcc": "gcc", "repeat": 7}
    result = {"model": model, "kind": "xgboost", "features": 4, "trees": 10, "batch": 4096, "reference": "xgboost",
              "max_rel_diff": {"grove": diff, "xgboost": 0.0},
              "us_per_row": {"grove": {"median": grove, "min": grove - 0.5, "reps": 7},
                             "xgboost": {"median": peer, "min": peer, "reps": 7}},
              "build": {}}
    return {"machine": machine, "python_call_floor_us": {}, "notes": [], "failures": [], "results": [result]}


def test_merge_takes_each_cells_median():
    doc = report.merge([run("d1", 1.0, 10.0, 1e-7), run("d2", 3.0, 12.0, 0.0), run("d3", 2.0, 30.0, 2e-7)])
    cell = doc["results"][0]
    assert cell["us_per_row"]["grove"]["median"] == 2.0 and cell["us_per_row"]["xgboost"]["median"] == 12.0
    assert cell["us_per_row"]["grove"]["min"] == 0.5 and cell["us_per_row"]["grove"]["runs"] == 3
    assert cell["max_rel_diff"]["grove"] == 2e-7
    assert doc["machine"]["runs"] == ["d1", "d2", "d3"]
    text = report.markdown(doc, 1e-5)
    assert "each cell the median of 3 runs' medians" in text
    assert "| m | 10 | 4096 | 2.00 (0.500) |" in text and "(6.00×)" in text  # 12 / 2


def test_merge_keeps_every_runs_models():
    """A corpus run model by model: each model's cells from the runs that have it, in the order they first come."""
    doc = report.merge([run("d1", 1.0, 10.0, 0.0, "a"), run("d2", 2.0, 8.0, 0.0, "b"), run("d3", 3.0, 12.0, 0.0, "a")])
    assert [r["model"] for r in doc["results"]] == ["a", "b"]
    a, b = doc["results"]
    assert a["us_per_row"]["grove"]["median"] == 2.0 and a["us_per_row"]["grove"]["runs"] == 2
    assert b["us_per_row"]["xgboost"]["median"] == 8.0 and b["us_per_row"]["grove"]["runs"] == 1
