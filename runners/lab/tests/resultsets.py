"""Result sets for the tests: the smallest documents docs/result-set.schema.json takes, and the
same typed by the lab's one reader (wblab.resultset)."""
from wblab import predictions, resultset

# The fields the schema requires of a case: a kernel-placed pipe/threads case that ran.
CASE = {"name": "pipe/threads/kernel", "mechanism": "pipe", "mode": "threads",
        "placement": "kernel", "status": "ok"}


def document(cases=(), version=3, **top):
    """A result set of `cases` (each completed with CASE's fields) and the top-level `top`."""
    return {"schema": "wakebench-results", "schema_version": version, **top,
            "cases": [dict(CASE, **c) for c in cases]}


def typed(cases=(), **top):
    """document() as the lab reads it."""
    return resultset.parse(document(cases, **top), "test.json")


def predicted(block):
    """A predictions block (or predict.json) as the lab reads it (wblab.predictions)."""
    return predictions.parse(block, "predict.json")
