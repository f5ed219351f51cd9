"""Views of results: `terminal` (rich text), `json` (for scripts, autograders and CI).

Each view takes the same data (results, the course, progress) and decides only
how it looks; none of them computes a verdict.
"""
