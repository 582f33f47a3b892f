"""Token-level JSON editing: only changed strings are rewritten, every other byte is kept."""

from __future__ import annotations

import orjson

from golden_distill.redaction.walker import iter_keys, iter_leaves, make_slot, rewrite_json_text


def upper(value: str, path_fn) -> str:
    return value.upper() if value == "noah" else value


def test_numbers_whitespace_and_key_order_survive() -> None:
    text = '{"z": 120.50, "a" : [1e5, 12345678901234567890123, -0.0], "who": "noah", "ok": true}'
    out = rewrite_json_text(text, upper)
    assert out == text.replace('"noah"', '"NOAH"')


def test_escaped_strings_are_decoded_and_reencoded() -> None:
    text = '{"msg": "say \\"hi\\" to noah", "who": "no\\u0061h"}'
    out = rewrite_json_text(text, lambda v, p: v.replace("noah", "X"))
    assert orjson.loads(out) == {"msg": 'say "hi" to X', "who": "X"}


def test_path_of_strings_and_numbers() -> None:
    seen: list[tuple[str, tuple]] = []
    text = '{"a": {"b": ["x", {"c": "y"}]}, "n": {"id": 42}}'

    def on_string(value: str, path_fn) -> str:
        seen.append((value, path_fn()))
        return value

    nums: list[tuple[str, tuple]] = []
    rewrite_json_text(text, on_string, lambda tok, path: nums.append((tok, path)) or None)
    assert ("x", ("a", "b")) in seen and ("y", ("a", "b", "c")) in seen
    assert nums == [("42", ("n", "id"))]


def test_leaves_lists_of_objects_and_strings_and_nested_json() -> None:
    value = {
        "users": [{"email": "a@x.io"}, {"email": "b@x.io"}],
        "tags": ["p", "q"],
        "content": '{"name": {"first_name": "Mei"}}',
    }
    leaves = list(iter_leaves(value))
    assert (("users", "email"), "a@x.io") in leaves and (("users", "email"), "b@x.io") in leaves
    assert (("tags",), "q") in leaves
    assert (("content", "name", "first_name"), "Mei") in leaves
    assert "first_name" in set(iter_keys(value))


def test_slots_fall_back_to_text_when_not_json() -> None:
    assert make_slot("x", "Error: not found", True).is_json is False
    assert make_slot("x", '{"a": 1}', True).parsed == {"a": 1}
