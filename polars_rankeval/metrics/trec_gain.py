"""Placeholder: filled in by the issue-3 measure work in progress."""
