"""Checking many files at once, for every command that does: the service (`service`) that takes
jobs and options (`jobs`) and tells listeners what happens (`events`), which puzzles can run here
(`support`), the stored verdicts (`cache`) and grade's table of submissions (`grade_results`)."""
