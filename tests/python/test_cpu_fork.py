"""Issue 51 in Python: a pickled model on a CPU that lacks what its code uses is compiled again from the model it
carries; predicting in a child of fork after the parent predicted in parallel (OpenMP's threads started) works."""
import os
import pickle
import select
import signal
import subprocess
import time

import numpy as np
import pytest

import grove
from conftest import ROOT


def host_has(flag):
    with open("/proc/cpuinfo") as f:
        return any(line.startswith("flags") and flag in line.split() for line in f)


@pytest.mark.skipif(host_has("avx512f"), reason="this CPU has AVX-512: x86-64-v4 code runs here")
def test_pickle_compiles_again_where_the_cpu_lacks_features(higgs, tmp_path):
    path, rows, _ = higgs
    model = grove.compile(path, cpu="native")
    reference = model.predict(rows)
    grove_cli = os.path.join(ROOT, os.environ.get("GROVE_BUILDDIR", "build"), "grove")
    v4 = tmp_path / "v4.so"  # code for a newer CPU than this one, as if compiled with cpu="native" on one
    subprocess.run([grove_cli, "compile", path, "--cpu", "x86-64-v4", "-o", str(v4)], check=True)
    with pytest.raises(grove.GroveUnavailableError, match="compiled for a CPU with avx512f.*which this CPU lacks"):
        grove.load(v4)  # an artifact alone has nothing to compile again
    model._artifact = v4.read_bytes()  # the pickle carries the newer CPU's code and the model
    data = pickle.dumps(model)
    with pytest.warns(RuntimeWarning, match="avx512f.*compiling the model again for this CPU"):
        again = pickle.loads(data)
    assert np.array_equal(again.predict(rows), reference)
    assert pickle.loads(pickle.dumps(again)).predict(rows[:5]).shape == (5,)


def test_predict_in_a_child_of_fork(higgs_model, higgs):
    _, rows, _ = higgs
    many = np.tile(rows, (50, 1))  # 100,000 rows: a parallel prediction, OpenMP's threads started
    reference = higgs_model.predict(many)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: predict (in parallel again) and send the predictions back
        try:
            got = higgs_model.predict(many).tobytes()
            os.write(write, len(got).to_bytes(8, "little"))
            for i in range(0, len(got), 1 << 16):
                os.write(write, got[i:i + (1 << 16)])
        finally:
            os._exit(0)
    os.close(write)
    received, deadline = b"", time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([read], [], [], 1.0)
        if ready:
            chunk = os.read(read, 1 << 20)
            if not chunk:
                break
            received += chunk
    os.close(read)
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the child of fork hung predicting")
        time.sleep(0.05)
    size = int.from_bytes(received[:8], "little")
    assert size == reference.nbytes and np.array_equal(np.frombuffer(received[8:], dtype=np.float32), reference)
