"""Progress is written atomically and a corrupt file never crashes anything."""

from __future__ import annotations

import json

from pallas_puzzles.metadata import load_course
from pallas_puzzles.progress import Progress
from pallas_puzzles.state import State, load_state, save_state
from pallas_puzzles.workspace import Workspace

COURSE = load_course()


def test_round_trip(tmp_path):
    ws = Workspace(tmp_path)
    save_state(ws, State(current=3, solved={1, 2}, hints_seen={3: 1}))
    state, warning = load_state(ws, COURSE)
    assert warning is None
    assert (state.current, state.solved, state.hints_seen) == (3, {1, 2}, {3: 1})
    assert not [p for p in ws.meta.iterdir() if p.name.startswith(".state-")], "no temp files left behind"


def test_missing_file_gives_a_fresh_start(tmp_path):
    state, warning = load_state(Workspace(tmp_path), COURSE)
    assert warning is None and state.current == COURSE.counted[0].number and not state.solved


def test_corrupt_variants_are_set_aside(tmp_path):
    ws = Workspace(tmp_path)
    for text in ("", "[]", '{"current": "x"}', '{"current": 999}', "\x00\x01"):
        ws.meta.mkdir(exist_ok=True)
        ws.state_file.write_text(text)
        state, warning = load_state(ws, COURSE)
        assert warning and "unreadable" in warning
        assert state.current == COURSE.counted[0].number
        assert not ws.state_file.exists()


def test_unknown_puzzles_in_state_are_dropped(tmp_path):
    ws = Workspace(tmp_path)
    ws.meta.mkdir()
    ws.state_file.write_text(json.dumps({"current": 1, "solved": [1, 4242], "hints_seen": {"4242": 3}}))
    state, warning = load_state(ws, COURSE)
    assert warning is None and state.solved == {1} and state.hints_seen == {}


def _progress(tmp_path, state: State) -> Progress:
    return Progress(Workspace(tmp_path), COURSE, state, warn=lambda message: None)


def test_next_unsolved_wraps_round(tmp_path):
    first, last = COURSE.counted[0], COURSE.counted[-1]
    progress = _progress(tmp_path, State(current=last.number, solved={p.number for p in COURSE.counted[1:]}))
    assert progress.next_unsolved(after=last) == first
    progress = _progress(tmp_path, State(current=first.number, solved={first.number}))
    assert progress.next_unsolved(after=first) == COURSE.counted[1]
    progress = _progress(tmp_path, State(current=first.number, solved={p.number for p in COURSE.counted}))
    assert progress.next_unsolved(after=first) is None


def test_a_second_corrupt_file_never_overwrites_the_first(tmp_path):
    ws = Workspace(tmp_path)
    ws.meta.mkdir()
    for text in ("{first", "{second", "{third"):
        ws.state_file.write_text(text)
        _, warning = load_state(ws, COURSE)
        assert warning and "moved to" in warning
    kept = sorted(p.read_text() for p in ws.meta.glob("state.corrupt*.json"))
    assert kept == ["{first", "{second", "{third"]
