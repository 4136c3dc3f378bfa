"""What every request and response body of the HTTP API builds on: the strict base model, the renamed-field
reader, and the shared field types and texts."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Union

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

from clipbridge.api.deprecation import OLD_NAMES_UNTIL, note
from clipbridge.dialects import registry

WireValue = Union[int, float, str]
PrecisionField = Literal["model", "deployed"]
PRECISION_DOC = ("How an engine backend computes: model (default) pins the engine's inference precision to the "
                 "model's own element type (OpenVINO f32 stays f32, onnxruntime without graph rewrites); deployed "
                 "uses the engine's defaults on this host (OpenVINO runs f32 in bf16 on CPUs with bf16 support). "
                 "The numpy and cupy backends compute the spec exactly either way.")
ENGINE_DOC = ("The settings the engine ran with (precision asked, OpenVINO's effective inference precision read "
              "back from the compiled model, onnxruntime's optimization level, flush-to-zero); null for numpy/cupy")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# One vocabulary (docs/api.md#one-vocabulary): every request names its spec `spec`, a list of dialects `targets` and
# one dialect `target`. The names of 0.1.0 and before stay accepted until OLD_NAMES_UNTIL (clipbridge.api.deprecation,
# which also answers their use with a Deprecation header); the schemas show only the new.


TargetGroup = Literal["all", "default"]
GROUP_DOC = ('; or a group, as the CLI\'s --target takes: "all" (every registered dialect) or "default" (the default '
             "dialects), each without the spec's own dialect")


class Grouped(BaseModel):
    """A request whose `targets` may name a group ("all", "default") instead of a list: expanded after validation
    into the dialect names, without the spec's own dialect (the CLI's rule, app/clipbridge/cli/vocabulary.py)."""

    @model_validator(mode="after")
    def _expand_group(self) -> Any:
        group = getattr(self, "targets", None)
        if isinstance(group, str):
            names = registry.names() if group == "all" else registry.default_names()
            own = getattr(getattr(self, "spec", None), "dialect", None)
            self.targets = [n for n in names if n != own]  # type: ignore[attr-defined]
        return self


class Renamed(_Strict):
    """A request body whose fields had other names: the old names are read as the new ones until OLD_NAMES_UNTIL,
    each use noted for the answer's Deprecation header (clipbridge.api.deprecation)."""

    RENAMED: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not any(old in data for old in cls.RENAMED):
            return data
        data = dict(data)
        for old, new in cls.RENAMED.items():
            if old not in data:
                continue
            if new in data:
                raise PydanticCustomError("renamed", "`{old}` is the old name of `{new}`: send only `{new}`",
                                          {"old": old, "new": new})
            data[new] = data.pop(old)
            note(old, new)
        return data
