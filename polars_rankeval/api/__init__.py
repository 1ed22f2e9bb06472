"""``evaluate`` and ``join``: a request run on an engine.

With the helpers of their inputs (overlap, subtopics) and the Spark entry point.

May import: ``engines`` and the layers below it.
"""
