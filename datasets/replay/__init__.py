"""The replay kit: a golden set becomes a regression gate (docs/consuming.md).

```python
from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay import AgentResult, load_replay_config, replay_cases

golden = open_set("golden-store", "nightly@2026.12.01.1")
run = replay_cases(golden.cases(), my_agent, load_replay_config("configs/gate.yaml"),
                   baseline_version="nightly@2026.12.01.1", volatile_keys=golden.volatile_keys)
run.gate.verdict, run.exit_code
```

Adding an assertion: one class in ``checks/`` and one line in ``checks.CHECKS``. No Prefect or
Presidio is imported here: a replay job needs the reader and this package only.
"""

from golden_distill.datasets.replay.agent_call import AgentUsageError
from golden_distill.datasets.replay.boundaries import FixtureMismatch, ModelResponse, register_live
from golden_distill.datasets.replay.config import ReplayConfig, load_replay_config
from golden_distill.datasets.replay.contract import (
    AgentResult,
    BaselineCall,
    ReplayInput,
    StubEscape,
    ToolCallError,
    ToolStub,
)
from golden_distill.datasets.replay.runner import CaseRun, ReplayRun, replay_case, replay_cases

__all__ = [
    "AgentResult",
    "AgentUsageError",
    "BaselineCall",
    "CaseRun",
    "FixtureMismatch",
    "ModelResponse",
    "ReplayConfig",
    "ReplayInput",
    "ReplayRun",
    "StubEscape",
    "ToolCallError",
    "ToolStub",
    "load_replay_config",
    "register_live",
    "replay_case",
    "replay_cases",
]
