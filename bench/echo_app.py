"""The service plus a bare echo route, for bench/execute_http.py's anchor (not part of the product)."""

from fastapi import Request, Response

from clipbridge.main import create_app

app = create_app()


@app.post("/bench/echo.npy")  # .npy: the same body limit as /v1/execute.npy
async def echo(request: Request) -> Response:
    return Response(await request.body(), media_type="application/x-npy")
