"""The HTTP API: FastAPI routers, the request/response models, problem+json errors, the API key and CORS.

The top layer (docs/architecture.md): imported by clipbridge.main (which mounts the routers), clipbridge.client (which speaks
the models) and clipbridge.api.schemas_export (which writes schemas/*.json from them), never by service, scan, lint or the
dialects. It may import any layer below it."""
