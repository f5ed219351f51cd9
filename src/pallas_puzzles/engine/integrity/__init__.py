"""The answer comes from the learner's kernel (issue 31).

- vocabulary: what each JAX operation does to the data (layout or computing), without JAX;
- origin, answers, verdict: a launcher's traced graph judged (engine/launcher_graph.py): arithmetic
  on the data outside a kernel is a finding naming the launcher line;
- file_rules, guard: a learner's file may not reach the course's answers or the checker's insides
  (statically, before it runs; and its file reads while it runs).
"""
