"""fdenv: a Gymnasium room where several people talk and one full-duplex voice assistant listens
and speaks at the same time, in 80 ms frames, scored on Full-Duplex-Bench and Duplex-MPE."""

__version__ = "0.1.0"

from .sim.registration import when_gymnasium_loads as _when_gymnasium_loads

_when_gymnasium_loads()  # registers the env ids, without importing gymnasium or the env itself
