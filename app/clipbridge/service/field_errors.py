"""pydantic validation errors as one clear {loc, msg} per cause, for the API (422 problems) and the CLI.

pydantic reports a union's failure once per member (a tagged union and a dialect-name literal both fail on
`"openvin"`) and names members in `loc` (`tagged-union[...]`, `literal[...]`, a dialect tag). This walks
each `loc` through the model's types, drops the members whose input is of another type altogether, names
the field as the user wrote it (`targets[0].feature_level`), and words each message as
"<rule>. Got: <value>" with the accepted values and a "did you mean" for near misses.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel

from clipbridge.dialects import registry
from clipbridge.core.suggest import one_of, shown

TYPE_WORDS = {"model_attributes_type": "an object", "model_type": "an object", "dict_type": "an object",
              "list_type": "a list", "int_type": "an integer", "string_type": "a string",
              "float_type": "a number", "bool_type": "true or false", "int_from_float": "an integer"}


@dataclass
class _Err:
    raw: dict[str, Any]
    loc: list[str | int]  # the path as the user wrote it
    fields: list[str] | None  # the fields of the object the error sits in (for "did you mean")
    tags: list[str] | None  # a discriminated union's tags, when the error is about its tag
    branches: list[tuple[tuple, str, Any]] = field(default_factory=list)  # (raw prefix, member name, member type)


def _unwrap(tp: Any) -> tuple[Any, str | None]:
    """Strip Annotated and Optional; return the type and a discriminator when one is declared."""
    disc = None
    while True:
        if typing.get_origin(tp) is Annotated:
            for meta in tp.__metadata__:
                disc = getattr(meta, "discriminator", None) or disc
            tp = tp.__origin__
            continue
        if _is_union(tp):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) == 1:
                tp = members[0]
                continue
        return tp, disc


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (Union, types.UnionType)


def _members(tp: Any) -> list[Any]:
    return [a for a in typing.get_args(tp) if a is not type(None)]


def _tag_of(member: Any, disc: str) -> list[str]:
    m, _ = _unwrap(member)
    if isinstance(m, type) and issubclass(m, BaseModel) and disc in m.model_fields:
        return [str(v) for v in typing.get_args(_unwrap(m.model_fields[disc].annotation)[0])]
    return []


def _member_matches(member: Any, name: str) -> bool:
    m, disc = _unwrap(member)
    if name.startswith("tagged-union["):
        return disc is not None
    if name.startswith("literal["):
        return typing.get_origin(m) is Literal
    if isinstance(m, type) and issubclass(m, BaseModel):
        return name == m.__name__
    if typing.get_origin(m) is list:
        return name.startswith("list[")
    return isinstance(m, type) and m.__name__ in name  # int, constrained-int, str, constrained-str


def _walk(root: Any, raw_loc: tuple) -> _Err:
    """Follow `raw_loc` through the types from `root`, building the user's path and noting union members."""
    err = _Err({}, [], None, None)
    tp, disc = _unwrap(root) if root is not None else (None, None)
    i = 0
    while i < len(raw_loc):
        seg = raw_loc[i]
        if tp is None:  # past what we can type: keep fields, drop pydantic's member names
            if isinstance(seg, int) or "[" not in seg:
                err.loc.append(seg)
            i += 1
            continue
        if _is_union(tp):
            members = _members(tp)
            if disc is not None:
                picked = next((m for m in members if str(seg) in _tag_of(m, disc)), None)
                if picked is not None:  # the tag segment: the dialect is already in the body
                    tp, disc = _unwrap(picked)
                    i += 1
                    continue
                break
            picked = next((m for m in members if isinstance(seg, str) and _member_matches(m, seg)), None)
            err.branches.append((tuple(raw_loc[:i]), str(seg), picked))
            tp, disc = _unwrap(picked) if picked is not None else (None, None)
            i += 1
            continue
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            err.fields = list(tp.model_fields)
            f = tp.model_fields.get(str(seg))
            err.loc.append(seg)
            if f is None:
                tp, disc = None, None
            else:
                tp, disc = _unwrap(f.annotation)
                if isinstance(f.discriminator, str):
                    disc = f.discriminator
            i += 1
            continue
        if typing.get_origin(tp) is list and isinstance(seg, int):
            err.loc.append(seg)
            tp, disc = _unwrap(typing.get_args(tp)[0])
            i += 1
            continue
        tp = None  # a type we do not walk into (dict[str, Any], a constrained scalar)
    if _is_union(tp) and disc is not None:  # the error is about the tag itself
        err.tags = [t for m in _members(tp) for t in _tag_of(m, disc)]
        err.loc += [s for s in raw_loc[i:] if isinstance(s, int) or "[" not in s]
    return err


def format_path(parts: list[str | int]) -> str:
    """['targets', 0, 'feature_level'] -> 'targets[0].feature_level'."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else ("." if out else "") + str(p)
    return out or "body"


def _expected(raw: dict[str, Any]) -> list[str]:
    text = str((raw.get("ctx") or {}).get("expected", ""))
    return [p.strip("'") for p in text.replace(" or ", ", ").split(", ") if p]


def _mismatch(e: _Err, depth: int) -> bool:
    """The member fails only because the input is of another type altogether (a string for an object)."""
    prefix_len = len(e.branches[depth][0]) + 1
    t = e.raw.get("type", "")
    at_root = len(e.raw.get("loc", ())) == prefix_len
    return at_root and (t in TYPE_WORDS or (t == "literal_error" and not isinstance(e.raw.get("input"), str)))


def _dialect_names(expected: list[str]) -> bool:
    """Whether a Literal's choices are the registered dialect names (then the message says 'dialect')."""
    return set(expected) == set(registry.names())


def _phrase(e: _Err) -> str:
    t = e.raw.get("type", "")
    if t == "literal_error":
        expected = _expected(e.raw)
        what = "a dialect name" if _dialect_names(expected) else "one"
        return f"{what} ({', '.join(expected)})"
    return TYPE_WORDS.get(t, "a valid value")


def _collapse(errs: list[_Err], depth: int = 0) -> list[_Err]:
    """Keep, per union, the members whose input type fits; if none fits, one error saying what fits."""
    out: list[_Err] = []
    groups: dict[tuple, list[_Err]] = {}
    for e in errs:
        if len(e.branches) <= depth:
            out.append(e)
        else:
            groups.setdefault(e.branches[depth][0], []).append(e)
    for group in groups.values():
        by_member: dict[str, list[_Err]] = {}
        for e in group:
            by_member.setdefault(e.branches[depth][1], []).append(e)
        fitting = [es for es in by_member.values() if not all(_mismatch(e, depth) for e in es)]
        if fitting:
            out += _collapse([e for es in fitting for e in es], depth + 1)
            continue
        first = group[0]
        phrases = list(dict.fromkeys(_phrase(es[0]) for es in by_member.values()))
        value = first.raw.get("input")
        msg = f"Expected {' or '.join(phrases)}. Got: {shown(value)}"
        out.append(_Err({"type": "union", "msg": msg, "input": value}, first.loc, None, None))
    return out


def _message(e: _Err) -> tuple[list[str | int], str]:
    raw, loc = e.raw, list(e.loc)
    t = raw.get("type", "")
    ctx = raw.get("ctx") or {}
    value = raw.get("input")
    if t == "union":
        return loc, raw["msg"]
    if t in ("union_tag_invalid", "union_tag_not_found"):
        disc = str(ctx.get("discriminator", "dialect")).strip("'")
        tags = e.tags or [x.strip("' ") for x in str(ctx.get("expected_tags", "")).split(",") if x.strip()]
        if t == "union_tag_not_found":
            return loc + [disc], f"{disc} is required. Expected one of: {', '.join(tags)}"
        return loc + [disc], one_of(f"Unknown {disc}", ctx.get("tag"), tags)
    if t == "literal_error":
        named = [p for p in loc if isinstance(p, str)]
        expected = _expected(raw)
        what = "dialect" if _dialect_names(expected) else (named[-1] if named else "value")
        return loc, one_of(f"Unknown {what}", value, expected)
    if t == "extra_forbidden":
        name = loc[-1] if loc else "?"
        allowed = [f for f in (e.fields or []) if f != name]
        if allowed:
            return loc, one_of("Extra field not allowed", name, allowed)
        return loc, f"Extra field not allowed. Got: {shown(name)}"
    if t in TYPE_WORDS:
        return loc, f"Expected {TYPE_WORDS[t]}. Got: {shown(value)}"
    if "field" in ctx:  # a model-level rule about one field (app/clipbridge/service/specs.py raises these)
        loc = loc + [str(ctx["field"])]
    msg = str(raw.get("msg", "")).removeprefix("Value error, ")
    if t not in ("missing", "value_error") and not isinstance(value, (dict, list)) and shown(value) not in msg:
        msg += f". Got: {shown(value)}"
    return loc, msg


def field_errors(errors: list[dict[str, Any]], root: Any = None, drop: int = 0) -> list[dict[str, str]]:
    """pydantic's errors() as [{loc, msg}], one per cause; `root` is the validated type, `drop` leading loc parts."""
    parsed = []
    for raw in errors:
        raw_loc = tuple(raw.get("loc", ()))[drop:]
        if raw.get("type") == "renamed":  # an old name beside its new one (app/clipbridge/api/models.py Renamed): the new field's
            raw_loc = (*raw_loc, raw["ctx"]["new"])
        e = _walk(root, raw_loc)
        e.raw = dict(raw, loc=raw_loc)
        parsed.append(e)
    out: list[dict[str, str]] = []
    for e in _collapse(parsed):
        loc, msg = _message(e)
        item = {"loc": format_path(loc), "msg": msg}
        if item not in out:
            out.append(item)
    return out
