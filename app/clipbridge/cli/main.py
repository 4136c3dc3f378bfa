"""The `clipbridge` command: serve, translate, scan, dialects, schemas and --version; the other commands are
wired from their modules (app/clipbridge/cli/__init__.py). Every flag is in the vocabulary of docs/cli.md."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from clipbridge.dialects import registry
from clipbridge.dialects.kit.common import Mode
from clipbridge.cli import chain as chain_cli
from clipbridge.cli import deprecated
from clipbridge.cli.dialects import cmd_dialects
from clipbridge.cli import diff as diff_cli
from clipbridge.cli import fix as fix_cli
from clipbridge.cli import fleet as fleet_cli
from clipbridge.core.errors import ClipBridgeError
from clipbridge.core.settings import Settings
from clipbridge.engines.config import limits_text
from clipbridge.service.field_errors import field_errors
from clipbridge.cli import lint as lint_cli
from clipbridge.cli import output as cli_output
from clipbridge.cli.version import Version
from clipbridge.cli.vocabulary import TARGET_FLAGS, add_mode, add_output, add_target, expand_targets, stdin_hint
from clipbridge.api.schemas_export import write
from clipbridge.service.specs import Spec
from clipbridge.core.suggest import one_of
from clipbridge.service.translate import translate
from clipbridge.engines import quiet


EXAMPLE_SPEC = '{"dialect":"onnx","opset":13,"elem_type":"FLOAT","min":0,"max":6}'


def _target(text: str, flag: str = TARGET_FLAGS[0]) -> object:
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
        raise ClipBridgeError(f"{flag} {exc.message}") from None


def cmd_translate(args: argparse.Namespace) -> int:
    data = _read_spec(args.spec)
    if isinstance(data, dict) and ("spec" in data or "source" in data):  # a /v1/translate body (new or old name)
        if "spec" not in data:
            deprecated.note(args, 'a body\'s "source"', '"spec"')
        data = data.get("spec", data.get("source"))
    spec = TypeAdapter(Spec).validate_python(data)
    args.target = expand_targets(args.target, spec.dialect)  # error locations and labels name the expanded items
    targets = [_target(t, args.target_flag) for t in args.target] if args.target else None
    result = translate(spec, targets, Mode(args.mode)).to_json()  # type: ignore[arg-type]
    statuses = {t["status"] for t in result["translations"]}
    code = 2 if "unsupported" in statuses else 1 if "drift" in statuses else 0
    return cli_output.translate_output(result, args, code)


def _read_spec(where: str) -> object:
    """The JSON spec from a file or stdin, with an error that says what to do for a model or an empty input."""
    name = "stdin" if where == "-" else where
    stdin_hint(where, f"echo '{EXAMPLE_SPEC}' | clipbridge translate")
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


def cmd_schemas(args: argparse.Namespace) -> int:
    for path in write(Path(args.output)):
        print(path)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import signal

    import uvicorn
    from uvicorn.supervisors.multiprocess import Multiprocess
    from uvicorn.server import STARTUP_FAILURE

    # Late, and only here: the server's modules import uvicorn and the ASGI stack, which every other command
    # would pay for at start (tests/test_architecture.py declares these three).
    from clipbridge.server.observability import log_config
    from clipbridge.server.serving import PROTOCOL

    s = Settings.from_env()  # fail closed: a blank or malformed setting stops here (exit 2, naming the variable)

    def terminated(signum: int, frame: object) -> None:
        raise SystemExit(0)  # SIGTERM is the normal way to stop a server: a clean exit, not death by signal

    # Before the supervisor starts, SIGTERM exits at once; then the supervisor takes SIGTERM and passes it to
    # its workers, which finish their requests in flight and exit; then it exits 0.
    signal.signal(signal.SIGTERM, terminated)
    # JSON log lines (the app writes its own access log, with request ids; uvicorn's is off). On SIGTERM uvicorn
    # stops accepting, lets requests in flight finish for up to graceful_shutdown_seconds, then exits 0.
    # http=: uvicorn's h11 protocol plus the head timeout and the minimum body rate (app/clipbridge/server/serving.py).
    # --fd: serve on a socket the caller bound and passes open (socket activation; tests bind port 0 for it).
    config = uvicorn.Config("clipbridge.main:app", host=args.host or s.host, port=args.port or s.port, fd=args.fd,
                            workers=args.workers or s.workers, log_level=args.log_level,
                            log_config=log_config(args.log_level), access_log=False,
                            timeout_graceful_shutdown=s.graceful_shutdown_seconds, http=PROTOCOL)
    # Even one worker runs under uvicorn's supervisor (uvicorn.run would serve in-process): a worker that
    # dies (the OOM killer, a crash outside the sandbox) is replaced within the supervisor's 0.5 s poll
    # while the parent keeps the listening socket, so connections wait in its backlog instead of being
    # refused, and are answered by the replacement once it is ready.
    try:
        sock = config.bind_socket()
    except SystemExit as exc:  # uvicorn logs the OSError and exits STARTUP_FAILURE: say what to do about it
        if exc.code != STARTUP_FAILURE or args.fd is not None:
            raise
        print(f"error: cannot listen on {config.host}:{config.port} (the port is in use, or not permitted here): "
              "choose another with --port N (or CLIPBRIDGE_PORT)", file=sys.stderr)
        return STARTUP_FAILURE
    print(_start_line(sock), file=sys.stderr, flush=True)  # for people: where it listens (the log is JSON)
    print(limits_text(s), file=sys.stderr, flush=True)  # what this server process tree may use, said at start
    supervisor = Multiprocess(config, sockets=[sock])
    supervisor.run()
    # A worker that could not start (the app does not import) stops the supervisor: exit non-zero, as
    # uvicorn.run does for a single worker.
    return 3 if any(p.exitcode == STARTUP_FAILURE for p in supervisor.processes) else 0


def _start_line(sock: object) -> str:
    """The one human line at start (the JSON log lines are for machines): where the service answers."""
    name = sock.getsockname()  # type: ignore[attr-defined]
    if not isinstance(name, tuple):  # a unix socket (an inherited --fd is read as one)
        return f"clipbridge serving on {name!r} (Ctrl-C to stop)"
    host, port = str(name[0]), int(name[1])
    url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    return f"clipbridge serving on {url}/ (the inspector; the API under /v1, its docs at /docs; Ctrl-C to stop)"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="clipbridge", description="Translate Clip/Clamp between "
                                f"{', '.join(registry.names())}, and report drift.")
    p.add_argument("--version", action=Version)
    p.add_argument("-v", "--verbose", action="store_true", help="show the log on stderr, the engines' and "
                   "converters' own lines among it (by default they never reach the terminal)")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run the HTTP service (uvicorn); prints the URL it serves on to stderr; exit 0 "
                                     "on SIGTERM, 2 a bad setting, 3 it could not start (a port in use)")
    s.add_argument("--host", default=None, help="default: CLIPBRIDGE_HOST or 127.0.0.1")
    s.add_argument("--port", type=int, default=None, help="default: CLIPBRIDGE_PORT or 8000; a port in use exits 3 "
                   "naming this option")
    s.add_argument("--workers", type=int, default=None, help="default: CLIPBRIDGE_WORKERS or 1")
    s.add_argument("--fd", type=int, default=None, help="serve on this inherited, already bound socket (file "
                   "descriptor) instead of --host/--port")
    s.add_argument("--log-level", default="info", help="uvicorn's log level (default: info)")
    s.set_defaults(func=cmd_serve)
    t = sub.add_parser("translate", help="translate a spec (JSON file or - for stdin); exit 0 exact, 1 drift, "
                                         "2 unsupported or error")
    t.add_argument("spec", nargs="?", default="-", help="a JSON clip spec file (or a /v1/translate body; its "
                   "'spec' is read); - or nothing: read stdin. For a model use `clipbridge scan`")
    add_target(t, "a target")
    add_mode(t)
    cli_output.add_lint_options(t, "json")
    t.set_defaults(func=cmd_translate)
    m = sub.add_parser("scan", help="every clip of an ONNX model or OpenVINO IR with drift per target; exit 0 "
                                    "all exact, 1 drift, 2 unsupported or error")
    m.add_argument("model", help="an .onnx file or an IR .xml (its .bin beside it is read when present)")
    m.add_argument("--weights", help="the IR's .bin, when not beside the .xml")
    add_target(m, "a column")
    cli_output.add_lint_options(m, "table")
    add_mode(m)
    m.add_argument("--rewrite", metavar="OUT.onnx", help="write the model with every Clip given explicit typed "
                                                         "bounds for the one --target; exit 0 if every clip of the "
                                                         "result is exact for it, 1 drift, 2 a clip skipped or "
                                                         "unsupported")
    m.add_argument("--for", dest="rewrite_for", action=deprecated.OldSpelling, metavar="TARGET",
                   new="`clipbridge scan MODEL --rewrite OUT.onnx --target TARGET`")
    m.add_argument("--opset", type=int, help="ONNX opset of the rewritten model (default: the model's, >= 11)")
    m.set_defaults(func=lint_cli.cmd_scan)
    lint_cli.add_subcommands(sub)
    diff_cli.add_subcommand(sub)
    fix_cli.add_subcommand(sub)
    chain_cli.add_subcommand(sub)
    fleet_cli.add_subcommand(sub)
    d = sub.add_parser("dialects", help=f"print the capability matrix of every dialect ({', '.join(registry.names())}"
                       "): versions, dtypes, ranks")
    d.add_argument("--format", choices=["table", "json"], default="table",
                   help="table: one row per version (default); json: the /v1/dialects body, rules included")
    d.set_defaults(func=cmd_dialects)
    c = sub.add_parser("schemas", help="write JSON Schemas of the API bodies")
    add_output(c, "the folder to write them to (default: schemas)", old=("--out",), default="schemas", metavar="DIR")
    c.set_defaults(func=cmd_schemas)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = argparse.Namespace()
    argv = deprecated.rewrite_argv(argv, args)  # `fleet SOURCE...` before `fleet run` (noted on stderr)
    args = build_parser().parse_args(argv, args)
    # the target flag as typed (--target, or an older name until 0.2.0), so that an error names what the user wrote
    quiet.configure(args.verbose)
    args.target_flag = next((a.split("=")[0] for a in argv if a.split("=")[0] in TARGET_FLAGS), TARGET_FLAGS[0])
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
        targets = getattr(args, "target", None)
        if where.startswith("targets[") and targets:  # name the option the user typed
            i = int(where[8:where.index("]")])
            where = f"{args.target_flag} {targets[i]}" if i < len(targets) else where
        print(f"error: {exc.message}" + (f" ({where})" if where else ""), file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
