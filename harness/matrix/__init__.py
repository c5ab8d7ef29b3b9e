"""``harness matrix``: the suites over driver versions x target versions x repeats.

A matrix is certified one *cell* at a time: a cell is one pymongo release with
one target (a SecantusDB release on the embedded or daemon target, or a real
server taken as it is). Each cell runs in its own cached Python environment,
so what ran is exactly what was asked for, and the versions are read back from
the result records rather than trusted from the cell's label.

    definition.py  the matrix asked for (YAML file and flags), validated up front
    cells.py       the cells it expands to, their ids and labels
    installers.py  uv (or venv + pip) commands that create and fill an environment
    envs.py        the environment cache: keys, locks, completion markers
    process.py     child processes in their own process group, logged, killable
    steps.py       the commands one repeat runs and what their exit statuses mean
    observe.py     what the records say actually ran, checked against the request
    manifest.py    the durable state of a matrix: atomic rewrites, resume
    files.py       atomic JSON writes (manifest, environment markers)
    scheduler.py   cells N at a time, Ctrl-C, progress
    summary.py     the progress lines and the closing table
    wheelhouse.py  the ``pip download`` commands that fill an offline wheelhouse
    cli.py         the ``harness matrix`` command line
"""
