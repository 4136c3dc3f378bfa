"""The capability matrix: per dialect and version, the dtypes, ranks and semantic rules in force."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from app import runtime_support
from app.dialects import directml, onnx, openvino
from app.dtypes import ALL
from app.findings import CODE_DOCS


@lru_cache(maxsize=1)
def capabilities() -> dict[str, Any]:
    onnx_versions = []
    for i, s in enumerate(onnx.CLIP_VERSIONS):
        nxt = onnx.CLIP_VERSIONS[i + 1].since - 1 if i + 1 < len(onnx.CLIP_VERSIONS) else None
        order, order_rule = onnx.order_onnx(s)
        defaults = ("missing bound: the FLT_MAX literals -3.402823e+38 / 3.402823e+38 cast to T (float16: +-inf)"
                    if s.since == 6 else "missing bound: numeric_limits<T>::lowest() / max()")
        onnx_versions.append({
            "version": s.name,
            "selects": f"opset {s.since}" + (f"..{nxt}" if nxt else "+") if nxt != s.since else f"opset {s.since}",
            "dtypes": [d.onnx for d in s.dtypes], "ranks": "any",
            "rules": [s.summary, "bounds: float attributes cast to T" if s.attributes else
                      "bounds: typed scalar inputs of T", defaults, order_rule,
                      "NaN input propagates; NaN bound gives all NaN"]})
    dml_versions = []
    for lv in directml.FEATURE_LEVELS:
        dts, (rmin, rmax) = directml.tensor_support_directml(lv)
        ops = [directml.CLIP] + ([directml.CLIP1] if lv >= "5_0" else [])
        dml_versions.append({
            "version": lv, "selects": f"feature_level {lv}", "dtypes": [d.directml for d in dts],
            "ranks": f"{rmin}" if rmin == rmax else f"{rmin}-{rmax}", "operators": ops,
            "rules": ["CLIP: FLOAT Min/Max cast to T (integers truncate toward zero, float16 nearest even)",
                      "CLIP: min > max ambiguous (2022 doc gives Max, current doc gives Min)",
                      *(["CLIP1: MinMaxDataType == OutputTensor.DataType; min > max gives Min"] if lv >= "5_0"
                        else []),
                      "ScaleBias x*Scale+Bias before clipping", "NaN undocumented",
                      "input and output: same DataType, DimensionCount, Sizes"]})
    return {
        "dialects": [
            {"dialect": "onnx", "default_target": {"dialect": "onnx", "opset": onnx.NEWEST_OPSET},
             "versions": onnx_versions},
            {"dialect": "openvino", "default_target": {"dialect": "openvino",
                                                       "version": f"opset{openvino.LATEST_OPSET}"},
             "versions": [{"version": openvino.CLAMP_VERSION, "selects": f"opset1..opset{openvino.LATEST_OPSET}",
                           "dtypes": [d.openvino for d in ALL], "ranks": "any",
                           "rules": ["min/max are double attributes; min <= max required (NaN rejected)",
                                     "integral T: ceil(min), floor(max), saturated",
                                     "floating T: plain cast (nearest even)",
                                     "min(max(x, min), max): ceil(min) > floor(max) gives max",
                                     "NaN input propagates (CPU plugin: clamps to min)"]}]},
            {"dialect": "directml", "default_target": {"dialect": "directml", "feature_level": directml.NEWEST_LEVEL},
             "versions": dml_versions},
        ],
        "finding_codes": [{"code": c.value, "meaning": text} for c, text in CODE_DOCS.items()],
        "runtime_support": runtime_support.summary(),
    }
