"""The `clipbridge` command: serve, translate, dialects, schemas."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from app.service.capabilities import capabilities, default_help, target_forms
from app.dialects import registry
from app.dialects.kit.common import Mode
from app.cli import diff as diff_cli
from app.cli import fleet as fleet_cli
from app.core.errors import ClipBridgeError
from app.core.settings import Settings
from app.engines.config import limits_text
from app.service.field_errors import field_errors
from app.cli import lint as lint_cli
from app.cli import output as cli_output
from app.api.schemas_export import write
from app.service.specs import Spec
from app.core.suggest import one_of
from app.service.translate import translate


EXAMPLE_SPEC = '{"dialect":"onnx","opset":13,"elem_type":"FLOAT","min":0,"max":6}'
MODE_HELP = ("preserve (default): choose target numbers that compute what the source computes; literal: copy the "
             "source's numbers and report what changes")


def _target(text: str) -> object:
    """'onnx', 'onnx:11', 'openvino:opset13', 'directml:5_0' -> a target item (any registered dialect)."""
    name, _, version = text.partition(":")
    name = name.strip().lower()
    if not version:
        return name
    if name not in registry.DIALECTS:
        raise ClipBridgeError(one_of("Unknown target dialect", name, registry.names()))
    try:
        return registry.DIALECTS[name].target(version)
    except ClipBridgeError as exc:
        raise ClipBridgeError(f"--to {exc.message}") from None


def _expand_to(items: list[str], source: str) -> list[str]:
    """--to items, comma lists split; 'default' is the default dialects and 'all' every registered one, each
    without the source's own dialect (named alone, the source's dialect is a target like any other)."""
    out: list[str] = []
    for item in items:
        for part in (p.strip() for p in item.split(",")):
            group = {"default": registry.default_names(), "all": registry.names()}.get(part.lower())
            out += [n for n in group if n != source] if group is not None else [part] if part else []
    return out


def cmd_translate(args: argparse.Namespace) -> int:
    data = _read_spec(args.spec)
    if isinstance(data, dict) and ("spec" in data or "source" in data):  # a /v1/translate body (new or old name)
        data = data.get("spec", data.get("source"))
    spec = TypeAdapter(Spec).validate_python(data)
    if args.to:
        args.to = _expand_to(args.to, spec.dialect)  # error locations and labels then name the expanded items
    targets = [_target(t) for t in args.to] if args.to else None
    result = translate(spec, targets, Mode(args.mode)).to_json()  # type: ignore[arg-type]
    statuses = {t["status"] for t in result["translations"]}
    code = 2 if "unsupported" in statuses else 1 if "drift" in statuses else 0
    return cli_output.translate_output(result, args, code)


def _read_spec(where: str) -> object:
    """The JSON spec from a file or stdin, with an error that says what to do for a model or an empty input."""
    name = "stdin" if where == "-" else where
    if where == "-":
        stream = getattr(sys.stdin, "buffer", None)  # bytes, so that a piped model is recognised, not mis-decoded
        raw = stream.read() if stream is not None else sys.stdin.read().encode()
    else:
        raw = Path(where).read_bytes()
    if not raw.strip():
        raise ClipBridgeError(f"{name} is empty: give a JSON clip spec, e.g. echo '{EXAMPLE_SPEC}' | "
                              "clipbridge translate")
    model_hint = f"use `clipbridge scan {where if where != '-' else 'MODEL'}` for the clips of a model"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        kind = "an ONNX model" if where.lower().endswith(".onnx") or raw[:1] == b"\x08" else "not text"
        raise ClipBridgeError(f"{name} is {kind}, not a JSON clip spec: {model_hint}") from None
    if text.lstrip().startswith("<"):
        raise ClipBridgeError(f"{name} is XML (an OpenVINO IR?), not a JSON clip spec: {model_hint}, or send the "
                              "XML as {\"dialect\": \"openvino\", \"ir_xml\": ...}")
    try:
        return json.loads(text, parse_constant=_no_constants)
    except ValueError as exc:
        raise ClipBridgeError(f"{name} is not valid JSON ({exc}); a clip spec looks like {EXAMPLE_SPEC}") from None


def _no_constants(name: str) -> object:
    raise ValueError(f"bare {name} is not JSON; write it as a string, \"{name.lower()}\"")


def cmd_dialects(args: argparse.Namespace) -> int:
    body = capabilities()
    if args.format == "json":
        json.dump(body, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    rows = [["dialect", "version", "selects", "ranks", "dtypes"]]
    for d in body["dialects"]:
        for v in d["versions"]:
            rows.append([d["dialect"], v["version"], v["selects"], v["ranks"], " ".join(v["dtypes"])])
    cli_output.print_rows(rows)
    print("\nDefaults: " + ", ".join(" ".join(f"{k}={v}" for k, v in d["default_target"].items())
                                    for d in body["dialects"]))
    named = [d["dialect"] for d in body["dialects"] if not d.get("in_defaults", True)]
    if named:
        print(f"Used when named (--to {named[0]}), not by default: {', '.join(named)}")
    print("Rules per version and the finding codes: clipbridge dialects --format json (or GET /v1/dialects)")
    host = body["host"]
    ov = host.get("openvino") or {}
    print(f"This host: {host['machine']}, ISA {host['cpu_isa'] or 'unknown'}, OpenVINO bf16 variant "
          f"{host['openvino_bf16_variant']}, default inference precision "
          f"{ov.get('default_inference_precision', 'n/a (openvino not installed)')} (docs/host-differences.md)")
    return 0


def cmd_schemas(args: argparse.Namespace) -> int:
    for path in write(Path(args.out)):
        print(path)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import signal

    import uvicorn
    from uvicorn.supervisors.multiprocess import Multiprocess
    from uvicorn.server import STARTUP_FAILURE

    # Late, and only here: the server's modules import uvicorn and the ASGI stack, which every other command
    # would pay for at start (tests/test_architecture.py declares these three).
    from app.server.observability import log_config
    from app.server.serving import PROTOCOL

    s = Settings.from_env()  # fail closed: a blank or malformed setting stops here (exit 2, naming the variable)
    print(limits_text(s), file=sys.stderr, flush=True)  # what this server process tree may use, said at start

    def terminated(signum: int, frame: object) -> None:
        raise SystemExit(0)  # SIGTERM is the normal way to stop a server: a clean exit, not death by signal

    # Before the supervisor starts, SIGTERM exits at once; then the supervisor takes SIGTERM and passes it to
    # its workers, which finish their requests in flight and exit; then it exits 0.
    signal.signal(signal.SIGTERM, terminated)
    # JSON log lines (the app writes its own access log, with request ids; uvicorn's is off). On SIGTERM uvicorn
    # stops accepting, lets requests in flight finish for up to graceful_shutdown_seconds, then exits 0.
    # http=: uvicorn's h11 protocol plus the head timeout and the minimum body rate (app/server/serving.py).
    # --fd: serve on a socket the caller bound and passes open (socket activation; tests bind port 0 for it).
    config = uvicorn.Config("app.main:app", host=args.host or s.host, port=args.port or s.port, fd=args.fd,
                            workers=args.workers or s.workers, log_level=args.log_level,
                            log_config=log_config(args.log_level), access_log=False,
                            timeout_graceful_shutdown=s.graceful_shutdown_seconds, http=PROTOCOL)
    # Even one worker runs under uvicorn's supervisor (uvicorn.run would serve in-process): a worker that
    # dies (the OOM killer, a crash outside the sandbox) is replaced within the supervisor's 0.5 s poll
    # while the parent keeps the listening socket, so connections wait in its backlog instead of being
    # refused, and are answered by the replacement once it is ready.
    supervisor = Multiprocess(config, sockets=[config.bind_socket()])
    supervisor.run()
    # A worker that could not start (the app does not import) stops the supervisor: exit non-zero, as
    # uvicorn.run does for a single worker.
    return 3 if any(p.exitcode == STARTUP_FAILURE for p in supervisor.processes) else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="clipbridge", description="Translate Clip/Clamp between "
                                f"{', '.join(registry.names())}, and report drift.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run the HTTP service (uvicorn)")
    s.add_argument("--host", default=None, help="default: CLIPBRIDGE_HOST or 127.0.0.1")
    s.add_argument("--port", type=int, default=None, help="default: CLIPBRIDGE_PORT or 8000")
    s.add_argument("--workers", type=int, default=None, help="default: CLIPBRIDGE_WORKERS or 1")
    s.add_argument("--fd", type=int, default=None, help="serve on this inherited, already bound socket (file "
                   "descriptor) instead of --host/--port")
    s.add_argument("--log-level", default="info", help="uvicorn's log level (default: info)")
    s.set_defaults(func=cmd_serve)
    t = sub.add_parser("translate", help="translate a spec (JSON file or - for stdin); exit 0 exact, 1 drift, "
                                         "2 unsupported or error")
    t.add_argument("spec", nargs="?", default="-", help="a JSON clip spec file (or a /v1/translate body; its "
                   "'source' is read); - or nothing: read stdin. For a model use `clipbridge scan`")
    t.add_argument("--to", action="append", help=f"target: {target_forms()}; repeatable or comma-separated; "
                   "'default' and 'all' name groups (without the source's dialect); default: every other default "
                   f"dialect ({', '.join(registry.default_names())})")
    t.add_argument("--mode", choices=["preserve", "literal"], default="preserve", help=MODE_HELP)
    cli_output.add_lint_options(t, "json")
    t.set_defaults(func=cmd_translate)
    m = sub.add_parser("scan", help="every clip of an ONNX model or OpenVINO IR with drift per target; exit 0 "
                                    "all exact, 1 drift, 2 unsupported or error")
    m.add_argument("model", help="an .onnx file or an IR .xml (its .bin beside it is read when present)")
    m.add_argument("--weights", help="the IR's .bin, when not beside the .xml")
    m.add_argument("--target", "--to", dest="target", action="append", help=f"a column: {target_forms()}; "
                   f"repeatable or comma-separated (--to default,stablehlo); 'default' and 'all' name groups; "
                   f"{default_help()}")
    cli_output.add_lint_options(m, "table")
    m.add_argument("--mode", choices=["preserve", "literal"], default="preserve", help=MODE_HELP)
    m.add_argument("--rewrite", metavar="OUT.onnx", help="write the model with every Clip given explicit typed "
                                                         "bounds (needs --for); exit 0 if every clip of the "
                                                         "result is exact for --for, 1 drift, 2 a clip skipped "
                                                         "or unsupported")
    m.add_argument("--for", dest="rewrite_for", metavar="TARGET", help="the target the rewrite is checked against")
    m.add_argument("--opset", type=int, help="ONNX opset of the rewritten model (default: the model's, >= 11)")
    m.set_defaults(func=lint_cli.cmd_scan)
    lint_cli.add_subcommands(sub)
    diff_cli.add_subcommand(sub)
    fleet_cli.add_subcommand(sub)
    d = sub.add_parser("dialects", help=f"print the capability matrix of every dialect ({', '.join(registry.names())}"
                       "): versions, dtypes, ranks")
    d.add_argument("--format", choices=["table", "json"], default="table",
                   help="table: one row per version (default); json: the /v1/dialects body, rules included")
    d.set_defaults(func=cmd_dialects)
    c = sub.add_parser("schemas", help="write JSON Schemas of the API bodies")
    c.add_argument("--out", default="schemas", help="the folder to write them to (default: schemas)")
    c.set_defaults(func=cmd_schemas)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = args.func(args)
        sys.stdout.flush()  # inside the try: a reader that left shows up here, not at interpreter exit
        return code
    except BrokenPipeError:
        # The reader left (`clipbridge scan ... | head`): not an error of ours. Point stdout at /dev/null so the
        # interpreter's final flush does not fail again, and exit as a shell does on SIGPIPE.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except ValidationError as exc:
        for e in field_errors(exc.errors(), Spec):
            print(f"error: {e['loc']}: {e['msg']}", file=sys.stderr)
        return 2
    except ClipBridgeError as exc:
        where = exc.loc or ""
        if where.startswith("targets[") and getattr(args, "to", None):  # name the option the user typed
            i = int(where[8:where.index("]")])
            where = f"--to {args.to[i]}" if i < len(args.to) else where
        print(f"error: {exc.message}" + (f" ({where})" if where else ""), file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
