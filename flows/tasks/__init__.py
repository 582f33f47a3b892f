"""Prefect tasks of the `distill` flow, one small module each. They wire library calls together,
move files between steps and report counts; the decisions live in filters/, redaction/, datasets/.
"""
