"""Training turn-taking policies against the benchmark.

- ``rewards``: dense, causal reward wrappers, one per behaviour, and ``TurnTakingReward`` (a
  weighted sum);
- ``actions``: ``TurnActions``, ``Discrete(3)`` = silent / backchannel / speak -> audio frames;
- ``features``: ``LogMelFeatures``, log-mel frames (scipy's FFT, the numbers of ``torch.stft``)
  against digital silence or the running noise floor, plus what the assistant played, stacked over
  a history;
- ``envs``: ``TurnTakingEnv`` (all of the above on the room, a room drawn per episode with
  ``randomize``; ``fdenv/WhenToSpeak-v0``);
- ``teacher``: the oracle's decisions in that action space (behaviour-cloning targets);
- ``policy``: a small GRU actor-critic that carries its state between frames; ``ppo``: behaviour
  cloning + PPO (KL early stop) on vector envs;
- ``turn_end``: a learned end-of-turn model on words and the silence so far, for the
  ``turn_detector`` agent (trained by ``python -m fdenv.cli.turn_end``);
- ``compare``: the learned policy against another agent on the scored test split; ``frontier``:
  operating points (speak threshold, endpointing) of both in three room conditions; ``targets``:
  which test targets a frontier shows met at the agent's default threshold.

``fdenv-train`` (``fdenv.cli.train``) runs the whole recipe from ``conf/train.yaml``.
"""

from .actions import ACTION_NAMES, BACKCHANNEL, SILENT, SPEAK, TurnActions, TurnVoice
from .envs import ENV_ID, TurnTakingEnv, make_vec, register
from .features import LogMel, LogMelFeatures
from .rewards import (DEFAULT_WEIGHTS, BackchannelReward, HoldReward, PauseReward, ResponseReward, SilenceReward,
                      TalkCost, TurnTakingReward, YieldReward)
from .teacher import OracleTeacher

register()

__all__ = ["ACTION_NAMES", "BACKCHANNEL", "SILENT", "SPEAK", "TurnActions", "TurnVoice", "ENV_ID", "TurnTakingEnv",
           "make_vec", "register", "LogMel", "LogMelFeatures", "DEFAULT_WEIGHTS", "BackchannelReward", "PauseReward",
           "ResponseReward", "SilenceReward", "HoldReward", "TalkCost", "TurnTakingReward", "YieldReward", "OracleTeacher"]
