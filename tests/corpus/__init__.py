"""A corpus of goldgate's observable behaviour, recorded and compared byte for byte.

Each case (``cases.py``) builds a small project and runs real ``goldgate`` commands in it;
what they print, their exit codes and the files they write (result, examples side file,
baseline, Markdown report, JUnit XML) are normalised (``harness.normalise``: times, versions,
paths, ports) and compared with ``recorded/<case>/``. It guards refactors that must change
no behaviour. After a deliberate change of behaviour, record again and review the diff:

    .venv/bin/python -m tests.corpus.record            # every case
    .venv/bin/python -m tests.corpus.record CASE ...   # some
"""
