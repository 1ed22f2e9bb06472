"""Private helpers shared by every layer.

Type aliases, tie policies, statistics (tests, resampling, intervals), atomic writes,
markup and p-value formatting helpers. Imports nothing of the package.
"""
