"""A tone, noise or clipped audio on the assistant track: scored as silence, with a warning in the
result and in the report's table (real audio through the real env, runner and scorers)."""

import numpy as np
import pytest

from fdenv.report import format_runs, run_summary
from fdenv.run import read_episodes, run
from fdenv.scene import find_scene
from fdenv.score.sound import no_speech_warning
from fdenv_agents import ScriptedAgent

from .helpers import scene

TURNS = scene([
    {"speaker": "Ann", "text": "I was reading about the old harbour.", "label": "ctx"},
    {"speaker": "Bob", "text": "Aria, when does the ferry leave?", "label": "final", "gold_answer": "At nine."},
], kind="turn_taking", id="tt-tone")


class ToneAgent:
    """Plays a sine of ``hz`` from ``start`` s for ``seconds`` s (an agent whose TTS broke)."""

    privileged = False

    def __init__(self, hz, start=0.5, seconds=1.5, level=0.3):
        self.hz, self.start, self.seconds, self.level = hz, start, seconds, level
        self.name = f"tone{hz}"

    def reset(self, duty, sample_rate, frame_samples, scene=None):
        self.sr, self.n, self.k = sample_rate, frame_samples, 0

    def act(self, observation, labels=None):
        t = (self.k + np.arange(self.n)) / self.sr
        self.k += self.n
        on = (t >= self.start) & (t < self.start + self.seconds)
        return (self.level * on * np.sin(2 * np.pi * self.hz * t)).astype(np.float32)

    def config(self):
        return {"hz": self.hz, "start": self.start, "seconds": self.seconds}


@pytest.mark.parametrize("hz", [440, 120])
def test_a_tone_is_scored_as_silence_with_a_warning(hz, tmp_path):
    folder = run(ToneAgent(hz, start=4.0), scenes=[TURNS], out=tmp_path, progress=False)
    line = read_episodes(folder)[0]
    assert line["fdb"]["paper"]["to"] == 0 and line["segments"]["fdb"]["paper"]["segments"] == []
    (warning,) = line["fdb"]["warnings"]
    assert warning.startswith("sound but no speech") and "1.5 s of sound" in warning
    table = format_runs([run_summary(folder, n_resamples=100)])
    assert "! 1 with sound but no speech" in table and "tone, noise or clipped audio" in table


def test_speech_and_silence_carry_no_warning(tmp_path):
    speech = run(ScriptedAgent([(4.0, "The ferry leaves at nine in the morning.")]), scenes=[TURNS], out=tmp_path,
                 progress=False)
    line = read_episodes(speech)[0]
    assert line["segments"]["fdb"]["paper"]["segments"] and "warnings" not in line["fdb"]
    assert "sound but no speech" not in format_runs([run_summary(speech, n_resamples=100)])


def test_a_tone_in_a_multi_party_scene_is_flagged(tmp_path):
    folder = run(ToneAgent(440, start=20.0, seconds=2.0), scenes=[find_scene("mpe-0001-explicit")], out=tmp_path,
                 progress=False)
    line = read_episodes(folder)[0]
    assert line["mpe"]["presence"] == 0 and "sound but no speech" in line["mpe"]["warnings"][0]


def test_the_rule_on_plain_arrays():
    sr = 16000
    t = np.arange(sr) / sr
    tone = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    assert "1.0 s of sound" in no_speech_warning(tone, [])
    assert no_speech_warning(tone, [(0.1, 0.5)]) is None  # the VAD found speech: nothing to say
    click = np.zeros(sr, np.float32)
    click[:1600] = tone[:1600]  # 0.1 s: under the 0.2 s floor
    assert no_speech_warning(click, []) is None
    assert no_speech_warning(np.zeros(sr, np.float32), []) is None
    quiet = tone * 10 ** (-60 / 20) / 0.3  # under -45 dBFS
    assert no_speech_warning(quiet, []) is None
