"""The fuzz tier (``make test-fuzz``): generated bad input, each case ending in a result or a
documented fdenv exception (``fdenv.errors.FdenvError``) within ``CASE_LIMIT_S``.

Anything else (a raw KeyError, TypeError, RecursionError, MemoryError..., or a hang) fails the
test with hypothesis's smallest failing example. Runs are derandomised, so CI sees the same cases
every time, and keep no example database on disk.
"""

from __future__ import annotations

import signal
import warnings

from hypothesis import HealthCheck, settings

from fdenv.errors import CacheWarning, FdenvError

CASE_LIMIT_S = 30
settings.register_profile("fdenv-fuzz", derandomize=True, database=None, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                                 HealthCheck.data_too_large, HealthCheck.filter_too_much])
settings.load_profile("fdenv-fuzz")

CASES = {"n": 0, "errors": 0}


class Hang(BaseException):
    """A case ran past CASE_LIMIT_S (a BaseException, so no ``except Exception`` swallows it)."""


def _alarm(signum, frame):
    raise Hang(f"a fuzz case ran longer than {CASE_LIMIT_S} s")


def outcome(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``: its result, or the documented fdenv exception it raised (after
    checking that its message says something). Any other exception propagates and fails the test."""
    CASES["n"] += 1
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_LIMIT_S)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CacheWarning)  # a discarded cache entry is a result
            return fn(*args, **kwargs)
    except FdenvError as e:
        CASES["errors"] += 1
        msg = str(e)
        assert 15 <= len(msg) <= 2000, f"{type(e).__name__} with an unhelpful message: {msg[:300]!r}"
        return e
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def pytest_terminal_summary(terminalreporter):
    if CASES["n"]:
        terminalreporter.write_line(f"fuzz: {CASES['n']} generated cases, {CASES['errors']} ended in a documented "
                                    "fdenv error, the rest in a result")
