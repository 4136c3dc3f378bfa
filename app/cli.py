"""The `clipbridge` command: serve, translate, dialects, schemas."""

from __future__ import annotations

import argparse
import json
import os
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


def cmd_scan(args: argparse.Namespace) -> int:
    import mmap

    from app.dialects.common import Mode
    from app.scan.report import scan, worst_status
    from app.scan.rewrite import rewrite
    path = Path(args.model)
    weights_path = Path(args.weights) if args.weights else None
    if weights_path is None and path.suffix.lower() == ".xml" and path.with_suffix(".bin").is_file():
        weights_path = path.with_suffix(".bin")
    with open(path, "rb") as f, (open(weights_path, "rb") if weights_path else open(os.devnull, "rb")) as w:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if path.stat().st_size else b""
        weights = (mmap.mmap(w.fileno(), 0, access=mmap.ACCESS_READ) if weights_path.stat().st_size else b""
                   ) if weights_path else None  # an empty file cannot be mapped: it is an empty .bin
        if args.rewrite:
            if not args.rewrite_for:
                raise ClipBridgeError("--rewrite needs --for TARGET (e.g. --for directml:5_0)")
            out = rewrite(data, args.rewrite_for, args.opset)
            Path(args.rewrite).write_bytes(out.model_bytes)
            for item in out.done:
                print(f"rewrote {item['path']}/{item['node']}: bounds [{', '.join(item['bounds'])}], "
                      f"{args.rewrite_for}: {item['before']} -> {item['after']}")
            for item in out.skipped:
                print(f"skipped {item['path']}/{item['node']}: {item['reason']}")
            print(f"wrote {args.rewrite} (opset {out.opset})")
            return 0
        result = scan(data, weights, args.target, Mode(args.mode))
    body = result.to_json()
    if args.format == "json":
        json.dump(body, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        print_scan_table(body)
    return {"exact": 0, "drift": 1}.get(worst_status(result), 2)


def print_scan_table(body: dict) -> None:
    labels = [t["label"] for t in body["targets"]]
    rows = [["#", "clip", "pattern", "dtype", *labels]]
    for c in body["clips"]:
        where = f"{c['path']}/{c['node']}"
        cells = [t["status"] for t in c["translations"]] or [f"error: {c['error']}"[:60]] + [""] * (len(labels) - 1)
        rows.append([str(c["id"]), where, c["pattern"], c["dtype"] or "?", *cells])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    s = body["summary"]
    counts = "; ".join(f"{t['label']}: {t['exact']} exact, {t['drift']} drift, {t['unsupported']} unsupported"
                       for t in s["targets"])
    print(f"\n{s['clips']} clips ({s['unresolved']} unresolved). {counts}")
    if s["worst"]:
        w = s["worst"]
        print(f"worst: [{w['severity']}] {w['code']} at clip {w['clip']} ({w['label']}): {w['message']}")


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
    import signal

    import uvicorn

    from app.observability import log_config
    from app.serving import PROTOCOL
    from app.settings import Settings
    s = Settings.from_env()  # fail closed: a blank or malformed setting stops here (exit 2, naming the variable)

    def terminated(signum: int, frame: object) -> None:
        raise SystemExit(0)  # SIGTERM is the normal way to stop a server: a clean exit, not death by signal

    # uvicorn puts this handler back and re-raises SIGTERM once its graceful shutdown is done; before it starts,
    # SIGTERM exits at once.
    signal.signal(signal.SIGTERM, terminated)
    # JSON log lines (the app writes its own access log, with request ids; uvicorn's is off). On SIGTERM uvicorn
    # stops accepting, lets requests in flight finish for up to graceful_shutdown_seconds, then exits 0.
    # http=: uvicorn's h11 protocol plus the head timeout and the minimum body rate (app/serving.py).
    uvicorn.run("app.main:app", host=args.host or s.host, port=args.port or s.port,
                workers=args.workers or s.workers, log_level=args.log_level, log_config=log_config(args.log_level),
                access_log=False, timeout_graceful_shutdown=s.graceful_shutdown_seconds, http=PROTOCOL)
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
    m = sub.add_parser("scan", help="every clip of an ONNX model or OpenVINO IR with drift per target; exit 0 "
                                    "all exact, 1 drift, 2 unsupported or error")
    m.add_argument("model", help="an .onnx file or an IR .xml (its .bin beside it is read when present)")
    m.add_argument("--weights", help="the IR's .bin, when not beside the .xml")
    m.add_argument("--target", action="append", help="onnx[:OPSET], openvino[:opsetN], directml[:FL]; "
                                                     "repeatable; default: onnx, openvino, directml")
    m.add_argument("--format", choices=["table", "json"], default="table")
    m.add_argument("--mode", choices=["preserve", "literal"], default="preserve")
    m.add_argument("--rewrite", metavar="OUT.onnx", help="write the model with every Clip given explicit typed "
                                                         "bounds (needs --for)")
    m.add_argument("--for", dest="rewrite_for", metavar="TARGET", help="the target the rewrite is checked against")
    m.add_argument("--opset", type=int, help="ONNX opset of the rewritten model (default: the model's, >= 11)")
    m.set_defaults(func=cmd_scan)
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
