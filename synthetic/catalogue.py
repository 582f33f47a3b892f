"""The enterprise tool catalogue the synthetic agents call: ERP, MES, CRM, finance, KB, HR, WMS.

Each tool is data: its name (prefixed by its system, as production tools are), whether it writes,
and templates for its arguments and response. A template string ``"$slot"`` is replaced by the
member's value for that slot (a personal value, a key, an amount...), so the *shape* of a call is
fixed per tool while every record gets its own values. ``amount_path`` names where a write tool
carries the amount the high-value funnel reads (one of the funnel's default JSON paths).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SYSTEM_BY_PREFIX: dict[str, str] = {
    "erp_": "ERP",
    "mes_": "MES",
    "crm_": "CRM",
    "fin_": "FINANCE",
    "kb_": "KB",
    "hr_": "HR",
    "wms_": "WMS",
}

#: Hand-off tools the human_handoff funnel knows by default.
HANDOFF_TOOLS: tuple[str, ...] = (
    "transfer_to_human_agents",
    "handoff_to_human",
    "escalate_to_human",
)
#: The one alternative route the recovery funnel knows by default (failed tool -> alternatives).
ALTERNATIVES: dict[str, tuple[str, ...]] = {"erp_get_order": ("erp_search_orders",)}


def system_of(name: str) -> str | None:
    """The system a tool name's prefix says it belongs to (None for hand-off tools)."""
    for prefix, system in SYSTEM_BY_PREFIX.items():
        if name.startswith(prefix):
            return system
    return None


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    system: str | None
    mutating: bool
    args: dict[str, Any]
    response: dict[str, Any]
    amount_path: str | None = None


def _t(
    name: str,
    args: dict[str, Any],
    response: dict[str, Any],
    *,
    write: bool = False,
    amount_path: str | None = None,
) -> Tool:
    return Tool(name, system_of(name), write, args, response, amount_path)


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        # ERP ---------------------------------------------------------------------------------
        _t(
            "erp_get_order",
            {"orderId": "$order_id"},
            {
                "orderId": "$order_id",
                "status": "PENDING",
                "total": "$amount_small",
                "customer": {
                    "customerId": "$customer_id",
                    "customerName": "$person",
                    "email": "$email",
                },
                "items": [{"sku": "$sku", "qty": "$qty", "amount": "$amount_small"}],
            },
        ),
        _t(
            "erp_search_orders",
            {"customerId": "$customer_id", "status": "OPEN"},
            {
                "orders": [{"orderId": "$order_id", "total": "$amount_small", "status": "OPEN"}],
                "count": 1,
            },
        ),
        _t(
            "erp_get_inventory",
            {"sku": "$sku", "warehouse": "$warehouse"},
            {"sku": "$sku", "available": "$qty", "reserved": 3, "warehouse": "$warehouse"},
        ),
        _t(
            "erp_update_order",
            {
                "orderId": "$order_id",
                "total": "$amount",
                "shippingAddress": {"street": "$address", "recipient": "$person"},
            },
            {"orderId": "$order_id", "status": "UPDATED"},
            write=True,
            amount_path="total",
        ),
        _t(
            "erp_create_purchase_order",
            {
                "vendorId": "$vendor",
                "requestId": "$request_id",
                "requestedBy": "$person",
                "items": [
                    {"sku": "$sku", "qty": "$qty", "amount": "$amount"},
                    {"sku": "$sku2", "qty": 1, "amount": "$amount_small"},
                ],
            },
            {"poNumber": "$po_number", "status": "CREATED"},
            write=True,
            amount_path="items[*].amount",
        ),
        _t(
            "erp_cancel_order",
            {"orderId": "$order_id", "reason": "customer_request"},
            {"orderId": "$order_id", "status": "CANCELLED"},
            write=True,
        ),
        # MES ---------------------------------------------------------------------------------
        _t(
            "mes_get_work_order",
            {"workOrderId": "$work_order"},
            {
                "workOrderId": "$work_order",
                "line": "L3",
                "status": "RUNNING",
                "operator": "$person",
            },
        ),
        _t(
            "mes_list_machine_alarms",
            {"machineId": "$machine", "since": "$date"},
            {
                "alarms": [
                    {"code": "E-204", "severity": "minor"},
                    {"code": "W-17", "severity": "info"},
                ]
            },
        ),
        _t(
            "mes_update_work_order",
            {
                "workOrderId": "$work_order",
                "status": "ON_HOLD",
                "note": "hold requested by $person",
            },
            {"workOrderId": "$work_order", "status": "ON_HOLD"},
            write=True,
        ),
        _t(
            "mes_record_downtime",
            {
                "machineId": "$machine",
                "minutes": "$qty",
                "reportedBy": {"fullName": "$person", "phone": "$phone"},
            },
            {"eventId": "$event_id", "recorded": True},
            write=True,
        ),
        # CRM ---------------------------------------------------------------------------------
        _t(
            "crm_get_customer",
            {"customerId": "$customer_id"},
            {
                "customerId": "$customer_id",
                "fullName": "$person",
                "email": "$email",
                "phone": "$phone",
                "addresses": [{"street": "$address", "type": "billing"}],
                "aliases": ["$person", "$person2"],
                "tier": "gold",
            },
        ),
        _t(
            "crm_search_contacts",
            {"query": "$person"},
            {
                "contacts": [
                    {"contactName": "$person", "email": "$email", "accountId": "$account_id"},
                    {"contactName": "$person2", "email": "$email2"},
                ]
            },
        ),
        _t(
            "crm_update_contact",
            {
                "customerId": "$customer_id",
                "contact": {"fullName": "$person", "email": "$email", "phones": ["$phone"]},
            },
            {"customerId": "$customer_id", "updated": True},
            write=True,
        ),
        _t(
            "crm_create_ticket",
            {
                "customerId": "$customer_id",
                "subject": "follow-up",
                "description": "Callback requested by $person at $phone",
            },
            {"ticketId": "$ticket_id", "status": "OPEN"},
            write=True,
        ),
        _t(
            "crm_apply_credit",
            {"customerId": "$customer_id", "amount": "$amount", "currency": "$currency"},
            {"creditId": "$ticket_id", "status": "APPLIED"},
            write=True,
            amount_path="amount",
        ),
        _t(
            "crm_create_escalation_ticket",
            {"customerId": "$customer_id", "priority": "high", "summary": "escalation for $person"},
            {"ticketId": "$ticket_id", "queue": "tier2"},
            write=True,
        ),
        # Finance -----------------------------------------------------------------------------
        _t(
            "fin_get_invoice",
            {"invoiceId": "$invoice_id"},
            {
                "invoiceId": "$invoice_id",
                "totalAmount": "$amount_read",
                "accountId": "$account_id",
                "iban": "$iban",
                "billTo": {"fullName": "$person", "address": "$address"},
            },
        ),
        _t(
            "fin_get_account_balance",
            {"accountId": "$account_id"},
            {"accountId": "$account_id", "balance": "$amount_small", "currency": "$currency"},
        ),
        _t(
            "fin_create_payment",
            {
                "accountId": "$account_id",
                "paymentMethodId": "$payment_method",
                "payment": {"amount": "$amount", "currency": "$currency", "iban": "$iban"},
            },
            {"paymentId": "$event_id", "status": "SCHEDULED"},
            write=True,
            amount_path="payment.amount",
        ),
        _t(
            "fin_post_journal_entry",
            {
                "journal": "AP",
                "totalAmount": "$amount",
                "memo": "$invoice_id",
                "lines": [{"account": "4000", "debit": "$amount_small"}],
            },
            {"entryId": "$event_id", "posted": True},
            write=True,
            amount_path="totalAmount",
        ),
        _t(
            "fin_issue_refund",
            {"orderId": "$order_id", "amount": "$amount", "cardNumber": "$card"},
            {"refundId": "$event_id", "status": "ISSUED"},
            write=True,
            amount_path="amount",
        ),
        # Knowledge base ----------------------------------------------------------------------
        _t(
            "kb_search",
            {"query": "$topic", "topK": 3},
            {"hits": [{"docId": "$doc_id", "title": "$topic", "score": 0.82}]},
        ),
        _t(
            "kb_get_article",
            {"docId": "$doc_id"},
            {"docId": "$doc_id", "title": "$topic", "body": "Steps for $topic: verify, then act."},
        ),
        # HR ----------------------------------------------------------------------------------
        _t(
            "hr_get_employee",
            {"employeeId": "$employee_id"},
            {
                "employeeId": "$employee_id",
                "fullName": "$person",
                "email": "$email",
                "idNumber": "$cn_id",
                "homeAddress": "$address",
            },
        ),
        _t(
            "hr_update_employee_address",
            {"employeeId": "$employee_id", "address": {"street": "$address"}},
            {"employeeId": "$employee_id", "updated": True},
            write=True,
        ),
        _t(
            "hr_update_bank_details",
            {"employeeId": "$employee_id", "bankCard": "$bank_card", "accountHolder": "$person"},
            {"employeeId": "$employee_id", "updated": True},
            write=True,
        ),
        # WMS ---------------------------------------------------------------------------------
        _t(
            "wms_get_shipment",
            {"shipmentId": "$shipment_id"},
            {
                "shipmentId": "$shipment_id",
                "status": "IN_TRANSIT",
                "consignee": {"fullName": "$person", "phone": "$phone", "address": "$address"},
            },
        ),
        _t(
            "wms_create_shipment",
            {
                "orderId": "$order_id",
                "reservationId": "$reservation_id",
                "consignee": {"fullName": "$person", "phone": "$phone", "address": "$address"},
            },
            {"shipmentId": "$shipment_id", "status": "CREATED"},
            write=True,
        ),
        _t(
            "wms_adjust_stock",
            {"sku": "$sku", "warehouse": "$warehouse", "delta": "$qty"},
            {"sku": "$sku", "onHand": "$qty"},
            write=True,
        ),
        # Hand-off ----------------------------------------------------------------------------
        _t(
            "transfer_to_human_agents",
            {"summary": "customer $person needs an agent"},
            {"queued": True, "queue": "tier1"},
        ),
        _t("handoff_to_human", {"reason": "policy_exception"}, {"queued": True}),
        _t("escalate_to_human", {"reason": "customer_request"}, {"queued": True}),
        _t("route_to_human_queue", {"queue": "supervisors"}, {"queued": True}),
    )
}

READ_TOOLS: dict[str, tuple[str, ...]] = {}
WRITE_TOOLS: dict[str, tuple[str, ...]] = {}
for _tool in TOOLS.values():
    if _tool.system is None or _tool.name == "crm_create_escalation_ticket":
        continue
    (WRITE_TOOLS if _tool.mutating else READ_TOOLS).setdefault(_tool.system, ())
    if _tool.mutating:
        WRITE_TOOLS[_tool.system] += (_tool.name,)
    else:
        READ_TOOLS[_tool.system] += (_tool.name,)

#: Write tools that carry an amount at one of the high-value funnel's paths.
AMOUNT_WRITES: tuple[str, ...] = tuple(n for n, t in TOOLS.items() if t.amount_path)
#: Systems with both reads and writes (a write's system must have a read to pair it with).
WRITE_SYSTEMS: tuple[str, ...] = tuple(sorted(WRITE_TOOLS))
ALL_READS: tuple[str, ...] = tuple(n for s in sorted(READ_TOOLS) for n in READ_TOOLS[s])
#: Tools a recovery scenario may fail (never the alternative route itself).
FAILABLE_READS: tuple[str, ...] = tuple(n for n in ALL_READS if n != "erp_search_orders")
