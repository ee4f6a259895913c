"""Model.predict from several Python threads at once, and without the GIL."""
import threading
import time

import numpy as np

import grove


def test_eight_threads_predict_what_one_does(higgs, higgs_model):
    _, rows, _ = higgs
    rng = np.random.default_rng(0)
    big = rows[rng.integers(0, len(rows), 20000)]
    # batch sizes on both sides of the 128-row line where grove goes parallel, and both entries
    batches = [(big[:1], False), (big[:100], True), (big[:5000], False), (big, False),
               (big[:3000].astype(np.float64), True)]
    reference = [higgs_model.predict(b, margin=m) for b, m in batches]
    failures, start = [], threading.Barrier(8)

    def work(seed):
        start.wait()
        order = np.random.default_rng(seed).permutation(len(batches) * 6) % len(batches)
        for i in order:
            got = higgs_model.predict(batches[i][0], margin=batches[i][1])
            if not np.array_equal(got, reference[i]):
                failures.append((seed, i))
    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_predict_releases_the_gil(higgs, higgs_model):
    """While one thread predicts a large batch on one core, another runs Python code."""
    _, rows, _ = higgs
    big = np.tile(rows, (400, 1))  # 800,000 rows: about a second on one core
    started = time.perf_counter()
    higgs_model.predict(big[:100000], threads=1)
    per_row = (time.perf_counter() - started) / 100000
    done = threading.Event()

    def predict():
        higgs_model.predict(big, threads=1)
        done.set()
    ticks = 0
    t = threading.Thread(target=predict)
    t.start()
    while not done.is_set():
        ticks += 1  # holds the GIL between ticks only; a predict holding it would leave no room for these
        time.sleep(0.001)
    t.join()
    expected = per_row * len(big) / 0.001  # ticks there is time for, were each sleep exactly 1 ms
    assert ticks > min(50, expected / 10), f"{ticks} ticks while predicting {len(big)} rows (~{per_row * len(big):.2f} s)"
