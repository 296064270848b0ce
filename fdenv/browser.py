"""The episode browser: ``fdenv-report RUN... --html OUT/`` writes a static site (open
``OUT/index.html``; no server needed).

- ``index.html``: the leaderboard (one row per run and dimension, labelled by what differs between
  the runs, with 95% intervals) and every episode of every run with its headline score.
- one page per episode: the timeline picture (scored windows shaded; click it to seek), the
  events (human turns with the scores that judge them, assistant speech with its words; click one
  to seek), and three players on one time axis: the microphone mix, the assistant track and a
  stereo mix (microphone left, assistant right).

Reads run folders only (``episodes.jsonl`` lines and the saved records).
"""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

import numpy as np

from .record import SCORING_RATE, EpisodeRecord
from .report import HEADLINE, MPE_HEADLINE, _cell, episode_warnings
from .timeline import LETTERS

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
th{background:#f4f4f4}.num{font-variant-numeric:tabular-nums}.warn{color:#b00020}.muted{color:#777}
.tl{position:relative;display:inline-block;cursor:crosshair}.tl img{display:block;max-width:100%}
.box{position:absolute;border:1px solid transparent;cursor:pointer}.box:hover{border-color:#000}
#head{position:absolute;top:0;width:2px;background:#d7263d;pointer-events:none}
tr.ev{cursor:pointer}tr.ev:hover{background:#eef4ff}audio{width:100%;max-width:720px}
.players div{margin:.2em 0}.players span{display:inline-block;width:15em}
"""

# Seeking: every player shares the episode's time axis, so a click sets them all; the one that was
# playing goes on playing. The red line follows whichever player moves.
SCRIPT = """
const players = Array.from(document.querySelectorAll('audio'));
const axis = JSON.parse(document.getElementById('axis').textContent);
const head = document.getElementById('head');
function seek(t) {
  t = Math.max(0, Math.min(axis.duration, t));
  for (const p of players) { p.currentTime = Math.min(t, p.duration || t); }
  moveHead(t);
}
function moveHead(t) {
  head.style.left = (100 * (axis.x0 + (axis.x1 - axis.x0) * t / axis.duration)) + '%';
}
for (const p of players) {
  p.addEventListener('timeupdate', () => moveHead(p.currentTime));
  p.addEventListener('play', () => players.forEach(q => { if (q !== p) q.pause(); }));
}
document.querySelectorAll('[data-t]').forEach(el => el.addEventListener('click', ev => {
  ev.stopPropagation(); seek(parseFloat(el.dataset.t));
}));
document.getElementById('timeline').addEventListener('click', ev => {
  const r = ev.currentTarget.getBoundingClientRect();
  const f = (ev.clientX - r.left) / r.width;
  seek((f - axis.x0) / (axis.x1 - axis.x0) * axis.duration);
});
moveHead(0);
"""


def write_site(summaries: list[dict], out: str | Path) -> Path:
    """The browser for labelled run summaries (``fdenv.report.run_summary`` + ``label_runs``) into
    ``out``; returns the path of ``index.html``."""
    from .runs import read_episodes

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    runs = []
    for s in summaries:
        name = s["key"]
        while name in used:  # two folders of the same key under different parents
            name += "-2"
        used.add(name)
        pages = []
        for line in read_episodes(s["folder"]):
            pages.append((line, _episode_page(s, line, out / name)))
        runs.append((s, name, pages))
    index = out / "index.html"
    index.write_text(_index_html(runs), encoding="utf-8")
    return index


# ---- the leaderboard -------------------------------------------------------------------------------

def _page(title: str, body: str, script: str = "") -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title>"
            f"<link rel=icon href='data:,'><style>{CSS}</style></head><body>{body}"
            + (f"<script>{script}</script>" if script else "") + "</body></html>\n")


def _index_html(runs) -> str:
    e = html.escape
    rows = []
    for s, name, _ in runs:
        for dim, entry in s["fdb"].get("dimensions", {}).items():
            cells = " &nbsp; ".join(f"{label} {_cell(entry.get('paper', {}).get(k))}" for k, label in HEADLINE.get(dim, []))
            rows.append((s, name, dim, entry["n"], cells))
        if s.get("mpe"):
            both = s["mpe"]["conditions"].get("all", {})
            cells = " &nbsp; ".join(f"{label} {_cell(both.get(k))}" for k, label in MPE_HEADLINE)
            rows.append((s, name, "multi-party", s["mpe"]["n_episodes"], cells))
    board = "".join(
        f"<tr><td><a href='#{e(name)}'>{e(s['label'])}</a></td><td>{e(dim)}</td><td class=num>{n}</td>"
        f"<td class=num>{cells}</td><td class=warn>{_warn_cell(s)}</td></tr>" for s, name, dim, n, cells in rows)
    body = [f"<h1>fdenv results</h1><h2>Leaderboard</h2><table><tr><th>run</th><th>dimension</th><th>n</th>"
            f"<th>metrics (paper profile, 95% CI over scenes)</th><th></th></tr>{board}</table>"]
    if any(s["privileged"] for s, _, _ in runs):
        body.append("<p class=muted>* privileged agent (saw the scene and the labels): an upper bound, not a model</p>")
    for s, name, pages in runs:
        body.append(f"<h2 id='{e(name)}'>{e(s['label'])}</h2><p class=muted>run folder {e(s['folder'])}</p>"
                    "<table><tr><th>episode</th><th>kind</th><th>seed</th><th>duration</th><th>score (paper)</th><th></th></tr>")
        from .plots import headline_score

        for line, page in pages:
            warn = "sound but no speech" if episode_warnings(line) else ""
            body.append(f"<tr><td><a href='{e(name)}/{e(page.name)}'>{e(line['scene_id'])}</a></td><td>{e(str(line.get('kind')))}</td>"
                        f"<td>{line.get('seed')}</td><td class=num>{line.get('duration_s', 0):.1f} s</td>"
                        f"<td class=num>{e(headline_score(line))}</td><td class=warn>{warn}</td></tr>")
        body.append("</table>")
    return _page("fdenv results", "".join(body))


def _warn_cell(s: dict) -> str:
    n = len(s.get("warned") or ())
    return f"! {n} episode{'s' if n != 1 else ''} with sound but no speech" if n else ""


# ---- one episode ---------------------------------------------------------------------------------

def _episode_page(summary: dict, line: dict, folder: Path) -> Path:
    import matplotlib.pyplot as plt

    from .plots import COLORS, MEANINGS, episode_figure, episode_title, lanes

    folder.mkdir(parents=True, exist_ok=True)
    stem = Path(line["record"]).name
    record = EpisodeRecord.load(Path(summary["folder"]) / line["record"])
    fig = episode_figure(record, episode_title(record, line, summary["label"]))
    fig.canvas.draw()
    width, height = fig.canvas.get_width_height()
    ax = fig.axes[0]
    box = ax.get_window_extent()
    axis = {"duration": record.duration, "x0": box.x0 / width, "x1": box.x1 / width}
    y = lanes(record)
    boxes = []
    for t in record.turns:  # a clickable box over each human turn
        (x0, y0), (x1, y1) = ax.transData.transform([(t.start, y[t.speaker] - 0.4), (t.end, y[t.speaker] + 0.4)])
        boxes.append(f"<div class=box data-t='{t.start:.3f}' title='{html.escape(t.speaker)}: {html.escape(t.label)} "
                     f"at {t.start:.2f} s' style='left:{100 * x0 / width:.3f}%;width:{100 * (x1 - x0) / width:.3f}%;"
                     f"top:{100 * (1 - y1 / height):.3f}%;height:{100 * (y1 - y0) / height:.3f}%'></div>")
    fig.savefig(folder / f"{stem}.png", dpi=fig.dpi)
    plt.close(fig)
    top, bottom = 1 - box.y1 / height, box.y0 / height
    head = f"<div id=head style='top:{100 * top:.2f}%;bottom:{100 * bottom:.2f}%'></div>"
    players = _audio(record, Path(summary["folder"]) / line["record"], folder, stem)
    e = html.escape
    warnings = "".join(f"<p class=warn>! {e(w)}</p>" for w in episode_warnings(line))
    legend = ", ".join(f"<b>{LETTERS.get(k, k)}</b> <span style='color:{COLORS[k]}'>&#9632;</span> {e(v)}"
                       for k, v in MEANINGS.items())
    body = (f"<p><a href='../index.html'>&larr; all runs</a></p><h1>{e(record.scene.id)}</h1>"
            f"<p>{e(summary['label'])} &middot; seed {line.get('seed')} &middot; {record.duration:.1f} s"
            f"{' &middot; privileged agent' if line.get('privileged') else ''}</p>{warnings}"
            f"<div class=tl id=timeline><img src='{e(stem)}.png' alt='timeline of {e(record.scene.id)}'>"
            f"{''.join(boxes)}{head}</div>"
            f"<p class=muted>Click the picture or an event to seek every player. Legend (letter in the text "
            f"timeline, colour in the picture): {legend}.</p>"
            f"<div class=players>{players}</div>"
            f"<h2>Events</h2>{_events_table(record, line)}"
            f"<script type=application/json id=axis>{json.dumps(axis)}</script>")
    page = folder / f"{stem}.html"
    page.write_text(_page(f"{record.scene.id} - {summary['label']}", body, SCRIPT), encoding="utf-8")
    return page


def _audio(record: EpisodeRecord, src: Path, folder: Path, stem: str) -> str:
    """Copies the assistant track (and the microphone mix) and writes the stereo mix; the player tags."""
    import soundfile as sf

    from .record import _to_pcm16

    out = []
    shutil.copyfile(str(src) + ".flac", folder / f"{stem}.assistant.flac")
    mic_file = Path(str(src) + ".mic0.flac")
    if mic_file.is_file():
        shutil.copyfile(mic_file, folder / f"{stem}.mic.flac")
        mic = sf.read(str(mic_file), dtype="float32")[0]
        assistant = record.assistant_16k()
        n = max(len(mic), len(assistant))
        stereo = np.zeros((n, 2), np.float32)
        stereo[: len(mic), 0] = mic
        stereo[: len(assistant), 1] = assistant
        sf.write(folder / f"{stem}.stereo.flac", _to_pcm16(stereo), SCORING_RATE, format="FLAC")
        out.append(("microphone mix (what the assistant hears)", f"{stem}.mic.flac"))
    out.append(("assistant track (what it said)", f"{stem}.assistant.flac"))
    if mic_file.is_file():
        out.append(("stereo: microphone left, assistant right", f"{stem}.stereo.flac"))
    else:
        out.append(("no microphone recording was kept for this episode", None))
    return "".join(f"<div><span>{html.escape(label)}</span>"
                   + (f"<audio controls preload=auto src='{html.escape(f)}'></audio>" if f else "") + "</div>"
                   for label, f in out)


def _events_table(record: EpisodeRecord, line: dict) -> str:
    """Human turns (with the scores that judge them) and assistant speech, in time order."""
    from .plots import MEANINGS

    e = html.escape
    scores = _turn_scores(record, line)
    events = []
    for t in record.turns:
        meaning = MEANINGS.get(t.label, MEANINGS["N1"] if t.label in ("N2", "N3") else t.label)
        events.append((t.start, t.end, e(t.speaker), f"<b>{LETTERS.get(t.label, '?')}</b> {e(meaning)}", e(t.text),
                       scores.get(t.id, "")))
    found = (line.get("segments") or {}).get("fdb") or (line.get("segments") or {}).get("mpe") or {}
    seg = found.get("paper") or {}
    # paper transcribes only what its rules need; fdb_code transcribes the track: words from either
    by_profile = [seg.get("words") or [], (found.get("fdb_code") or {}).get("words") or []]
    for a, b in seg.get("segments") or []:
        said = next((" ".join(w[0] for w in ws if a - 0.05 <= w[1] <= b + 0.05) for ws in by_profile
                     if any(a - 0.05 <= w[1] <= b + 0.05 for w in ws)), "")
        events.append((a, b, "assistant", "speech (VAD segment)", e(said) or "<span class=muted>(no words)</span>", ""))
    events.sort(key=lambda ev: ev[0])
    rows = "".join(f"<tr class=ev data-t='{a:.3f}'><td class=num>{a:.2f}-{b:.2f} s</td><td>{who}</td><td>{what}</td>"
                   f"<td>{text}</td><td>{score}</td></tr>" for a, b, who, what, text, score in events)
    return f"<table><tr><th>time</th><th>who</th><th>what</th><th>words</th><th>scores</th></tr>{rows}</table>"


def _turn_scores(record: EpisodeRecord, line: dict) -> dict[str, str]:
    """``{turn id: scores in words}``: the FDB dimension's gold turn, MPE's requests, silence
    windows and resolved questions."""
    out: dict[str, str] = {}
    fdb = line.get("fdb")
    if fdb:
        from .score.fdb import gold_turns

        turn = list(gold_turns(record, fdb["dimension"]).values())[-1]
        parts = []
        for prof in ("paper", "fdb_code"):
            m = fdb.get(prof) or {}
            vals = [f"{k} {_num(v)}" for k, v in m.items()
                    if v is not None and not isinstance(v, (str, list, dict))]  # text: the answer, below
            if vals:
                parts.append(f"<b>{prof}</b>: " + ", ".join(html.escape(v) for v in vals))
        answer = (fdb.get("paper") or {}).get("response_text") or (fdb.get("fdb_code") or {}).get("response_text")
        if answer:
            parts.append(f"answer judged: {html.escape(answer)}")
        out[turn.id] = f"{html.escape(fdb['dimension'])}<br>" + "<br>".join(parts)
    details = (line.get("mpe") or {}).get("details") or {}
    for d in details.get("requests", []):
        verdict = {True: "correct", False: "wrong", None: "not judged"}[d.get("correct")]
        onset = "" if d.get("onset_s") is None else f", onset {d['onset_s']:.2f} s"
        answer = f"<br>answer: {html.escape(d['answer'])}" if d.get("answer") else ""
        out[d["turn"]] = (f"presence {_yes(d.get('presence'))}, fresh onset {_yes(d.get('fresh_onset'))}{onset}, "
                          f"{verdict}{answer}")
    for d in details.get("silence", []):
        n = len(d.get("intrusions") or ())
        out[d["turn"]] = f"silence kept: {_yes(d.get('preserved'))}" + (f" ({n} intrusion{'s' * (n != 1)})" if n else "")
    for d in details.get("n4", []):
        failure = f", {d['failure'].replace('_', ' ')}" if d.get("failure") else ""
        out[d["question"]] = (f"answered in window: {_yes(d.get('window_response'))}; yield eligible "
                              f"{_yes(d.get('eligible'))}, yielded {_yes(d.get('yielded'))}{failure}")
    return out


def _yes(v) -> str:
    return {True: "yes", False: "no", None: "-"}.get(v, str(v))


def _num(v) -> str:
    return f"{v:.2f}" if isinstance(v, float) else str(v)
