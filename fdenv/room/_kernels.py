"""The echo path's two loops outside the FFTs, compiled (numba), each one pass over its data.

- ``multiply_add``: the delay line's spectra times the partitions' spectra, summed over the
  partitions. In numpy the same sum takes a multiply into a temporary block and a tree of block
  additions (four passes over ``P x n_mics`` spectra, and a copy of the newest spectrum for each
  microphone): 10.1 us against 4.1 us for the office's four partitions and four microphones.
- ``add_scaled``: the observation, ``(microphones + echo) * gain``, and its peak for the clip
  check (in numpy an addition, a multiplication, an absolute value and a reduction).

``fastmath`` is off: every sum runs in the written order, without fused multiply-adds. Each loop
has one explicit signature (C-contiguous spectra; the observation's inputs in any layout, since
the microphones' frame is a slice of their buffer), compiled when this module is first imported on a
machine and loaded from numba's cache after that: a run never stops to compile a variant for a new
array layout (a one-microphone frame, say, is C-contiguous where four are not).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit("void(complex64[:, :, ::1], complex64[:, ::1], int64, complex64[:, ::1])",
           cache=True, nogil=True, fastmath=False, boundscheck=False)
def multiply_add(H, X, w, out):  # pragma: no cover - compiled; covered through EchoPath
    """``out[m, k] = sum_p H[p, m, k] * X[(w + p) % P, k]``: ``H`` ``(P, n_mics, K)`` the
    partitions' spectra, ``X`` ``(P, K)`` the delay line (a ring whose row ``w`` is the newest
    frame's spectrum, row ``(w + p) % P`` the one ``p`` frames old), ``out`` ``(n_mics, K)``."""
    P, M, K = H.shape
    for m in range(M):
        x = X[w]
        for k in range(K):
            out[m, k] = H[0, m, k] * x[k]
        for p in range(1, P):
            x = X[(w + p) % P]
            for k in range(K):
                out[m, k] += H[p, m, k] * x[k]


@numba.njit("float32(float32[:, :], float32[:, :], float32, float32[:, ::1])",
           cache=True, nogil=True, fastmath=False, boundscheck=False)
def add_scaled(a, b, gain, out):  # pragma: no cover - compiled; covered through EchoPath
    """``out = (a + b) * gain`` in float32 (the same roundings as numpy's ``np.add`` then
    ``*= gain``), all ``(n_mics, N)``; returns ``max |out|``, NaN if any sample is NaN."""
    g = np.float32(gain)
    M, N = out.shape
    peak = np.float32(0.0)
    nan = False
    for m in range(M):
        for n in range(N):
            v = (a[m, n] + b[m, n]) * g
            out[m, n] = v
            peak = max(peak, abs(v))
            nan |= v != v
    return np.float32(np.nan) if nan else peak
