"""The tpu-kernel target's pure parts, without JAX: its options, the core deadlock rule, the core races' words."""

from __future__ import annotations

from pallas_puzzles.engine.targets.pallas_call.intercept.core_waits import CoreWait, picture, sentence, stuck
from pallas_puzzles.engine.targets.tpu_kernel import options


def test_options_are_read_and_refused_in_one_sentence_each():
    assert options.problems({}) == []
    good = {"in_place": "cache", "run_time_grid": "count", "random": {"key": "key", "keep": 0.75, "rows": 8}}
    assert options.problems(good) == []
    parsed = options.parse(good)
    assert parsed.in_place == "cache" and parsed.run_time_grid == "count"
    random = parsed.random
    assert random is not None and (random.key, random.keep, random.rows) == ("key", 0.75, 8)
    assert options.problems({"in_place": ""}) == ["target_options.in_place must name one of the puzzle's inputs"]
    assert options.problems({"inplace": "cache"}) == ["unknown target option 'inplace'"]
    assert options.problems({"random": {"key": "key", "keep": 1.5, "rows": 8}}) == [
        "target_options.random: key names an input, 0 < keep < 1, rows > 0"]
    assert options.problems({"random": {"key": "key"}}) == [
        "target_options.random must give exactly key (an input's name), keep and rows"]


def test_a_wait_is_stuck_only_when_every_running_core_waits_for_nothing():
    waiting = CoreWait(core=0, wanted=1, has=0, pending=False)
    assert stuck([waiting], frozenset({0})) == (waiting,)  # core 1 has finished: nobody can signal core 0
    assert stuck([waiting], frozenset({0, 1})) is None  # core 1 still runs: it may signal
    other = CoreWait(core=1, wanted=1, has=0, pending=False)
    assert stuck([waiting, other], frozenset({0, 1})) == (waiting, other)  # both wait for ever
    assert stuck([waiting, CoreWait(1, 1, 0, pending=True)], frozenset({0, 1})) is None  # a copy may still land
    assert stuck([CoreWait(0, 1, 1, False)], frozenset({0})) is None  # the count is there: the wait ends
    assert stuck([], frozenset()) is None
    assert picture((waiting,)) == ((0, 1, 0),)


def test_the_stuck_cores_in_one_sentence():
    text = sentence((CoreWait(0, 1, 0, False),), 2, "/no/such/file.py")
    assert text == ("Core 0 waits for a count of 1 (it has 0); core 1 has finished the kernel: no core is left to "
                    "signal, so the kernel would wait for ever.")
    both = sentence((CoreWait(0, 2, 1, False), CoreWait(1, 1, 0, False)), 2, "/no/such/file.py")
    assert both.startswith("Core 0 waits for a count of 2 (it has 1); core 1 waits for a count of 1 (it has 0):")
