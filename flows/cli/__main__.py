"""`python -m golden_distill.flows.cli ...` is `golden ...` (for environments without the script)."""

from golden_distill.flows.cli import main

main()
