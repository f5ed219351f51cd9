"""Checking many files at once, for every command that does: which puzzles can run here
(`support`), the stored verdicts (`cache`) and the service that hands the rest to checkers."""
