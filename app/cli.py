"""The `clipbridge` command: serve, translate, dialects, schemas."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from app.errors import ClipBridgeError


def _target(text: str) -> object:
    """'onnx', 'onnx:11', 'openvino:opset13', 'directml:5_0' -> a target item."""
    from app.specs import DirectMLTarget, OnnxTarget, OpenVinoTarget
    name, _, version = text.partition(":")
    name = name.strip().lower()
    if not version:
        return name
    if name == "onnx":
        try:
            return OnnxTarget(dialect="onnx", opset=int(version))
        except ValueError:
            raise ClipBridgeError(f"--to onnx:N takes an opset number, got {version!r}") from None
    if name == "openvino":
        return OpenVinoTarget(dialect="openvino", version=version)
    if name == "directml":
        return DirectMLTarget(dialect="directml", feature_level=version)
    raise ClipBridgeError(f"Unknown target dialect {name!r} (onnx, openvino, directml)")


def cmd_translate(args: argparse.Namespace) -> int:
    from app.dialects.common import Mode
    from app.specs import Spec
    from app.translate import translate
    raw = sys.stdin.read() if args.spec == "-" else Path(args.spec).read_text()
    data = json.loads(raw, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"bare {c} is not JSON")))
    if isinstance(data, dict) and "source" in data:
        data = data["source"]
    spec = TypeAdapter(Spec).validate_python(data)
    targets = [_target(t) for t in args.to] if args.to else None
    result = translate(spec, targets, Mode(args.mode)).to_json()  # type: ignore[arg-type]
    json.dump(result, sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")
    statuses = {t["status"] for t in result["translations"]}
    if "unsupported" in statuses:
        return 2
    return 1 if "drift" in statuses else 0


def cmd_dialects(args: argparse.Namespace) -> int:
    from app.capabilities import capabilities
    json.dump(capabilities(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def cmd_schemas(args: argparse.Namespace) -> int:
    from app.schemas_export import write
    for path in write(Path(args.out)):
        print(path)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.settings import Settings
    s = Settings.from_env()
    uvicorn.run("app.main:app", host=args.host or s.host, port=args.port or s.port,
                workers=args.workers or s.workers, log_level=args.log_level)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="clipbridge", description="Translate Clip/Clamp between DirectML, OpenVINO "
                                "and ONNX, and report drift.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run the HTTP service (uvicorn)")
    s.add_argument("--host", default=None, help="default: CLIPBRIDGE_HOST or 127.0.0.1")
    s.add_argument("--port", type=int, default=None, help="default: CLIPBRIDGE_PORT or 8000")
    s.add_argument("--workers", type=int, default=None, help="default: CLIPBRIDGE_WORKERS or 1")
    s.add_argument("--log-level", default="info")
    s.set_defaults(func=cmd_serve)
    t = sub.add_parser("translate", help="translate a spec (JSON file or - for stdin); exit 0 exact, 1 drift, "
                                         "2 unsupported or error")
    t.add_argument("spec", nargs="?", default="-")
    t.add_argument("--to", action="append", help="target: onnx[:OPSET], openvino[:opsetN], directml[:FL]; "
                                                 "repeatable; default: every other dialect")
    t.add_argument("--mode", choices=["preserve", "literal"], default="preserve")
    t.set_defaults(func=cmd_translate)
    d = sub.add_parser("dialects", help="print the capability matrix")
    d.set_defaults(func=cmd_dialects)
    c = sub.add_parser("schemas", help="write JSON Schemas of the API bodies")
    c.add_argument("--out", default="schemas")
    c.set_defaults(func=cmd_schemas)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValidationError as exc:
        for e in exc.errors():
            loc = ".".join(str(x) for x in e["loc"] if "[" not in str(x))
            print(f"error: {loc}: {e['msg']}", file=sys.stderr)
        return 2
    except ClipBridgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
