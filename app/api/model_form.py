"""The multipart form the whole-model routes take (diff, chain): a file 'model' and optionally a file 'inputs'.

One reader, so that every model route refuses the same things with the same words and `loc`: another content
type (415), an unknown field, a 'model' that is no file or is empty, an 'inputs' that is no file.
"""

from __future__ import annotations

from fastapi import Request
from starlette.datastructures import UploadFile

from app.core.errors import ArtifactError, UnsupportedMediaType


async def read_model_form(request: Request, model_is: str) -> tuple[bytes, bytes | None]:
    """The model's bytes and the optional .npz's; `model_is` says what 'model' holds ("the .onnx", ...)."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "multipart/form-data":
        raise UnsupportedMediaType(f"send multipart/form-data with a file field 'model' ({model_is}; optionally "
                                   f"'inputs', an .npz); got {ctype or 'no content type'}")
    async with request.form(max_files=2, max_fields=2) as form:
        extra = sorted(set(form.keys()) - {"model", "inputs"})
        if extra:
            raise ArtifactError(f"unknown form field {extra[0][:40]!r}; send 'model' and optionally 'inputs'",
                                extra[0][:40])
        model, inputs = form.get("model"), form.get("inputs")
        if not isinstance(model, UploadFile):
            raise ArtifactError(f"the form needs a file field 'model' ({model_is})", "model")
        if inputs is not None and not isinstance(inputs, UploadFile):
            raise ArtifactError("'inputs' must be a file (an .npz)", "inputs")
        data = await model.read()
        if not data:
            raise ArtifactError("the model is empty", "model")
        npz = await inputs.read() if inputs is not None else None
    return data, npz
