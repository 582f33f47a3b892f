"""The alert automations declared in configs/alerts.yaml, checked without a server (the real
server test is in test_nightly_deployment.py)."""

from __future__ import annotations

import pytest

from golden_distill.flows.alerts import ALERTS_PATH, AlertsError, apply_alerts, load_automations


def test_declared_automations_watch_distill_and_use_the_block():
    automations = load_automations(ALERTS_PATH, "00000000-0000-0000-0000-000000000001")
    by_name = {a.name: a for a in automations}
    failed = by_name["golden-nightly-failed"].trigger
    assert {
        "prefect.flow-run.Failed",
        "prefect.flow-run.Crashed",
        "prefect.flow-run.TimedOut",
    } <= set(failed.expect)
    late = by_name["golden-nightly-late"].trigger
    assert late.after == {"prefect.flow-run.Late"} and "prefect.flow-run.Running" in late.expect
    assert late.posture == "Proactive" and late.for_each == {"prefect.resource.id"}
    missed = by_name["golden-nightly-missed"].trigger
    assert missed.expect == {"prefect.flow-run.Completed"} and missed.posture == "Proactive"
    assert 24 * 3600 < missed.within.total_seconds() <= 48 * 3600  # one night and some slack
    for automation in automations:
        assert automation.trigger.match_related.root["prefect.resource.name"] == "distill"
        (action,) = automation.actions
        assert str(action.block_document_id) == "00000000-0000-0000-0000-000000000001"
    assert "{{ flow_run.state.message }}" in by_name["golden-nightly-failed"].actions[0].body


def test_no_webhook_url_in_the_environment_is_a_clear_error():
    with pytest.raises(AlertsError, match="GOLDEN_ALERT_WEBHOOK_URL"):
        apply_alerts(environ={})
    assert "http" not in ALERTS_PATH.read_text().split("automations:", 1)[1].split("#")[0]
