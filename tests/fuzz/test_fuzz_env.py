"""Actions and API arguments: env.step, RoomEnv(...) and reset(...) with generated values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fdenv.scene.load import scene_from_dict
from fdenv.sim.env import RoomEnv

from .conftest import outcome
from .strategies import awkward_text, json_values, numbers

pytestmark = pytest.mark.fuzz

SCENE = scene_from_dict({"id": "fz", "kind": "turn_taking", "speakers": ["Ann"],
                         "turns": [{"speaker": "Ann", "text": "Hello there, how are you?", "label": "final"}]})
N = 1280


@pytest.fixture(scope="module")
def env():
    e = RoomEnv(scene=SCENE)
    e.reset(seed=0)
    yield e
    e.close()


floats = st.floats(allow_nan=True, allow_infinity=True, width=32)
arrays = st.one_of(
    hnp.arrays(st.sampled_from([np.float32, np.float64, np.float16]), st.sampled_from([(N,), (N - 1,), (1, N), (), (0,)]),
               elements=floats, fill=st.floats(-1, 1, width=16)),
    hnp.arrays(st.sampled_from([np.int16, np.int32, np.uint8, np.bool_, np.complex64]), (N,)),
)


@st.composite
def actions(draw):
    kind = draw(st.sampled_from(["array", "array", "list", "torch", "other"]))
    if kind == "array":
        return draw(arrays)
    if kind == "list":
        return draw(st.lists(st.one_of(floats, st.none(), awkward_text), min_size=0, max_size=3)) + [0.0] * draw(
            st.sampled_from([0, N - 1, N]))
    if kind == "torch":
        import torch

        a = draw(hnp.arrays(np.float32, (N,), elements=floats, fill=st.floats(-1, 1, width=16)))
        t = torch.from_numpy(a).to(draw(st.sampled_from([torch.float32, torch.float16, torch.bfloat16, torch.float64])))
        return t.requires_grad_(draw(st.booleans()))
    return draw(st.one_of(json_values, st.just(object()), st.just(b"\x00" * N)))


@settings(max_examples=200)
@given(actions())
def test_actions(env, action):
    if env._done:
        env.reset(seed=0)
    result = outcome(env.step, action)
    if isinstance(result, tuple):
        obs, reward, terminated, truncated, info = result
        assert obs.shape == (1, N) and np.isfinite(obs).all()


scheduler = st.one_of(st.none(), json_values, st.dictionaries(
    st.one_of(st.sampled_from(["tail_s", "max_response_s", "response_idle_s", "n4r_delay_s", "response_wait_s"]),
              awkward_text), st.one_of(numbers, awkward_text), max_size=3))
ctor_args = st.fixed_dictionaries({}, optional={
    "scene": st.one_of(st.just(SCENE), st.just([SCENE]), st.just([]), awkward_text, json_values,
                       st.just("fdb:/nonexistent"), st.just("turn_taking-0001")),
    "scene_set": st.one_of(st.none(), st.sampled_from(["pause", "mpe", "nope"]), awkward_text),
    "split": st.one_of(st.sampled_from(["train", "test", "all"]), json_values),
    "room": st.one_of(st.none(), st.sampled_from(["office", "nope"]), json_values),
    "sample_rate": st.one_of(st.sampled_from([16000, 24000]), numbers, awkward_text),
    "tts": st.one_of(st.just("espeak"), st.none(), awkward_text, numbers),
    "scheduler": scheduler,
    "render_mode": st.one_of(st.none(), st.just("rgb_array"), awkward_text),
})


@settings(max_examples=120)
@given(ctor_args)
def test_constructor_arguments(kwargs):
    result = outcome(RoomEnv, **kwargs)
    if isinstance(result, RoomEnv):
        result.close()


@settings(max_examples=120)
@given(st.one_of(st.none(), json_values, st.dictionaries(st.one_of(st.just("scene"), awkward_text),
                                                         st.one_of(st.integers(-3, 3), awkward_text, json_values),
                                                         max_size=2)),
       st.one_of(st.none(), st.integers(-5, 2**70), numbers, awkward_text))
def test_reset_arguments(env, options, seed):
    result = outcome(env.reset, seed=seed, options=options)
    if isinstance(result, tuple):
        obs, info = result
        assert obs.shape == (1, N) and info["scene_id"] == "fz"
