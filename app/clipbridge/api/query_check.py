"""Unknown query parameters are a 400 on every route, in one place: an app-wide dependency.

Why: FastAPI ignores a query parameter a route does not declare, so `?targt=directml` silently ran the default
targets and `?engines=openvino` the default engine pair (issue 43), while JSON bodies refused a typo. The accepted
names are read from each route's own dependant (its declared query parameters, their aliases, and those of its
dependencies), so a new route and a new parameter are covered without a list kept by hand.

The check is an app-level dependency (clipbridge.main: `FastAPI(dependencies=[KNOWN_QUERY])`): it runs before the
route's own parameters are validated and before a model upload is read, so the unknown name is the answer, not
a later error it caused. /v1/translate's fast path (clipbridge.api.translate_route) hands any request with a
query string to the generic path, where this runs.
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic import BaseModel

from clipbridge.core.suggest import did_you_mean, shown

TITLE = "Unknown query parameter"
_CACHE = "_clipbridge_query_names"  # kept on the route itself: routes are not hashable, and live as long as it


class UnknownQueryParameter(HTTPException):
    """400 naming each unknown parameter (`loc` query.NAME), the accepted ones and the nearest, as problem+json
    (clipbridge.api.problems reads `title` and `errors`)."""

    title = TITLE

    def __init__(self, unknown: list[str], accepted: tuple[str, ...]) -> None:
        self.errors = [{"loc": f"query.{name[:60]}", "msg": message(name, accepted)} for name in unknown[:20]]
        super().__init__(400, "; ".join(f"{e['loc']}: {e['msg']}" for e in self.errors[:5]))


def message(name: str, accepted: tuple[str, ...]) -> str:
    """'Unknown query parameter. Got: 'targt'. Expected one of: target, mode. Did you mean 'target'?'"""
    if not accepted:
        return f"{TITLE}. Got: {shown(name)}. This route takes no query parameters"
    hint = did_you_mean(name, accepted)
    text = f"{TITLE}. Got: {shown(name)}. Expected one of: {', '.join(accepted)}"
    return text + (f". Did you mean {hint!r}?" if hint else "")


def accepted(route: APIRoute) -> tuple[str, ...]:
    """The query parameter names the route declares (aliases as sent on the wire), in declaration order.

    Read from the route as defined (FastAPI puts it in scope["route"]): its endpoint's parameters and its own
    dependencies'. A dependency given to `include_router(dependencies=...)` is not in it; none of ours takes a
    query parameter, and tests/api/test_query_params.py checks these names against /openapi.json's (built from the
    effective routes) for every operation."""
    names: tuple[str, ...] | None = vars(route).get(_CACHE)
    if names is None:
        names = tuple(dict.fromkeys(_query_names(route.dependant)))
        setattr(route, _CACHE, names)
    return names


def _query_names(dependant: Dependant) -> list[str]:
    names: list[str] = []
    for field in dependant.query_params:
        model = field.field_info.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):  # a Query() model: its fields are the names
            names += [f.alias or n for n, f in model.model_fields.items()]
        else:
            names.append(field.alias)
    for sub in dependant.dependencies:
        names += _query_names(sub)
    return names


async def known_query(request: Request) -> None:
    """Refuse a query parameter the matched route does not declare (repeating a declared one is the route's
    business: the list parameters take repeats)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute) or not request.scope.get("query_string"):
        return
    names = accepted(route)
    unknown = [k for k in dict.fromkeys(request.query_params.keys()) if k not in names]
    if unknown:
        raise UnknownQueryParameter(unknown, names)


KNOWN_QUERY = Depends(known_query)


def document(app: FastAPI) -> None:
    """Declare the 400 on every operation of /openapi.json (any of them answers it for an unknown parameter)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()
        body = {"$ref": "#/components/schemas/Problem"} if "Problem" in schema.get("components", {}).get(
            "schemas", {}) else {}
        for item in schema.get("paths", {}).values():
            for op in item.values():
                if isinstance(op, dict) and "responses" in op:
                    op["responses"].setdefault("400", {"description": "Bad request (an unknown query parameter, "
                                                                      "named in `errors[].loc` as query.NAME)",
                                                       "content": {"application/problem+json": {"schema": body}}})
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
