"""The exceptions fdenv raises on bad input or a broken run, in one place.

Every one derives from ``FdenvError``, so ``except fdenv.errors.FdenvError`` catches all of them;
the ones about a wrong value also derive from ``ValueError`` (and runtime failures from
``RuntimeError``), so code written against the built-in types keeps working. Each message names
the file, field or argument that is wrong and what to do about it.
"""

from __future__ import annotations


class FdenvError(Exception):
    """Base class of every documented fdenv exception."""


class ConfigError(FdenvError, ValueError):
    """A configuration value (env argument, scheduler or scoring setting, Hydra override) is wrong:
    the message names the field, the value given and what is accepted."""


class SceneError(FdenvError, ValueError):
    """A scene that cannot be used. The message names the source, the field and the fix."""

    def __init__(self, source: str, field: str, problem: str):
        self.source, self.field, self.problem = source, field, problem
        super().__init__(f"{source}: {field}: {problem}")

    def __reduce__(self):  # picklable across worker processes despite the 3-argument constructor
        return type(self), (self.source, self.field, self.problem)


class FDBImportError(SceneError):
    """A Full-Duplex-Bench task or sample folder that cannot be replayed: the message names the
    file, the field and the fix."""


class ActionError(FdenvError, ValueError):
    """An action passed to ``env.step`` of the wrong shape, type or range."""


class EnvStateError(FdenvError, RuntimeError):
    """``env.step`` called before ``reset()`` or after the episode ended."""


class OptionsError(FdenvError, ValueError):
    """A bad ``reset(options=...)`` or constructor argument of the env (wrong type or unknown key)."""


class RunFolderError(FdenvError, ValueError):
    """A run folder whose files are damaged (a line of the wrong shape, a duplicated episode,
    a record that cannot be read). The message names the file and line."""


class RunLockedError(RunFolderError):
    """Another runner holds the run folder's lock; the message names the holder (pid, host)."""


class AgentError(FdenvError, RuntimeError):
    """An agent failed during an episode (a live model that dropped its connection, timed out, or
    answered out of protocol). The runner notes the episode as failed and goes on; a rerun retries it."""


class TTSError(FdenvError, RuntimeError):
    """Text-to-speech rendering failed (back end missing, unknown voice, nothing to say)."""


class CacheWarning(UserWarning):
    """A cache entry (judge verdict, rendered clip, VAD or ASR result) did not match its digest or
    its inputs; it was discarded and recomputed."""


def suggest(name: str, valid) -> str:
    """``"; did you mean 'scene'?"`` for a near miss among ``valid``, else ``""``."""
    import difflib

    close = difflib.get_close_matches(str(name), [str(v) for v in valid], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def short(x, n: int = 80) -> str:
    """``repr(x)`` cut to ``n`` characters for a message (a 5,000-character id stays readable)."""
    r = repr(x)
    return r if len(r) <= n else f"{r[:n]}... ({len(r)} characters)"
