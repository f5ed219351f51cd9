"""The integrity rules' vocabulary (engine/integrity/vocabulary.py, written without JAX) names JAX's own
primitives on this leg's jax: a course's `launcher_ops` and the layout a launcher may do mean what they say."""

from __future__ import annotations

import jax
import jax.extend.core

from pallas_puzzles.engine.integrity.vocabulary import LAYOUT, OPERATIONS


def _primitive_names() -> set[str]:
    found = set()
    for module in (jax.lax, jax.extend.core.primitives):
        for value in vars(module).values():
            if isinstance(value, jax.extend.core.Primitive):
                found.add(value.name)
    return found


def test_every_operation_a_course_may_allow_is_a_jax_primitive():
    assert OPERATIONS - _primitive_names() == set()


def test_the_layout_primitives_are_jax_primitives():
    ours = {"join", "device_put", "optimization_barrier", "sharding_constraint", "mesh_cast", "reshard",
            "pvary", "tile", "stack", "split"}  # the graph's own join; names that vary between jax versions
    assert LAYOUT - ours - _primitive_names() == set()
