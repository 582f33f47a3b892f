"""`python -m golden_distill.flows.cli ...` is `golden ...` (where the script is not on PATH)."""

from golden_distill.flows.cli import main

main()
