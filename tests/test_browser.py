"""The episode browser (fdenv-report --html): the site's files, then the real pages in headless
Chromium (Debian's chromium driven by playwright; .ci/run installs it)."""

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from fdenv.cli import report
from fdenv.run import read_episodes, run
from fdenv_agents import OracleAgent, ScriptedAgent

from .helpers import scene

TURNS = scene([
    {"speaker": "Ann", "text": "I was reading about the old harbour.", "label": "ctx"},
    {"speaker": "Bob", "text": "Aria, when does the ferry leave?", "label": "final", "gold_answer": "At nine."},
], kind="turn_taking", id="tt-browser")
PAUSE = scene([{"speaker": "Ann", "text": "So I was thinking [pause=1.0] about the trip to the lake.", "label": "pause"}],
              kind="pause", id="pause-browser")
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    folders = [run(OracleAgent(), scenes=[TURNS], out=tmp / "runs", progress=False),
               run(ScriptedAgent([(1.9, "Sure, go on.")]), scenes=[PAUSE], out=tmp / "runs", progress=False)]
    assert report.main([str(tmp / "runs"), "--html", str(tmp / "site"), "--resamples", "200"]) == 0
    return tmp / "site", folders


def test_site_has_a_leaderboard_and_a_page_with_three_tracks_per_episode(site):
    out, folders = site
    index = (out / "index.html").read_text()
    assert "Leaderboard" in index and "oracle *" in index and "scripted *" in index
    assert "turn_taking" in index and "pause_handling" in index
    for folder in folders:
        line = read_episodes(folder)[0]
        stem = Path(line["record"]).name
        page = out / folder.name / f"{stem}.html"
        assert f"{folder.name}/{stem}.html" in index and page.is_file()
        text = page.read_text()
        assert len(re.findall(r"<audio ", text)) == 3
        # the stereo mix: the microphone on the left, the assistant track on the right
        stereo, rate = sf.read(out / folder.name / f"{stem}.stereo.flac", dtype="float32")
        mic = sf.read(folder / (line["record"] + ".mic0.flac"), dtype="float32")[0]
        assistant = sf.read(folder / (line["record"] + ".flac"), dtype="float32")[0]
        assert rate == 16000 and stereo.shape[1] == 2
        np.testing.assert_array_equal(stereo[: len(mic), 0], mic)
        np.testing.assert_array_equal(stereo[: len(assistant), 1], assistant)
        assert np.abs(assistant).max() > 0.01  # both agents spoke: the right channel is not empty


def test_events_carry_their_scores(site):
    out, folders = site
    line = read_episodes(folders[0])[0]
    text = (out / folders[0].name / (Path(line["record"]).name + ".html")).read_text()
    final = next(t for t in line["timeline"] if t["label"] == "final")
    # the final turn's row starts at its own time and holds the turn-taking scores of both profiles
    row = re.search(rf"<tr class=ev data-t='{final['start']:.3f}'>.*?</tr>", text).group(0)
    latency = line["fdb"]["paper"]["latency_s"]
    assert "turn_taking" in row and "<b>paper</b>" in row and "<b>fdb_code</b>" in row and f"latency_s {latency:.2f}" in row
    assert "speech (VAD segment)" in text  # the oracle's answer is an event too


def _launch(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu",
                                                               "--disable-background-networking", "--no-first-run"])


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have chromium: .ci/run installs it (apt-get install chromium)")
        pytest.skip("chromium is not installed here (apt-get install chromium); CI installs it and runs this test")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = _launch(p)
        yield b
        b.close()


def test_pages_load_play_and_seek_in_chromium(site, browser):
    out, folders = site
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((out / "index.html").as_uri())
    page.click("text=tt-browser")  # from the leaderboard's episode list to the episode
    assert page.url.endswith(".html") and "index" not in page.url
    page.wait_for_function("Array.from(document.querySelectorAll('audio')).every(a => a.readyState >= 2)",
                           timeout=15000)
    states = page.evaluate("Array.from(document.querySelectorAll('audio')).map(a => [a.readyState, a.duration])")
    assert len(states) == 3 and all(s >= 2 and d > 1 for s, d in states)

    # clicking an event row seeks every player to its time
    final = next(t for t in read_episodes(folders[0])[0]["timeline"] if t["label"] == "final")
    page.click(f"tr.ev[data-t='{final['start']:.3f}']")
    times = page.evaluate("Array.from(document.querySelectorAll('audio')).map(a => a.currentTime)")
    assert all(abs(t - final["start"]) < 0.05 for t in times), times

    # clicking the picture seeks to the time under the pointer (the plot's own x axis)
    axis = json.loads(page.text_content("#axis"))
    box = page.locator("#timeline img").bounding_box()
    target = 0.25 * axis["duration"]
    x = box["width"] * (axis["x0"] + (axis["x1"] - axis["x0"]) * target / axis["duration"])
    page.mouse.click(box["x"] + x, box["y"] + 3)  # the title strip: above every turn box
    t = page.evaluate("document.querySelector('audio').currentTime")
    assert abs(t - target) < axis["duration"] / box["width"] * 2 + 0.02, (t, target)
    assert errors == []
    page.close()


def test_readme_shows_the_browser():
    root = Path(__file__).resolve().parent.parent
    assert "](docs/browser.png)" in (root / "README.md").read_text()
    assert (root / "docs" / "browser.png").stat().st_size > 10_000
