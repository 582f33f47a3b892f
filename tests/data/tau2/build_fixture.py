"""Builds ``airline-simulations.json`` with tau2-bench's own data model (not run by the tests).

The fixture is what ``tau2 run`` writes for a text run (``Results.save(path, "json")``: one
monolithic ``model_dump_json(indent=2)``), built here from tau2's pydantic classes so every
field, default and enum is theirs. Tasks 13, 16 and 19 are copied from tau2-bench's
``data/tau2/domains/airline/tasks.json``; the policy excerpt from its ``policy.md``; the
conversations and tool outputs are hand-written to match those tasks (ids from the tasks, tool
outputs shaped as the airline tools return them).

Run with tau2-bench's ``src`` on ``sys.path`` (sierra-research/tau2-bench @ a2c0247):
``python build_fixture.py /path/to/tau2-bench/src /path/to/tau2-bench/data/tau2/domains/airline``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SRC, DOMAIN = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, str(SRC))
from tau2.data_model.message import (  # noqa: E402
    AssistantMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from tau2.data_model.simulation import (  # noqa: E402
    AgentInfo,
    Info,
    Results,
    RewardInfo,
    SimulationRun,
    UserInfo,
)
from tau2.data_model.tasks import Task  # noqa: E402
from tau2.environment.environment import EnvironmentInfo  # noqa: E402

TASKS = {t["id"]: t for t in json.loads((DOMAIN / "tasks.json").read_text())}
POLICY = "\n".join((DOMAIN / "policy.md").read_text().splitlines()[:18])
USAGE = iter(range(1000))


class Clock:
    def __init__(self, start: str) -> None:
        self.h, self.m, self.s = (int(x) for x in start.split(":"))
        self.day = "2026-11-20"

    def __call__(self) -> str:
        self.s += 7
        self.m += self.s // 60
        self.s %= 60
        return f"{self.day}T{self.h:02d}:{self.m:02d}:{self.s:02d}.{next(USAGE) % 1000:03d}512"


def numbered(messages: list) -> list:
    """turn_idx as tau2's orchestrator sets it (``get_trajectory``)."""
    for i, message in enumerate(messages):
        message.turn_idx = i
    return messages


def agent(clock, content=None, calls=(), prompt=0, completion=0, cost=None):
    tool_calls = [ToolCall(id=i, name=n, arguments=a) for i, n, a in calls] or None
    usage = {"prompt_tokens": prompt, "completion_tokens": completion} if prompt else None
    return AssistantMessage(
        role="assistant",
        content=content,
        tool_calls=tool_calls,
        usage=usage,
        cost=cost if cost is not None else (0.002 if prompt else None),
        timestamp=clock(),
    )


def user(clock, content):
    return UserMessage(role="user", content=content, timestamp=clock(), cost=0.0004)


def tool(clock, call_id, content, error=False):
    return ToolMessage(
        id=call_id,
        role="tool",
        content=json.dumps(content) if not isinstance(content, str) else content,
        requestor="assistant",
        error=error,
        timestamp=clock(),
    )


GREETING = "Hi! How can I help you today?"
AARAV = {
    "user_id": "aarav_garcia_1177",
    "name": {"first_name": "Aarav", "last_name": "Garcia"},
    "address": {
        "address1": "833 Highland Drive",
        "address2": "Suite 740",
        "city": "Denver",
        "country": "USA",
        "state": "CO",
        "zip": "80211",
    },
    "email": "aarav.garcia6639@example.com",
    "dob": "1992-09-13",
    "payment_methods": {
        "gift_card_8887175": {"source": "gift_card", "id": "gift_card_8887175", "amount": 35.0},
        "certificate_7473723": {
            "source": "certificate",
            "id": "certificate_7473723",
            "amount": 150.0,
        },
    },
    "saved_passengers": [],
    "membership": "regular",
    "reservations": ["M05KNL", "UHDAHF"],
}
M05KNL = {
    "reservation_id": "M05KNL",
    "user_id": "aarav_garcia_1177",
    "origin": "ATL",
    "destination": "PHL",
    "flight_type": "one_way",
    "cabin": "basic_economy",
    "flights": [
        {
            "flight_number": "HAT110",
            "origin": "ATL",
            "destination": "LGA",
            "date": "2024-05-23",
            "price": 65,
        },
        {
            "flight_number": "HAT172",
            "origin": "LGA",
            "destination": "PHL",
            "date": "2024-05-23",
            "price": 73,
        },
    ],
    "passengers": [{"first_name": "Aarav", "last_name": "Garcia", "dob": "1992-09-13"}],
    "payment_history": [{"payment_id": "gift_card_8887175", "amount": 138}],
    "created_at": "2024-05-14T10:37:42",
    "total_baggages": 0,
    "nonfree_baggages": 0,
    "insurance": "no",
    "status": None,
}
CHANGE = TASKS["16"]["evaluation_criteria"]["actions"][0]["arguments"]


def sim_16_ok() -> SimulationRun:
    c = Clock("09:12:03")
    updated = dict(
        M05KNL,
        cabin="economy",
        flights=[
            dict(f, date="2024-05-24", price=p)
            for f, p in zip(M05KNL["flights"], (122, 141), strict=True)
        ],
    )
    messages = [
        agent(c, GREETING, cost=0.0),
        user(
            c,
            "Hi, I need to move my flight from Atlanta to Philadelphia to the next day, in "
            "economy please. My user id is aarav_garcia_1177.",
        ),
        agent(
            c,
            calls=[("call_Yx1", "get_user_details", {"user_id": "aarav_garcia_1177"})],
            prompt=2711,
            completion=21,
        ),
        tool(c, "call_Yx1", AARAV),
        agent(
            c,
            calls=[("call_Yx2", "get_reservation_details", {"reservation_id": "M05KNL"})],
            prompt=3102,
            completion=23,
        ),
        tool(c, "call_Yx2", M05KNL),
        agent(
            c,
            calls=[
                (
                    "call_Yx3",
                    "search_onestop_flight",
                    {"origin": "ATL", "destination": "PHL", "date": "2024-05-24"},
                )
            ],
            prompt=3544,
            completion=33,
        ),
        tool(
            c,
            "call_Yx3",
            [
                [
                    {
                        "flight_number": "HAT110",
                        "origin": "ATL",
                        "destination": "LGA",
                        "status": "available",
                        "date": "2024-05-24",
                        "prices": {"basic_economy": 70, "economy": 122, "business": 366},
                    },
                    {
                        "flight_number": "HAT172",
                        "origin": "LGA",
                        "destination": "PHL",
                        "status": "available",
                        "date": "2024-05-24",
                        "prices": {"basic_economy": 68, "economy": 141, "business": 398},
                    },
                ]
            ],
        ),
        agent(
            c,
            "The cheapest economy option on May 24 is HAT110 then HAT172, $263 in total; "
            "your basic economy fare cannot be changed without upgrading to economy. "
            "The difference of $125 would be charged to gift card gift_card_8887175. "
            "Shall I proceed?",
            prompt=4410,
            completion=64,
        ),
        user(c, "Yes, go ahead with the original payment."),
        agent(
            c,
            calls=[("call_Yx4", "update_reservation_flights", CHANGE)],
            prompt=4530,
            completion=71,
        ),
        tool(c, "call_Yx4", updated),
        agent(
            c,
            "Done: M05KNL is now economy on HAT110 and HAT172 on 2024-05-24.",
            prompt=5012,
            completion=22,
        ),
        user(c, "Great, thanks! ###STOP###"),
    ]
    return SimulationRun(
        id="0b6f3b0e-5d55-4f3c-9a57-2f1d0c7f9e11",
        task_id="16",
        trial=0,
        seed=300,
        timestamp="2026-11-20T09:12:01.000113",
        start_time="2026-11-20T09:12:01.000201",
        end_time=c(),
        duration=61.4,
        termination_reason="user_stop",
        agent_cost=0.0141,
        user_cost=0.0016,
        messages=numbered(messages),
        reward_info=RewardInfo(
            reward=1.0,
            db_check={"db_match": True, "db_reward": 1.0},
            reward_basis=["DB", "COMMUNICATE"],
            reward_breakdown={"DB": 1.0, "COMMUNICATE": 1.0},
        ),
    )


def sim_16_failed() -> SimulationRun:
    c = Clock("09:20:40")
    wrong = dict(CHANGE, cabin="basic_economy")
    other = dict(CHANGE, payment_id="certificate_7473723")
    messages = [
        agent(c, GREETING, cost=0.0),
        user(
            c, "I want to change my ATL to PHL flight to the following day. I'm aarav_garcia_1177."
        ),
        agent(
            c,
            calls=[("call_Zq1", "get_reservation_details", {"reservation_id": "M05KNL"})],
            prompt=2705,
            completion=23,
        ),
        tool(c, "call_Zq1", M05KNL),
        agent(
            c, calls=[("call_Zq2", "update_reservation_flights", wrong)], prompt=3140, completion=70
        ),
        tool(c, "call_Zq2", "Error: Basic economy flights cannot be modified", error=True),
        agent(
            c, calls=[("call_Zq3", "update_reservation_flights", other)], prompt=3290, completion=72
        ),
        tool(c, "call_Zq3", dict(M05KNL, cabin="economy")),
        agent(c, "Your flights are changed to May 24.", prompt=3700, completion=11),
        user(c, "Thanks. ###STOP###"),
    ]
    return SimulationRun(
        id="5e0c8a61-2c4b-4a0e-8f55-6b1c2d9e3a70",
        task_id="16",
        trial=1,
        seed=301,
        timestamp="2026-11-20T09:20:38.700011",
        start_time="2026-11-20T09:20:38.700102",
        end_time=c(),
        duration=44.9,
        termination_reason="user_stop",
        agent_cost=0.0098,
        user_cost=0.0011,
        messages=numbered(messages),
        reward_info=RewardInfo(
            reward=0.0,
            db_check={"db_match": False, "db_reward": 0.0},
            reward_basis=["DB", "COMMUNICATE"],
            reward_breakdown={"DB": 0.0, "COMMUNICATE": 1.0},
        ),
    )


def sim_13_transfer() -> SimulationRun:
    c = Clock("10:02:11")
    summary = TASKS["13"]["evaluation_criteria"]["actions"][0]["arguments"]["summary"]
    messages = [
        agent(c, GREETING, cost=0.0),
        user(
            c,
            "Hello, I'm James Lee, user id james_lee_6136. I want my ATL to LAX trip, "
            "reservation XEWRD9, to go nonstop to Las Vegas instead.",
        ),
        agent(
            c,
            calls=[
                ("call_Jl1", "get_user_details", {"user_id": "james_lee_6136"}),
                ("call_Jl2", "get_reservation_details", {"reservation_id": "XEWRD9"}),
            ],
            prompt=2760,
            completion=44,
        ),
        tool(
            c,
            "call_Jl1",
            {
                "user_id": "james_lee_6136",
                "membership": "regular",
                "reservations": ["XEWRD9", "GV1N64"],
            },
        ),
        tool(
            c,
            "call_Jl2",
            {
                "reservation_id": "XEWRD9",
                "user_id": "james_lee_6136",
                "origin": "ATL",
                "destination": "LAX",
                "flight_type": "round_trip",
                "cabin": "basic_economy",
            },
        ),
        agent(
            c,
            "I'm sorry, the destination of a reservation cannot be changed. Would you "
            "like me to transfer you to a human agent?",
            prompt=3480,
            completion=30,
        ),
        user(c, "Yes, please transfer me."),
        agent(
            c,
            calls=[("call_Jl3", "transfer_to_human_agents", {"summary": summary})],
            prompt=3551,
            completion=48,
        ),
        tool(c, "call_Jl3", "Transfer successful"),
        agent(
            c,
            "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.",
            prompt=3640,
            completion=15,
        ),
        user(c, "###TRANSFER###"),
    ]
    return SimulationRun(
        id="9c2d7f40-8e1a-4b6b-b3d2-1a0e5f7c8d93",
        task_id="13",
        trial=0,
        seed=300,
        timestamp="2026-11-20T10:02:09.100045",
        start_time="2026-11-20T10:02:09.100130",
        end_time=c(),
        duration=38.2,
        termination_reason="user_stop",
        agent_cost=0.0071,
        user_cost=0.0012,
        messages=numbered(messages),
        reward_info=RewardInfo(
            reward=1.0,
            db_check={"db_match": True, "db_reward": 1.0},
            reward_basis=["DB", "COMMUNICATE"],
        ),
    )


def main() -> None:
    info = Info(
        git_commit="a2c024725189473d2d7cea3a5cfdbcc67478e41f",
        num_trials=2,
        max_steps=200,
        max_errors=10,
        seed=300,
        user_info=UserInfo(
            implementation="user_simulator", llm="gpt-4.1-2025-04-14", llm_args={"temperature": 0.0}
        ),
        agent_info=AgentInfo(
            implementation="llm_agent", llm="gpt-4.1-2025-04-14", llm_args={"temperature": 0.0}
        ),
        environment_info=EnvironmentInfo(domain_name="airline", policy=POLICY),
    )
    tasks = [Task.model_validate(TASKS[i]) for i in ("13", "16", "19")]
    results = Results(
        timestamp="2026-11-20T09:12:00.918273",
        info=info,
        tasks=tasks,
        simulations=[sim_16_ok(), sim_16_failed(), sim_13_transfer()],
    )
    out = Path(__file__).with_name("airline-simulations.json")
    results.save(out, "json")
    assert Results.load(out) == results  # reads back through tau2's own loader


if __name__ == "__main__":
    main()
