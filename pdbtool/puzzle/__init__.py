"""The real puzzle: boards and goals (:mod:`.board`), and instance files in and results out
(:mod:`.instances`).

This layer knows nothing of pattern databases; the layers above build on its :class:`~.board.Board`.
"""
