"""The effort of a search before it runs: random instances (:mod:`.states`), the distribution of a
heuristic's values over uniformly random solvable states (:mod:`.evaluators`, :mod:`.sampling`), the
brute-force tree's level sizes by the blank's cell (:mod:`.tree`) and Korf, Reid & Edelkamp's prediction of
the nodes of each IDA* iteration (:mod:`.prediction`), with its use in the solve progress line
(:mod:`.eta`).  ``docs/prediction.md`` describes the method.
"""
