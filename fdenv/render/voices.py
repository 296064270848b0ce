"""Deterministic speaker-to-voice map (SPEC 2).

Each speaker name hashes (sha256, not Python's salted ``hash``) to a preferred voice, so a name
keeps its voice across scenes when it can. Within one scene distinct speakers get distinct voices:
on a collision the next free voice in the back end's list is taken. Pinned voices (``Speaker.voice``,
``Scene.duty_voice``) are validated and reserved first. Two extra keys: ``"__duty__"`` (the MPE duty
preamble's voice) and ``"__assistant__"`` (the assistant's own voice, for agents that speak), each
distinct from the humans and from each other while the back end has voices left.
"""

from __future__ import annotations

import hashlib
from collections import Counter

from .base import check_voice

DUTY = "__duty__"
ASSISTANT = "__assistant__"


def _stable_index(name: str, n: int) -> int:
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big") % n


def _voices_of(renderer_or_backend) -> tuple[tuple[str, ...], str]:
    """(voices, back-end name) of a Renderer, a back end, or a back-end name."""
    if isinstance(renderer_or_backend, str):
        from .registry import get_backend

        renderer_or_backend = get_backend(renderer_or_backend)
    voices = renderer_or_backend.voices
    voices = tuple(voices() if callable(voices) else voices)
    name = getattr(renderer_or_backend, "backend_name", None) or getattr(renderer_or_backend, "name", "?")
    return voices, name


def _pick(key: str, voices: tuple[str, ...], used: Counter) -> str:
    start = _stable_index(key, len(voices))
    order = [voices[(start + i) % len(voices)] for i in range(len(voices))]
    return min(order, key=lambda v: used[v])  # the first free one, else the least used


def voice_map(scene, renderer_or_backend) -> dict[str, str]:
    """Speaker name -> voice for every speaker of ``scene``, plus ``"__duty__"`` and ``"__assistant__"``."""
    voices, backend = _voices_of(renderer_or_backend)
    if not voices:
        raise ValueError(f"TTS back end {backend!r} has no voices")
    used: Counter = Counter()
    out: dict[str, str] = {}
    for s in scene.speakers:
        if s.voice is not None:
            check_voice(s.voice, voices, backend)
            out[s.name] = s.voice
            used[s.voice] += 1
    duty = getattr(scene, "duty_voice", None)
    if duty is not None:
        check_voice(duty, voices, backend)
        used[duty] += 1
    for s in scene.speakers:
        if s.name not in out:
            out[s.name] = _pick(s.name, voices, used)
            used[out[s.name]] += 1
    if duty is None:
        duty = _pick(DUTY, voices, used)
        used[duty] += 1
    out[DUTY] = duty
    out[ASSISTANT] = _pick(f"{ASSISTANT}:{getattr(scene, 'assistant_name', '')}", voices, used)
    return out


def turn_clips(scene, voices: dict[str, str]) -> list[list[tuple[str, str]]]:
    """``(text, voice)`` of every piece of every turn, as the env renders them: a duty turn speaks
    with the duty voice, every other turn with its speaker's (``voices`` from ``voice_map``)."""
    return [[(p.text, voices[DUTY] if turn.label == "duty" else voices[turn.speaker]) for p in turn.pieces]
            for turn in scene.turns]
