"""Pattern databases: everything from a pattern of tiles to a verified table on disk.

* :mod:`.ranking` -- patterns of tiles and the ranking of their placements as k-permutations;
* :mod:`.build` -- the two backward breadth-first builders (blank ignored, blank minimized);
* :mod:`.encodings` -- the compact payloads (nibble, mod3, parity, min-nibble, sparse) and their decoders;
* :mod:`.table` -- a table in memory; :mod:`.fileformat` -- the checksummed file format;
* :mod:`.cache` -- the per-user cache (one get-or-build for every kind of table);
* :mod:`.sharing` -- which patterns of a partition share one table through a board symmetry;
* :mod:`.partitions`, :mod:`.resolve` -- named partitions and partition files, and the one resolver of what
  a caller or the command line names as a partition;
* :mod:`.operations` -- what the commands do to a partition's tables (build, convert, find, load for search),
  each following the sharing plan of :func:`.sharing.plan_tables`;
* :mod:`.pairs_triples` -- the tables of every pair and triple of tiles used by the dynamic heuristic;
* :mod:`.verify`, :mod:`.inspection` -- checking and describing table files.
"""
