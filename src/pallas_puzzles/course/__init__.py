"""The course: its model (`model`), how a course folder is read (`reader`) and which course a
workspace uses (`source`). The built-in course's definition lives in `builtin/`; its exercises and
solutions are the repository's top-level `exercises/` and `solutions/`, packed into the wheel."""
