"""Orchestration: Prefect flows and the `golden` command line. No decision logic lives here."""

from golden_distill.flows.prefect_env import apply_prefect_defaults, quiet_library_logs

# Before any submodule imports Prefect (it reads settings from the environment on import).
apply_prefect_defaults()
quiet_library_logs()
