"""Fail closed: a security or limit setting that is set but blank or malformed stops start-up with a message
naming the variable (create_app raises; `clipbridge serve` exits 2 before it binds a port)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clipbridge.core.errors import ClipBridgeError
from clipbridge.main import create_app
from clipbridge.core.settings import ENV, Settings

ROOT = Path(__file__).resolve().parents[2]

BAD = [  # (case, variable, value)
    ("key-blank", "CLIPBRIDGE_API_KEY", ""),
    ("key-whitespace", "CLIPBRIDGE_API_KEY", "   \t "),
    ("key-newline-only", "CLIPBRIDGE_API_KEY", "\n"),
    ("key-inner-space", "CLIPBRIDGE_API_KEY", "abcdefgh ijklmnopqr"),
    ("key-control-char", "CLIPBRIDGE_API_KEY", "abcdefgh\x01ijklmnopqr"),
    ("key-escape", "CLIPBRIDGE_API_KEY", "abcdefgh\x1bijklmnopqr"),
    ("key-non-ascii", "CLIPBRIDGE_API_KEY", "abcdefghijklmnopqré"),
    ("key-too-short", "CLIPBRIDGE_API_KEY", "short-key"),
    ("cors-path", "CLIPBRIDGE_CORS_ORIGINS", "https://a.example/app"),
    ("cors-no-scheme", "CLIPBRIDGE_CORS_ORIGINS", "a.example"),
    ("cors-ftp", "CLIPBRIDGE_CORS_ORIGINS", "ftp://a.example"),
    ("cors-star-in-list", "CLIPBRIDGE_CORS_ORIGINS", "*, https://a.example"),
    ("cors-bad-port", "CLIPBRIDGE_CORS_ORIGINS", "https://a.example:99999"),
    ("cors-userinfo", "CLIPBRIDGE_CORS_ORIGINS", "https://u:p@a.example"),
    ("body-negative", "CLIPBRIDGE_MAX_BODY_BYTES", "-1"),
    ("body-zero", "CLIPBRIDGE_MAX_BODY_BYTES", "0"),
    ("body-garbage", "CLIPBRIDGE_MAX_BODY_BYTES", "16MiB"),
    ("body-blank", "CLIPBRIDGE_MAX_BODY_BYTES", "  "),
    ("body-float", "CLIPBRIDGE_MAX_BODY_BYTES", "1e6"),
    ("npy-negative", "CLIPBRIDGE_MAX_NPY_BYTES", "-5"),
    ("model-garbage", "CLIPBRIDGE_MAX_MODEL_BYTES", "lots"),
    ("elements-zero", "CLIPBRIDGE_MAX_NPY_ELEMENTS", "0"),
    ("json-elements-negative", "CLIPBRIDGE_MAX_JSON_ELEMENTS", "-10"),
    ("slots-zero", "CLIPBRIDGE_MAX_CONCURRENT_EXECUTIONS", "0"),
    ("seconds-nan", "CLIPBRIDGE_MAX_EXECUTION_SECONDS", "nan"),
    ("seconds-inf", "CLIPBRIDGE_MAX_EXECUTION_SECONDS", "inf"),
    ("seconds-negative", "CLIPBRIDGE_MAX_EXECUTION_SECONDS", "-1"),
    ("head-timeout-zero", "CLIPBRIDGE_HEADER_TIMEOUT_SECONDS", "0"),
    ("head-timeout-nan", "CLIPBRIDGE_HEADER_TIMEOUT_SECONDS", "NaN"),
    ("rate-negative", "CLIPBRIDGE_MIN_BODY_BYTES_PER_SECOND", "-1"),
    ("grace-garbage", "CLIPBRIDGE_BODY_GRACE_SECONDS", "ten"),
    ("sandbox-workers-zero", "CLIPBRIDGE_SANDBOX_WORKERS", "0"),
    ("sandbox-memory-tiny", "CLIPBRIDGE_SANDBOX_MEMORY_MB", "8"),
    ("sandbox-memory-garbage", "CLIPBRIDGE_SANDBOX_MEMORY_MB", "4GiB"),
    ("sandbox-timeout-nan", "CLIPBRIDGE_SANDBOX_TIMEOUT_SECONDS", "nan"),
    ("sandbox-timeout-zero", "CLIPBRIDGE_SANDBOX_TIMEOUT_SECONDS", "0"),
    ("sandbox-result-tiny", "CLIPBRIDGE_SANDBOX_MAX_RESULT_BYTES", "10"),
    ("memo-negative", "CLIPBRIDGE_MEMO_BYTES", "-1"),
    ("memo-entries-garbage", "CLIPBRIDGE_MEMO_ENTRIES", "many"),
    ("port-zero", "CLIPBRIDGE_PORT", "0"),
    ("port-huge", "CLIPBRIDGE_PORT", "70000"),
    ("workers-zero", "CLIPBRIDGE_WORKERS", "0"),
    ("shutdown-negative", "CLIPBRIDGE_GRACEFUL_SHUTDOWN_SECONDS", "-3"),
    ("access-log-garbage", "CLIPBRIDGE_ACCESS_LOG", "maybe"),
    ("access-log-blank", "CLIPBRIDGE_ACCESS_LOG", " "),
    ("host-blank", "CLIPBRIDGE_HOST", " "),
]


@pytest.fixture
def clean_env(monkeypatch):
    for name in ENV.values():
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize("name,value", [(n, v) for _, n, v in BAD], ids=[c for c, _, _ in BAD])
def test_a_malformed_setting_refuses_to_start(clean_env, name, value):
    clean_env.setenv(name, value)
    with pytest.raises(ClipBridgeError) as err:
        Settings.from_env()
    assert name in str(err.value)
    if name == "CLIPBRIDGE_API_KEY":
        assert value.strip() == "" or value not in str(err.value)  # the key itself is never echoed


@pytest.mark.parametrize("kwargs", [{"api_key": " "}, {"api_key": "short"}, {"max_npy_bytes": -1},
                                    {"max_execution_seconds": float("nan")}, {"cors_origins": ("nope",)},
                                    {"header_timeout_seconds": float("inf")}, {"memo_bytes": -1}],
                         ids=["key-blank", "key-short", "npy-negative", "seconds-nan", "cors", "head-inf", "memo"])
def test_settings_built_in_code_are_checked_too(kwargs):
    with pytest.raises(ClipBridgeError):
        create_app(Settings(**kwargs))


GOOD = [("key", "CLIPBRIDGE_API_KEY", "a-long-enough-key-0123", "api_key", "a-long-enough-key-0123"),
        ("key-trailing-newline", "CLIPBRIDGE_API_KEY", "a-long-enough-key-0123\n", "api_key", "a-long-enough-key-0123"),
        ("cors-two", "CLIPBRIDGE_CORS_ORIGINS", "https://a.example, http://b.example:8080", "cors_origins",
         ("https://a.example", "http://b.example:8080")),
        ("cors-star", "CLIPBRIDGE_CORS_ORIGINS", "*", "cors_origins", ("*",)),
        ("cors-blank-is-same-origin", "CLIPBRIDGE_CORS_ORIGINS", " ", "cors_origins", ()),
        ("seconds-zero-is-no-limit", "CLIPBRIDGE_MAX_EXECUTION_SECONDS", "0", "max_execution_seconds", 0.0),
        ("rate-zero-is-off", "CLIPBRIDGE_MIN_BODY_BYTES_PER_SECOND", "0", "min_body_bytes_per_second", 0.0),
        ("memo-zero-is-off", "CLIPBRIDGE_MEMO_BYTES", "0", "memo_bytes", 0),
        ("head-timeout", "CLIPBRIDGE_HEADER_TIMEOUT_SECONDS", "2.5", "header_timeout_seconds", 2.5)]


@pytest.mark.parametrize("name,value,attr,expected", [g[1:] for g in GOOD], ids=[g[0] for g in GOOD])
def test_well_formed_settings_are_read(clean_env, name, value, attr, expected):
    clean_env.setenv(name, value)
    assert getattr(Settings.from_env(), attr) == expected


@pytest.mark.parametrize("name,value", [("CLIPBRIDGE_API_KEY", "  "), ("CLIPBRIDGE_MAX_NPY_BYTES", "-1"),
                                        ("CLIPBRIDGE_CORS_ORIGINS", "not an origin")],
                         ids=["blank-key", "negative-limit", "cors"])
def test_serve_exits_non_zero_naming_the_variable(name, value):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLIPBRIDGE_")}
    env.update({"PYTHONPATH": f"{ROOT / 'app'}{os.pathsep}{ROOT}", name: value, "CLIPBRIDGE_PORT": "1"})  # never bound: it stops first
    done = subprocess.run([sys.executable, "-m", "clipbridge.cli.main", "serve"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr[-1000:])
    assert f"error: {name}" in done.stderr and "Traceback" not in done.stderr
