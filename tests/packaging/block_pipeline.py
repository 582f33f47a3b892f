"""Run Python code as if only the base (reader) install were present.

    python block_pipeline.py -c CODE | -m MODULE [args]

A meta-path finder refuses every top-level module of the `pipeline` extra in pyproject.toml
(Prefect, Presidio, polars, scikit-learn, ...), so importing one raises ModuleNotFoundError
exactly as on a machine where `pip install golden-distill[reader]` did not install it.
"""

from __future__ import annotations

import runpy
import sys

from pipeline_extra import pipeline_modules  # beside this script (its folder is on sys.path)

#: The pipeline extra's modules (from pyproject.toml), plus what they would pull in optionally.
BLOCKED = frozenset(pipeline_modules() | {"spacy", "dask", "distributed"})


class _Blocker:
    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None


def main() -> None:
    sys.meta_path.insert(0, _Blocker())
    flag, target, *rest = sys.argv[1:]
    sys.argv = [target, *rest]
    if flag == "-c":
        exec(compile(target, "<blocked>", "exec"), {"__name__": "__main__"})
    else:
        runpy.run_module(target, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
