"""The IDA* search around the kernels: the :class:`~.solver.Solver` API, batches of instances, and the
threaded search that runs the subtrees of one iteration at once (:mod:`.parallel`).
"""
