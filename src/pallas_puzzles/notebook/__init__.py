"""The notebook and script API behind `import pallas_puzzles as pp`: checks (`api`) and the
course (`course`). `pallas_puzzles/__init__.py` loads them on first use."""
