"""The IDA* search: one explicit-stack driver for every heuristic (:mod:`.driver`), the units of work an
iteration is cut into (:mod:`.units`), the threads that search them at once (:mod:`.parallel`), and the
:class:`~.solver.Solver` API with batches of instances (:mod:`.solver`).
"""
