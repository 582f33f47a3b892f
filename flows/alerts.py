"""Alerts as code: apply configs/alerts.yaml (automations) with a webhook block from the env.

The repository declares *what* alerts (automations: trigger + notification text); *where* they
go is a webhook URL that only the environment knows (``GOLDEN_ALERT_WEBHOOK_URL``), saved as a
Prefect ``CustomWebhookNotificationBlock`` named ``golden-nightly-alert``. Applying is
idempotent: the block is overwritten and each automation replaced by name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from prefect.blocks.notifications import CustomWebhookNotificationBlock
from prefect.client.orchestration import get_client
from prefect.events.schemas.automations import AutomationCore

from golden_distill.datasets.shipped_configs import shipped_config

#: The declared automations (shipped beside the pipeline config).
ALERTS_PATH = shipped_config("alerts.yaml")
URL_ENV = "GOLDEN_ALERT_WEBHOOK_URL"
BLOCK_NAME = "golden-nightly-alert"


#: A block id to check the automations file with before the real block is saved.
PLACEHOLDER_BLOCK = "00000000-0000-0000-0000-000000000000"


class AlertsError(ValueError):
    """The alerts cannot be applied (no webhook URL, a malformed automation file)."""


def load_automations(path: Path, block_id: str) -> list[AutomationCore]:
    """The automations of ``path``, each notification sent through block ``block_id``."""
    try:
        spec = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise AlertsError(f"{path}: {str(exc).splitlines()[0]}") from None
    if not isinstance(spec, dict):
        raise AlertsError(f"{path}: expected a mapping with `automations:`")
    found = []
    for raw in spec.get("automations") or []:
        for action in raw.get("actions") or []:
            if action.get("type") == "send-notification":
                action["block_document_id"] = block_id
        try:
            found.append(AutomationCore.model_validate(raw))
        except ValueError as exc:
            raise AlertsError(f"{path}: automation {raw.get('name')!r}: {exc}") from None
    if not found:
        raise AlertsError(f"{path}: no automations declared")
    return found


def apply_alerts(
    path: Path = ALERTS_PATH, environ: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """Save the webhook block and (re)create every automation; their names and ids."""
    env = os.environ if environ is None else environ
    url = env.get(URL_ENV, "").strip()
    if not url:
        raise AlertsError(f"set {URL_ENV} to the webhook that receives alerts")
    load_automations(path, PLACEHOLDER_BLOCK)  # a bad file fails before anything is saved
    block = CustomWebhookNotificationBlock(
        name="golden-distill",
        url=url,
        method="POST",
        json_data={"subject": "{{subject}}", "body": "{{body}}"},
        # the operator's own endpoint (often an internal alert router): allowed on any address
        allow_private_urls=True,
    )
    block_id = str(block.save(BLOCK_NAME, overwrite=True))
    applied = []
    with get_client(sync_client=True) as client:
        for automation in load_automations(path, block_id):
            for old in client.read_automations_by_name(automation.name):
                client.delete_automation(old.id)
            new_id = client.create_automation(automation)
            applied.append({"name": automation.name, "id": str(new_id)})
    return applied
