"""Shared pytest configuration.

tests/ mirrors the package: tests/<layer>/test_*.py tests polars_rankeval/<layer>/;
tests of the whole package (properties, the README, the layers) are at the top. Every
folder is a package (``tests.<layer>.test_x``), so file names need not be unique;
helpers (``tests._reference`` ...) and ``tests/data`` are shared. The small frames
that several files read (the Hivemall and lecture examples, RecTools' serendipity
example, tiny one- and two-user cases) are constants of ``tests.frames``.
"""
