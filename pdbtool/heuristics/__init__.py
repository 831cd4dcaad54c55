"""Heuristics for the IDA* search: Manhattan distance, linear conflicts, additive pattern sums (byte or
compactly encoded tables, with the diagonal reflection and tables shared through symmetries), and the
dynamically partitioned pairs and triples combined by a weighted vertex cover.
"""
