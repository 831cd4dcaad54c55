"""The built-in partitions (one ``NAME.txt`` each), installed as the data package ``pdbtool.partitions``."""
