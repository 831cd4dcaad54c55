"""Planning the tables for a memory budget (``pdbtool plan``): the candidates and their costs
(:mod:`.space`), their score, Korf, Reid & Edelkamp's predicted nodes from one shared sample of random
states (:mod:`.scoring`), the search over candidates with its state file (:mod:`.search`) and the partition
or catalogue file it writes (:mod:`.files`).  ``docs/plan.md`` describes the method.
"""
