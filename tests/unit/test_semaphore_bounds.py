"""An index past the end of an array of semaphores travels to the interpreter's semaphore lookup as an id
no semaphore has (intercept/semaphore_bounds.py): the id must bring back the index and the array's size."""

from __future__ import annotations

import numpy as np

from pallas_puzzles.engine.targets.pallas_call.intercept.semaphore_bounds import SemaphoreIndex, _decode, _encode


def test_an_impossible_id_brings_back_the_index_and_the_size():
    for index in (-3, -1, 0, 1, 2, 7, 100):
        for size in (0, 1, 2, 7, 100):
            sem_id = int(np.asarray(_encode(np.int16(index), np.int16(size)), np.int16))  # kernels hold int16 ids
            assert sem_id < 0 and _decode(sem_id) == (index, size)


def test_the_fault_says_which_semaphore_was_asked_for():
    assert str(SemaphoreIndex(2, 2)) == "semaphore index 2 in an array of 2 semaphores"
    assert str(SemaphoreIndex(-1, 1)) == "semaphore index -1 in an array of 1 semaphore"
