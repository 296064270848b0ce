"""The kept turn-end data (``data/turn_end``): every file its README lists is whole, readable by
``fit`` and holds the scenes the README says, made as its command says."""

from __future__ import annotations

import re
from pathlib import Path

from fdenv.cli import turn_end as cli
from fdenv.scene import load_set

FOLDER = Path(__file__).resolve().parents[1] / "data" / "turn_end"


def listed() -> dict[str, tuple[int, str]]:
    """file -> (scenes, command) from the README's table."""
    rows = {}
    for line in (FOLDER / "README.md").read_text().splitlines():
        m = re.match(r"\| `([^`]+\.jsonl\.gz)` \|.*\| (\d+) of \d+ \| `([^`]+)` \|$", line)
        if m:
            rows[m.group(1)] = (int(m.group(2)), m.group(3))
    return rows


def test_every_kept_file_is_listed_whole_and_holds_the_scenes_it_says():
    rows = listed()
    assert rows and set(rows) == {p.name for p in FOLDER.glob("*.jsonl.gz")}
    for name, (scenes, command) in rows.items():
        lines = [row for _, row in cli._rows(FOLDER / name)]
        assert len({(r["set"], r["scene_id"]) for r in lines}) == scenes, name
        silences = cli.read_lines(FOLDER / name, sound=True, words=True)  # what a fit with --sound --confidence reads
        assert silences and all(r["labels"] for r in silences)
        split = re.search(r"--split (\w+)", command).group(1)
        for set_name in {r["set"] for r in lines}:  # every scene is one of that split's
            ids = {sc.id for sc in load_set(set_name, split)}
            assert {r["scene_id"] for r in lines if r["set"] == set_name} <= ids, (name, set_name)
        enhanced = "--enhance-db 12" in command
        assert all((r.get("enhance_db") == 12) == enhanced for r in silences), name
