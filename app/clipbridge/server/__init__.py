"""The server's operations: request ids, access logs and metrics in one ASGI middleware (observability) and the
HTTP/1.1 protocol with connection timeouts that `clipbridge serve` runs (serving).

Part of the top (docs/architecture.md): imports only core; imported by clipbridge.main and, late, by `clipbridge serve`
(app/clipbridge/cli/main.py), never by a layer below the top.
"""
