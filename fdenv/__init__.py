"""fdenv: a Gymnasium room where several people talk and one full-duplex voice assistant listens
and speaks at the same time, in 80 ms frames, scored on Full-Duplex-Bench and Duplex-MPE."""

__version__ = "0.1.0"

from .sim.registration import register_envs as _register_envs

_register_envs()
