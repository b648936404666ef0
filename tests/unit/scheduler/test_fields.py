"""Compact raw fields: a mapping like the dict it replaces, its names shared."""

from __future__ import annotations

import pytest

from app.scheduler.fields import FieldNames


def test_fields_read_like_the_dict_of_the_same_items() -> None:
    names = FieldNames(["job_id", "state", "user"])
    record = names.record(["42", "PENDING", "alice"])
    assert record == {"job_id": "42", "state": "PENDING", "user": "alice"}
    assert record["state"] == "PENDING" and record.get("missing") is None
    assert list(record) == ["job_id", "state", "user"] and len(record) == 3
    assert dict(record.items()) == {"job_id": "42", "state": "PENDING", "user": "alice"}
    assert record != {"job_id": "42", "state": "RUNNING", "user": "alice"}
    assert "user" in record and "uid" not in record
    with pytest.raises(KeyError):
        record["uid"]
    assert repr(record) == "Fields({'job_id': '42', 'state': 'PENDING', 'user': 'alice'})"


def test_a_record_must_have_one_value_per_name_and_names_are_unique() -> None:
    names = FieldNames(["job_id", "state"])
    with pytest.raises(ValueError, match="expected 2 values, got 3"):
        names.record(["1", "PENDING", "extra"])
    with pytest.raises(ValueError, match="field names repeat"):
        FieldNames(["job_id", "job_id"])
