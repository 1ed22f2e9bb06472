"""The one failure of the trec_eval clone: :class:`TrecEvalError`.

trec_eval stops with a message on standard error and an exit status (1 for a usage error
or an illegal measure, 2 for unreadable input, 4 for duplicate documents or a measure
its relation format cannot compute, 7 when no query has both results and judgments, 134
for the aborts of the preference code). The whole package raises this one class, so the
``trec-eval`` command prints and exits the same way whichever module failed.
"""

from __future__ import annotations


class TrecEvalError(ValueError):
    """A condition on which trec_eval itself stops with an error.

    ``message`` is the text trec_eval prints (its lines may already start with
    ``trec_eval: ``, as the preference code's do), ``status`` its exit status and
    ``query`` the query it was reading, if any.

    Examples
    --------
    >>> error = TrecEvalError("trec_eval: duplicate cutoffs detected", 2, query="q1")
    >>> error.status, error.query, error.stderr
    (2, 'q1', 'trec_eval: duplicate cutoffs detected')
    >>> TrecEvalError("illegal measure 'x'", 1).stderr
    "trec_eval: illegal measure 'x'"
    """

    def __init__(self, message: str, status: int = 2, *, query: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.query = query

    @property
    def stderr(self) -> str:
        """The text the ``trec-eval`` command prints: the message after one ``trec_eval: ``."""
        return f"trec_eval: {self.message.removeprefix('trec_eval: ')}"
