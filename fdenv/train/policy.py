"""A small GRU actor-critic over log-mel frames.

Each feature row (``LogMelFeatures``) goes through a linear layer and a GRU; the hidden state
gives three action logits (actor) or a value (critic). Actor and critic have their own trunks,
so that training the critic from scratch after behaviour cloning does not disturb the actor.

Two ways to read the observation ``(history, n_features)``:

- ``recurrent=True`` (what ``fdenv-train`` trains): the GRU carries its hidden state from frame
  to frame across the whole episode and reads only the newest row of each observation
  (``step``); training runs it over chunks of consecutive frames (``unroll``). One decision
  costs one GRU step.
- ``recurrent=False`` (checkpoints before streaming): the GRU reads the whole window from a zero
  state every frame (``logits`` / ``value``).

``act_stream(obs, state)`` decides for both kinds, so players need not care which they hold.

Checkpoints (``save`` / ``load``) are plain dicts that ``torch.load(weights_only=True)`` reads:
the weights, the model, feature and action settings, and a summary of the training run.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

FORMAT = "fdenv-turn-policy/1"
SPEAK_INDEX = 2  # actions: silent, backchannel, speak (fdenv.train.actions)


class _Trunk(nn.Module):
    def __init__(self, n_features: int, hidden: int):
        super().__init__()
        self.inp = nn.Sequential(nn.Linear(n_features, hidden), nn.Tanh())
        self.gru = nn.GRU(hidden, hidden, batch_first=True)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        _, h = self.gru(self.inp(obs))
        return h[-1]

    def unroll(self, rows: torch.Tensor, h0: torch.Tensor, starts: torch.Tensor | None = None):
        """``rows (B, T, F)`` from hidden states ``h0 (B, H)``; ``starts (B, T)``: a new episode
        begins at that row (its state starts from zero). -> outputs ``(B, T, H)``, last state."""
        x = self.inp(rows)
        h = h0[None].contiguous()
        if starts is None or not bool(starts.any()):
            out, h = self.gru(x, h)
            return out, h[0]
        # run the GRU in pieces between the times where some row starts an episode
        cuts = sorted(set(torch.nonzero(starts.any(0)).flatten().tolist()) | {0})
        outs = []
        for a, b in zip(cuts, cuts[1:] + [rows.shape[1]]):
            keep = (~starts[:, a]).to(h.dtype)[None, :, None]
            out, h = self.gru(x[:, a:b], h * keep)
            outs.append(out)
        return torch.cat(outs, 1), h[0]


class TurnPolicy(nn.Module):
    def __init__(self, n_features: int, hidden: int = 64, n_actions: int = 3, recurrent: bool = False):
        super().__init__()
        self.n_features, self.hidden, self.n_actions = int(n_features), int(hidden), int(n_actions)
        self.recurrent = bool(recurrent)
        self.actor = _Trunk(self.n_features, self.hidden)
        self.pi = nn.Linear(self.hidden, self.n_actions)
        self.critic = _Trunk(self.n_features, self.hidden)
        self.v = nn.Linear(self.hidden, 1)
        nn.init.orthogonal_(self.pi.weight, 0.01)
        nn.init.zeros_(self.pi.bias)
        nn.init.orthogonal_(self.v.weight, 1.0)
        nn.init.zeros_(self.v.bias)

    def logits(self, obs: torch.Tensor) -> torch.Tensor:
        return self.pi(self.actor(obs))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.v(self.critic(obs)).squeeze(-1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.logits(obs), self.value(obs)

    # ---- streaming (recurrent) ----
    def initial_state(self, batch: int) -> torch.Tensor:
        """Hidden states of actor and critic for ``batch`` new episodes: ``(2, batch, hidden)``."""
        return torch.zeros(2, batch, self.hidden)

    def unroll(self, rows: torch.Tensor, state: torch.Tensor, starts: torch.Tensor | None = None, critic: bool = True):
        """Logits ``(B, T, A)`` and values ``(B, T)`` (None without ``critic``) over rows
        ``(B, T, F)`` from ``state (2, B, H)``, and the state after the last row."""
        a, ha = self.actor.unroll(rows, state[0], starts)
        logits = self.pi(a)
        if not critic:
            return logits, None, torch.stack([ha, state[1]])
        c, hc = self.critic.unroll(rows, state[1], starts)
        return logits, self.v(c).squeeze(-1), torch.stack([ha, hc])

    @torch.no_grad()
    def step(self, obs: torch.Tensor, state: torch.Tensor, critic: bool = True):
        """One frame for a batch: ``obs (B, history, F)`` (only the newest row is read) ->
        logits ``(B, A)``, values ``(B,)`` (or None) and the next state."""
        logits, values, state = self.unroll(obs[:, -1:, :], state, critic=critic)
        return logits[:, 0], None if values is None else values[:, 0], state

    @torch.no_grad()
    def act_stream(self, obs: np.ndarray, state, deterministic: bool = True, generator: torch.Generator | None = None,
                   threshold: float | None = None):
        """Actions for a batch of observations ``(B, history, F)`` (or one), carrying ``state``
        (None at the start of an episode). A window policy ignores the state. ``threshold``
        (deterministic only): speak when P(speak) reaches it, else the likelier of silent and
        backchannel; None: the likeliest action. Sweeping it traces the policy's operating points."""
        x = torch.as_tensor(obs, dtype=torch.float32)
        single = x.dim() == 2
        if single:
            x = x[None]
        if self.recurrent:
            if state is None:
                state = self.initial_state(x.shape[0])
            logits, _, state = self.step(x, state, critic=False)
        else:
            logits, state = self.logits(x), None
        if threshold is not None and deterministic:
            p_speak = torch.softmax(logits, -1)[:, SPEAK_INDEX]
            other = logits[:, :SPEAK_INDEX].argmax(-1)
            a = torch.where(p_speak >= float(threshold), SPEAK_INDEX, other).numpy()
        else:
            a = _choose(logits, deterministic, generator)
        return (a[0] if single else a), state

    @torch.no_grad()
    def act(self, obs: np.ndarray, deterministic: bool = True, generator: torch.Generator | None = None) -> np.ndarray:
        """Actions for a batch ``(B, history, n_features)`` (or one observation)."""
        x = torch.as_tensor(obs, dtype=torch.float32)
        single = x.dim() == 2
        if single:
            x = x[None]
        a = _choose(self.logits(x), deterministic, generator)
        return a[0] if single else a

    def model_config(self) -> dict:
        return {"n_features": self.n_features, "hidden": self.hidden, "n_actions": self.n_actions,
                "recurrent": self.recurrent}


def _choose(logits: torch.Tensor, deterministic: bool, generator: torch.Generator | None) -> np.ndarray:
    if deterministic:
        return logits.argmax(-1).numpy()
    return torch.multinomial(torch.softmax(logits, -1), 1, generator=generator).squeeze(-1).numpy()


def save(policy: TurnPolicy, path: str | os.PathLike, features: dict, actions: dict | None = None,
         train: dict | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = {
        "format": FORMAT,
        "model": policy.model_config(),
        "state_dict": {k: v.detach().cpu() for k, v in policy.state_dict().items()},
        "features": dict(features),
        "actions": dict(actions or {}),
        "train": dict(train or {}),
    }
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(blob, tmp)
    os.replace(tmp, path)
    return path


def load(path: str | os.PathLike) -> tuple[TurnPolicy, dict]:
    """The policy (in eval mode) and the checkpoint's settings (``features``, ``actions``, ``train``)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"policy checkpoint {str(path)!r} not found; train one with fdenv-train")
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise ValueError(f"{path}: not an fdenv turn-policy checkpoint (format {FORMAT!r})")
    policy = TurnPolicy(**blob["model"])
    policy.load_state_dict(blob["state_dict"])
    policy.eval()
    return policy, {k: blob.get(k, {}) for k in ("features", "actions", "train")}
