"""The ``fdb_code`` profile reproduces the public Full-Duplex-Bench scripts' values
(tests/data/fdb_golden, a copy of the shared golden set): TOR exactly, latency to 1e-9 s,
frequency and JSD to 1e-6. The backchannel cases run Silero on the shipped wavs."""

import json
from pathlib import Path

import pytest

from fdenv.score.fdb import score_fdb_sample

GOLDEN = Path(__file__).parent / "data" / "fdb_golden"
EXPECTED = json.loads((GOLDEN / "expected.json").read_text())
GT = json.loads((GOLDEN / "backchannel" / "gt_distribution.json").read_text())


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_fdb_code_reproduces_golden(key):
    task, case = key.split("/")
    want = EXPECTED[key]
    if task == "backchannel":
        got = score_fdb_sample(GOLDEN / task / case / case, task, GT[case])
        assert got["to"] == want["tor"]
        assert got["freq_hz"] == pytest.approx(want["freq"], abs=1e-6)
        assert got["jsd"] == pytest.approx(want["jsd"], abs=1e-6)
        return
    got = score_fdb_sample(GOLDEN / task / case / "1", task)
    assert got["to"] == want["tor"]
    if "latency" in want:
        if want["latency"] is None:
            assert got["latency_s"] is None
        else:
            assert got["latency_s"] == pytest.approx(want["latency"], abs=1e-9)


def test_golden_set_is_complete():
    # every case folder has an expected value and vice versa
    cases = {f"{p.parent.parent.name}/{p.parent.name}" for p in GOLDEN.glob("*/*/1")}
    cases |= {f"backchannel/{p.name}" for p in (GOLDEN / "backchannel").iterdir() if p.is_dir()}
    assert cases == set(EXPECTED)
