"""Minimum vertex cover: branch and bound with the clique pattern databases of Felner, Korf and Hanan (static
and dynamic), matching, clique-cover and LP bounds, and the reductions of modern solvers.

Library modules: :mod:`.graph` (reading, checking and drawing graphs), :mod:`.cliques` (the clique table and
its file), :mod:`.reductions` (degree 0/1, folding, domination, LP/crown, components), :mod:`.kernels` (the
Numba search and its bounds), :mod:`.search` (the solver).  :mod:`.commands` is the domain's command line.
"""
