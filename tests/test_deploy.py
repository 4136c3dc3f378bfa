"""deploy/: the Kubernetes manifests parse, agree with each other, with the Dockerfile and with clipbridge.core.settings."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


def docs() -> dict[str, dict]:
    out = {}
    for path in sorted(DEPLOY.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                out[doc["kind"]] = doc
    return out


def container() -> dict:
    return docs()["Deployment"]["spec"]["template"]["spec"]["containers"][0]


def test_the_manifests_parse_and_are_complete():
    d = docs()
    assert {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Kustomization"} <= set(d)
    assert d["HorizontalPodAutoscaler"]["apiVersion"] == "autoscaling/v2"
    listed = set(d["Kustomization"]["resources"])
    # fleet-job.yaml is the nightly fleet Job, applied on its own (docs/fleet.md), never with the service.
    assert listed == {p.name for p in DEPLOY.glob("*.yaml")} - {"kustomization.yaml", "fleet-job.yaml"}


def test_selectors_ports_and_targets_agree():
    d = docs()
    labels = d["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert d["Deployment"]["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert d["Service"]["spec"]["selector"].items() <= labels.items()
    assert d["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= labels.items()
    ports = {p["name"]: p["containerPort"] for p in container()["ports"]}
    assert d["Service"]["spec"]["ports"][0]["targetPort"] in ports
    env = {e["name"]: e.get("value") for e in container()["env"]}
    assert int(env["CLIPBRIDGE_PORT"]) == ports["http"]
    ref = d["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (ref["kind"], ref["name"]) == ("Deployment", d["Deployment"]["metadata"]["name"])
    assert d["HorizontalPodAutoscaler"]["spec"]["metrics"][0]["resource"]["name"] == "cpu"


def test_probes_resources_and_security_match_the_image():
    c = container()
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"]["path"] == "/healthz"
    assert {"cpu", "memory"} <= set(c["resources"]["requests"]) and {"cpu", "memory"} <= set(c["resources"]["limits"])
    uid = re.search(r"--uid (\d+)", (ROOT / "Dockerfile").read_text())
    assert uid
    pod = docs()["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == int(uid.group(1)) and pod["securityContext"]["runAsNonRoot"]
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    grace = int({e["name"]: e.get("value") for e in c["env"]}["CLIPBRIDGE_GRACEFUL_SHUTDOWN_SECONDS"])
    assert pod["terminationGracePeriodSeconds"] > grace + 5  # the preStop sleep, then the graceful shutdown


def test_every_env_var_is_a_real_setting_and_the_key_comes_from_a_secret():
    known = set(re.findall(r'"(CLIPBRIDGE_[A-Z_]+)"', (ROOT / "app" / "clipbridge" / "core" / "settings.py").read_text()))
    env = container()["env"]
    names = {e["name"] for e in env}
    assert names <= known, names - known
    key = next(e for e in env if e["name"] == "CLIPBRIDGE_API_KEY")
    assert "secretKeyRef" in key["valueFrom"] and "value" not in key
