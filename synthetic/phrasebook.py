"""The words of synthetic requests: asks per tool, context clauses, topic vocabulary, fillers.

Pure data (English and Chinese side by side: index 0 is English, 1 is Chinese), kept apart from
the rewording logic in ``text.py``. Topic phrases are adjective x noun so families get distinctive
vocabulary; asks are keyed by the family's main tool so the request matches what the agent does.
"""

from __future__ import annotations

ASKS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "erp_get_order": (
        ("can you check the status of order {order_id}", "I need an update on order {order_id}"),
        ("帮我查一下订单{order_id}的状态", "订单{order_id}现在到哪一步了"),
    ),
    "erp_get_inventory": (
        ("how many units of the {topic} are left in stock",),
        ("{topic}还有多少库存",),
    ),
    "erp_update_order": (
        (
            "please change the delivery address on order {order_id} to {address}",
            "update order {order_id} so it ships to {address}",
        ),
        ("请把订单{order_id}的收货地址改成{address}", "订单{order_id}改寄到{address}"),
    ),
    "erp_create_purchase_order": (
        (
            "raise a purchase order for the {topic}, about {amount} {currency}",
            "we need a PO for {amount} {currency} of {topic}",
        ),
        ("给{topic}下一张采购单，金额大约{amount}{currency}",),
    ),
    "erp_cancel_order": (
        ("please cancel order {order_id}, we no longer need it", "cancel {order_id} for me"),
        ("请取消订单{order_id}", "订单{order_id}不要了，帮我取消"),
    ),
    "mes_get_work_order": (
        ("what is the status of work order {work_order}",),
        ("工单{work_order}现在什么状态",),
    ),
    "mes_update_work_order": (
        (
            "put work order {work_order} on hold",
            "hold work order {work_order} until further notice",
        ),
        ("把工单{work_order}暂停", "工单{work_order}先挂起"),
    ),
    "mes_record_downtime": (
        ("log {qty} minutes of downtime on machine {machine}",),
        ("给设备{machine}登记{qty}分钟停机",),
    ),
    "crm_get_customer": (
        ("look up the customer record for {person}",),
        ("查一下客户{person}的资料",),
    ),
    "crm_update_contact": (
        (
            "update my contact details, new email {email} and phone {phone}",
            "please change my phone to {phone} and email to {email}",
        ),
        ("把我的联系方式改成邮箱{email}，电话{phone}", "请更新我的手机号为{phone}"),
    ),
    "crm_create_ticket": (
        ("open a ticket so someone calls me back on {phone}",),
        ("开个工单，让人给我回电话{phone}",),
    ),
    "crm_apply_credit": (
        (
            "apply a goodwill credit of {amount} {currency} to my account",
            "credit {amount} {currency} to the customer account",
        ),
        ("给我的账户补偿{amount}{currency}",),
    ),
    "fin_get_invoice": (
        ("send me the details of invoice {invoice_id}",),
        ("发票{invoice_id}的明细发我一下",),
    ),
    "fin_create_payment": (
        (
            "pay {amount} {currency} to IBAN {iban}",
            "schedule a payment of {amount} {currency} to {iban}",
        ),
        ("向{iban}付款{amount}{currency}",),
    ),
    "fin_post_journal_entry": (
        ("post a journal entry of {amount} {currency} for invoice {invoice_id}",),
        ("为发票{invoice_id}记一笔{amount}{currency}的分录",),
    ),
    "fin_issue_refund": (
        (
            "refund {amount} {currency} for order {order_id} to card {card}",
            "please refund order {order_id}, {amount} {currency}, card {card}",
        ),
        ("订单{order_id}退款{amount}{currency}到卡{card}",),
    ),
    "kb_search": (("what does the policy say about {topic}",), ("关于{topic}的规定是什么",)),
    "hr_get_employee": (("pull the employee file for {person}",), ("调一下员工{person}的档案",)),
    "hr_update_employee_address": (
        ("my new home address is {address}, please update HR",),
        ("我的新住址是{address}，请更新人事系统",),
    ),
    "hr_update_bank_details": (
        ("change my salary account to {bank_card}",),
        ("工资卡换成{bank_card}",),
    ),
    "wms_get_shipment": (("where is shipment {shipment_id}",), ("货运单{shipment_id}到哪了",)),
    "wms_create_shipment": (
        ("ship order {order_id} to {address}",),
        ("订单{order_id}发货到{address}",),
    ),
    "wms_adjust_stock": (
        ("adjust stock of the {topic} by {qty} units",),
        ("{topic}库存调整{qty}件",),
    ),
    "crm_create_escalation_ticket": (
        ("file an escalation ticket about the {topic}",),
        ("就{topic}提一个升级工单",),
    ),
}
#: The deliberately vague ask of "same text, different write" pairs.
AMBIGUOUS_ASK = (
    "please sort out order {order_id} for {person}, something is wrong with it",
    "订单{order_id}有问题，帮{person}处理一下",
)

CONTEXT: tuple[tuple[str, ...], tuple[str, ...]] = (
    (
        "I'm {person} from {company}",
        "this is {person} at {company}",
        "you can reach me at {email}",
        "my phone number is {phone}",
        "it concerns the {topic} and the {topic2}",
        "we need this done before {date}",
        "it is for the {topic} project",
    ),
    (
        "我是{company}的{person}",
        "我的邮箱是{email}",
        "我的手机号是{phone}",
        "这件事和{topic}以及{topic2}有关",
        "需要在{date}之前处理好",
        "是{topic}项目的事",
    ),
)
SECRET_CONTEXT: tuple[tuple[str, ...], tuple[str, ...]] = (
    ("our integration key {api_key} keeps getting rejected", "I already tried password={password}"),
    ("我们的接口密钥{api_key}一直被拒绝", "我试过password={password}了"),
)
ID_CONTEXT: tuple[str, ...] = ("我的身份证号是{cn_id}", "身份证{cn_id}，银行卡{bank_card}")

ADJECTIVES = (
    (
        "hydraulic",
        "stainless",
        "quarterly",
        "cold-chain",
        "refurbished",
        "bulk",
        "express",
        "annual",
        "imported",
        "modular",
        "galvanized",
        "organic",
        "ceramic",
        "titanium",
        "seasonal",
        "wholesale",
        "medical-grade",
        "solar",
        "marine",
        "cryogenic",
        "recycled",
        "heavy-duty",
        "pharmaceutical",
        "aerospace",
        "food-safe",
        "lithium",
        "fiberglass",
        "acoustic",
        "thermal",
        "corrugated",
    ),
    (
        "液压",
        "不锈钢",
        "季度",
        "冷链",
        "翻新",
        "批量",
        "加急",
        "年度",
        "进口",
        "模块化",
        "镀锌",
        "有机",
        "陶瓷",
        "钛合金",
        "季节性",
        "批发",
        "医用",
        "光伏",
        "船用",
        "低温",
        "再生",
        "重型",
        "制药",
        "航空",
        "食品级",
        "锂电",
        "玻璃钢",
        "隔音",
        "保温",
        "瓦楞",
    ),
)
NOUNS = (
    (
        "pump housings",
        "fasteners",
        "rebate agreement",
        "pallet racks",
        "conveyor belts",
        "lab reagents",
        "forklift batteries",
        "inverters",
        "office chairs",
        "server racks",
        "valve gaskets",
        "packaging film",
        "welding rods",
        "bearings",
        "sensor modules",
        "cable trays",
        "air filters",
        "paint drums",
        "circuit boards",
        "shipping crates",
        "glass panels",
        "hose fittings",
        "safety gloves",
        "coolant tanks",
        "motor drives",
        "label printers",
        "steel coils",
        "resin pellets",
        "spare blades",
        "test fixtures",
    ),
    (
        "泵壳",
        "紧固件",
        "返利协议",
        "货架",
        "传送带",
        "试剂",
        "叉车电池",
        "逆变器",
        "办公椅",
        "服务器机柜",
        "阀门垫片",
        "包装膜",
        "焊条",
        "轴承",
        "传感器模块",
        "电缆桥架",
        "空气滤芯",
        "油漆桶",
        "电路板",
        "木箱",
        "玻璃面板",
        "软管接头",
        "防护手套",
        "冷却罐",
        "电机驱动",
        "标签打印机",
        "钢卷",
        "树脂颗粒",
        "备用刀片",
        "测试夹具",
    ),
)
SYNONYMS = (
    {
        "please": ("kindly", "could you"),
        "check": ("verify", "look into"),
        "need": ("require",),
        "update": ("refresh", "amend"),
        "change": ("switch", "modify"),
        "cancel": ("call off",),
        "order": ("order",),
        "status": ("state",),
        "customer": ("client",),
        "send": ("forward",),
        "details": ("info", "particulars"),
        "new": ("updated",),
        "open": ("create",),
    },
    {
        "请": ("麻烦", "劳驾"),
        "帮我": ("帮忙", "替我"),
        "查一下": ("看一下", "查查"),
        "改成": ("换成", "更新为"),
        "取消": ("撤销",),
        "需要": ("得",),
        "现在": ("目前",),
    },
)
FILLERS_BEFORE = (
    ("Hi,", "Hello team,", "Good morning,", "Hey there,", "Quick one:"),
    ("你好，", "您好，", "在吗，", "麻烦一下，"),
)
FILLERS_AFTER = (
    ("thanks!", "thanks in advance.", "asap please.", "cheers."),
    ("谢谢！", "辛苦了。", "尽快哈。", "多谢。"),
)
