"""Progress is written atomically and a corrupt file never crashes anything."""

from __future__ import annotations

import json

from helpers import COURSE

from pallas_puzzles.workspace.folder import Workspace
from pallas_puzzles.workspace.progress import Progress
from pallas_puzzles.workspace.state import V1_NAMES, State, load_state, save_state


def test_round_trip(tmp_path):
    ws = Workspace(tmp_path)
    save_state(ws, State(current="outer_add", solved={"constant_add", "constant_add_blocked"},
                         hints_seen={"outer_add": 1}))
    state, warning = load_state(ws, COURSE)
    assert warning is None
    assert (state.current, state.solved, state.hints_seen) == (
        "outer_add", {"constant_add", "constant_add_blocked"}, {"outer_add": 1})
    assert json.loads(ws.state_file.read_text())["version"] == 2
    assert not [p for p in ws.meta.iterdir() if p.name.startswith(".state-")], "no temp files left behind"


def test_missing_file_gives_a_fresh_start(tmp_path):
    state, warning = load_state(Workspace(tmp_path), COURSE)
    assert warning is None and state.current == COURSE.puzzles[0].name and not state.solved


def test_corrupt_variants_are_set_aside(tmp_path):
    ws = Workspace(tmp_path)
    for text in ("", "[]", '{"current": "x"}', '{"current": 999}', "\x00\x01", '{"version": 7, "current": "tour"}'):
        ws.meta.mkdir(exist_ok=True)
        ws.state_file.write_text(text)
        state, warning = load_state(ws, COURSE)
        assert warning and "unreadable" in warning
        assert state.current == COURSE.puzzles[0].name
        assert not ws.state_file.exists()


def test_unknown_puzzles_in_state_are_dropped(tmp_path):
    ws = Workspace(tmp_path)
    ws.meta.mkdir()
    ws.state_file.write_text(json.dumps({"current": 1, "solved": [1, 4242], "hints_seen": {"4242": 3}}))
    state, warning = load_state(ws, COURSE)
    assert warning is None and state.solved == {"constant_add"} and state.hints_seen == {}


def test_a_removed_puzzle_leaves_its_name_behind_quietly(tmp_path):
    ws = Workspace(tmp_path)
    ws.meta.mkdir()
    ws.state_file.write_text(json.dumps({"version": 2, "current": "gone", "solved": ["gone", "constant_add"],
                                         "hints_seen": {"gone": 2, "outer_add": 1}}))
    state, warning = load_state(ws, COURSE)
    assert warning is None
    assert state.current == "constant_add_blocked", "the first unsolved puzzle"
    assert (state.solved, state.hints_seen) == ({"constant_add"}, {"outer_add": 1})


def test_the_first_release_numbers_are_all_still_in_the_course():
    """Version-1 progress files are read through V1_NAMES: every name there must stay in the course."""
    assert all(COURSE.has(name) for name in V1_NAMES)


def test_a_workspace_of_the_first_release_keeps_its_progress(workspace, cli):
    """Its state file numbered the puzzles: the first use of this release keeps every solved puzzle,
    the current one and the hints seen, and writes them back by name."""
    from pallas_puzzles.cli import app

    state_file = workspace / ".pallas_puzzles" / "state.json"
    state_file.write_text(json.dumps({"version": 1, "current": 7, "solved": [1, 2, 3, 25],
                                      "hints_seen": {"7": 2, "25": 3}}, indent=2))
    result = cli.invoke(app, ["list", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    solved = {p["name"] for p in listed["puzzles"] if p["status"] == "solved"}
    assert solved == {"constant_add", "constant_add_blocked", "outer_add", "dma_copy"}
    assert listed["current"] == COURSE.find("long_sum").number
    seen = {p["name"]: p["hints_seen"] for p in listed["puzzles"] if p["hints_seen"]}
    assert seen == {"long_sum": 2, "dma_copy": 3}
    result = cli.invoke(app, ["hint", "long_sum"])
    assert result.exit_code == 0 and "Hint 3/3" in result.output
    saved = json.loads(state_file.read_text())
    assert saved["version"] == 2 and saved["current"] == "long_sum" and saved["hints_seen"]["long_sum"] == 3


def _progress(tmp_path, state: State) -> Progress:
    return Progress(Workspace(tmp_path), COURSE, state, warn=lambda message: None)


def test_next_unsolved_wraps_round(tmp_path):
    first, last = COURSE.counted[0], COURSE.counted[-1]
    progress = _progress(tmp_path, State(current=last.name, solved={p.name for p in COURSE.counted[1:]}))
    assert progress.next_unsolved(after=last) == first
    progress = _progress(tmp_path, State(current=first.name, solved={first.name}))
    assert progress.next_unsolved(after=first) == COURSE.counted[1]
    progress = _progress(tmp_path, State(current=first.name, solved={p.name for p in COURSE.counted}))
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
