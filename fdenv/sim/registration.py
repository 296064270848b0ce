"""Environment ids. Variants are registrations with different kwargs, not subclasses (as in
Minigrid): ``fdenv/Room-v0`` takes any scene; the per-set ids play a shipped scene set."""

from __future__ import annotations

import gymnasium as gym

ENTRY_POINT = "fdenv.sim.env:RoomEnv"
SET_IDS = {
    "fdenv/PauseHandling-v0": "pause",
    "fdenv/Backchannel-v0": "backchannel",
    "fdenv/TurnTaking-v0": "turn_taking",
    "fdenv/Interruption-v0": "interruption",
    "fdenv/MultiParty-v0": "mpe",
}
ALL_IDS = ("fdenv/Room-v0", *SET_IDS)


def register_envs() -> None:
    if "fdenv/Room-v0" in gym.registry:
        return
    gym.register("fdenv/Room-v0", entry_point=ENTRY_POINT)
    for env_id, scene_set in SET_IDS.items():
        gym.register(env_id, entry_point=ENTRY_POINT, kwargs={"scene_set": scene_set})
