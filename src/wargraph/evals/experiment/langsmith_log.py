"""Logging a finished experiment to LangSmith (only when a key is set)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from typing import Any

Json = dict[str, Any]


def langsmith_parts(
    meta: Json, outcomes: list[Json]
) -> tuple[list[Json], Callable[[Json], Json], Callable[[Json], Json]]:
    """Examples (one per game), a target returning the game's outcomes, and an evaluator that
    turns answers and measures into feedback. Built offline; only `log_langsmith` connects."""
    by_key = {(o["condition"], o["run"]): o for o in outcomes}
    examples = [
        {
            "inputs": {
                "condition": o["condition"],
                "run": o["run"],
                "seed": o["seed"],
                "levels": o["levels"],
            },
            "metadata": {"thread_id": o["thread_id"], "experiment": meta["name"]},
        }
        for o in outcomes
    ]

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        o = by_key[(inputs["condition"], inputs["run"])]
        return {"status": o["status"], "answers": o["answers"], "measures": o["measures"]}

    def evaluator(outputs: dict[str, Any]) -> dict[str, Any]:
        results = []
        for qid, answer in (outputs.get("answers") or {}).items():
            score = {"yes": 1.0, "no": 0.0}.get(answer)
            results.append({"key": qid, "value": answer, "score": score})
        for name, value in (outputs.get("measures") or {}).items():
            results.append({"key": name, "score": float(value)})
        return {"results": results}

    return examples, target, evaluator


def log_langsmith(meta: dict[str, Any], outcomes: list[dict[str, Any]]) -> str | None:
    """Log the experiment to LangSmith, only when LANGSMITH_API_KEY is set (else nothing
    connects). A failure is reported and never fails the experiment."""
    if not os.environ.get("LANGSMITH_API_KEY") or not outcomes:
        return None
    try:
        from langsmith import Client, evaluate

        examples, target, evaluator = langsmith_parts(meta, outcomes)
        client = Client()
        digest = hashlib.sha256(
            json.dumps([e["inputs"] for e in examples], sort_keys=True).encode()
        ).hexdigest()[:8]
        name = f"wargraph-{meta['name']}-{digest}"
        if not client.has_dataset(dataset_name=name):
            ds = client.create_dataset(name, description=meta.get("description") or meta["name"])
            client.create_examples(
                dataset_id=ds.id,
                inputs=[e["inputs"] for e in examples],
                metadata=[e["metadata"] for e in examples],
            )
        res = evaluate(
            target,
            data=name,
            evaluators=[evaluator],
            experiment_prefix=meta["name"],
            metadata={"scenario": meta["scenario"], "model": meta["model"]},
            upload_results=True,
        )
        return str(getattr(res, "experiment_name", name))
    except Exception as exc:  # offline, bad key, API change: the local report still stands
        return f"not logged ({type(exc).__name__}: {str(exc)[:200]})"
