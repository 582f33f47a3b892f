"""Orchestration: Prefect flows and the `golden` command line. No decision logic lives here."""
