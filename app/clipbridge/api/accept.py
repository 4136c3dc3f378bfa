"""Content negotiation for the routes that answer in more than one media type (RFC 9110 section 12.5.1)."""

from __future__ import annotations

from fastapi import Request


def _quality(accept: str, media_type: str) -> float:
    """The q the Accept header gives `media_type`: from its most specific matching range (type/subtype, then
    type/*, then */*), 0 when none matches."""
    kind = media_type.split("/")[0]
    best: tuple[int, float] = (-1, 0.0)
    for item in accept.split(","):
        rng, *params = (p.strip() for p in item.split(";"))
        rng = rng.lower()
        rank = 2 if rng == media_type else 1 if rng == f"{kind}/*" else 0 if rng == "*/*" else -1
        if rank <= best[0]:
            continue
        q = 1.0
        for p in params:
            name, _, value = p.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = min(max(float(value), 0.0), 1.0)
                except ValueError:
                    q = 0.0  # a q that is no number: read as not acceptable (RFC 9110 allows only 0..1)
        best = (rank, q)
    return best[1]


def prefers(request: Request, media_type: str, over: str) -> bool:
    """Whether the client asks for `media_type` rather than `over` (the route's default): only when Accept
    names it with a higher q than `over` gets. No Accept, `*/*` or a tie keeps the default."""
    accept = request.headers.get("accept", "")
    return bool(accept) and _quality(accept, media_type) > _quality(accept, over)
