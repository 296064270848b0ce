"""Room acoustics: presets, impulse responses, clip convolution, assistant echo and noise.

The env calls (one episode)::

    from fdenv.room import RoomSpec, build_room, ASSISTANT, active_speech_level_dba

    spec = RoomSpec.from_config({"preset": "office", "mics": "circular4", "echo_gain": 0.5})
    room = build_room(spec, ["alice", "bob"], seed=7, sample_rate=16000)   # cached
    wet = room.convolve("alice", clip)            # (n_mics, n + ir_length - 1) float32, read-only
    t_mic0 = t_source + room.delay_s("alice")     # gold times on microphone 0's axis
    room.doa("alice")                             # (azimuth_deg, elevation_deg, distance_m)
    echo = room.echo_path(frame_samples=1280)     # fresh per episode
    obs_next += echo.push(a_k)                    # echo of a_k during frame k+1
    noise = room.noise(n_samples, speech_level_dba)   # (n_mics, n) float32, read-only; A-weighted SNR

``anechoic`` (the default) gives a trivial RoomSim: one microphone, no delay, ``convolve`` returns
the clip, ``doa`` None; noise and echo_gain still apply. See ``sim.py`` for axes and levels,
``noise.py`` for the noise models, ``levels.py`` for the SNR and RT60 definitions.
"""

from .cache import clear_caches, set_audio_cache_bytes
from .echo import EchoPath
from .geometry import CIRCULAR4_RADIUS_M, PAIR_SPACING_M, mic_layout
from .levels import a_weighting_db, active_speech_level_db, active_speech_level_dba, band_rt60, rms_dba, measure_rt60, mid_rt60, rms_db, schroeder_edc_db
from .sim import ASSISTANT, RoomSim, build_room, filter_delay_samples, image_order
from .spec import MIC_ARRAYS, NOISE_KINDS, NoiseSource, RoomSpec, preset_names

__all__ = [
    "ASSISTANT", "CIRCULAR4_RADIUS_M", "EchoPath", "MIC_ARRAYS", "NOISE_KINDS", "NoiseSource",
    "PAIR_SPACING_M", "RoomSim", "RoomSpec", "a_weighting_db", "active_speech_level_db", "active_speech_level_dba",
    "rms_dba", "build_room", "clear_caches",
    "filter_delay_samples", "image_order", "measure_rt60", "band_rt60", "mid_rt60", "mic_layout", "preset_names", "rms_db",
    "schroeder_edc_db", "set_audio_cache_bytes",
]
