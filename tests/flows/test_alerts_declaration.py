"""The alert automations declared in configs/alerts.yaml, checked without a server (the real
server test is in test_nightly_deployment.py)."""

from __future__ import annotations

import pytest

from golden_distill.flows.alerts import ALERTS_PATH, AlertsError, apply_alerts, load_automations


def test_declared_automation_watches_distill_failures_and_uses_the_block():
    (automation,) = load_automations(ALERTS_PATH, "00000000-0000-0000-0000-000000000001")
    trigger = automation.trigger
    assert {"prefect.flow-run.Failed", "prefect.flow-run.Crashed"} <= set(trigger.expect)
    assert trigger.match_related.root["prefect.resource.name"] == "distill"
    (action,) = automation.actions
    assert str(action.block_document_id) == "00000000-0000-0000-0000-000000000001"
    assert "{{ flow_run.state.message }}" in action.body


def test_no_webhook_url_in_the_environment_is_a_clear_error():
    with pytest.raises(AlertsError, match="GOLDEN_ALERT_WEBHOOK_URL"):
        apply_alerts(environ={})
    assert "http" not in ALERTS_PATH.read_text().split("automations:", 1)[1].split("#")[0]
