"""Validates every manifest under deploy/ offline (issue 31 §1).

- Core kinds (Deployment, Service, NetworkPolicy, PersistentVolumeClaim) against the
  Kubernetes API schemas that PyPI's kubernetes-validate ships, strictly (an unknown field
  is an error, as `kubectl apply --validate=strict` makes it).
- agent-sandbox's kinds against the openAPIV3Schema of its CRDs, vendored from its 0.5.6
  tag in deploy/vendor/, as strictly: an object schema that lists its properties and does
  not preserve unknown fields refuses others (the API server would prune them silently).
  A SandboxTemplate's pod template is also checked as a core Pod, its volume claim
  templates as core PersistentVolumeClaims.
- Every container that runs Boris: its args and environment passed to
  `boris --check-config`, so a manifest names only flags and variables Boris has.

`--self-test` first breaks each manifest in a known way (an unknown field, a wrong type,
an unknown Boris flag) and checks that each break is caught: a validator that accepts
everything fails its own test.

Usage: validate.py BORIS_BINARY [--self-test]; exit 0 when every manifest is valid.
"""

import copy
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
VENDOR = DEPLOY / "vendor"
# The Kubernetes API the manifests are checked against: the oldest minor release still
# supported upstream when this was written, so the manifests do not lean on new fields.
KUBERNETES_VERSION = "1.32.0"
SANDBOX_GROUP = "agents.x-k8s.io"


def load_crds():
    """(group, version, kind) → the strict JSON schema of that CRD version."""
    schemas = {}
    for path in sorted(VENDOR.glob("*/*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if not crd or crd.get("kind") != "CustomResourceDefinition":
            continue
        group = crd["spec"]["group"]
        kind = crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            schema = strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))
            schemas[(group, version["name"], kind)] = schema
    return schemas


def strict(node):
    """Refuses unknown properties where the API server would prune them."""
    if isinstance(node, dict):
        if (
            node.get("type") == "object"
            and "properties" in node
            and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")
        ):
            node["additionalProperties"] = False
        for value in node.values():
            strict(value)
    elif isinstance(node, list):
        for value in node:
            strict(value)
    return node


def manifests():
    """(path, index, document) for every document under deploy/ but the vendored CRDs."""
    for path in sorted(DEPLOY.rglob("*.yaml")):
        if VENDOR in path.parents:
            continue
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if doc:
                yield path.relative_to(ROOT), index, doc


def core(doc, where, errors):
    try:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as e:
        path = "/".join(str(p) for p in e.path)
        errors.append(f"{where}: {path}: {e.message}")
    except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as e:
        errors.append(f"{where}: no schema: {e}")


def sandbox_kind(doc, where, crds, errors):
    group, _, version = doc["apiVersion"].partition("/")
    schema = crds.get((group, version, doc["kind"]))
    if schema is None:
        errors.append(f"{where}: {doc['apiVersion']} {doc['kind']} is not in the vendored CRDs")
        return
    validator = jsonschema.Draft7Validator(schema)
    for e in validator.iter_errors(doc):
        path = "/".join(str(p) for p in e.absolute_path)
        errors.append(f"{where}: {path}: {e.message}")
    if doc["kind"] == "SandboxTemplate":
        spec = doc.get("spec", {})
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "template", **spec.get("podTemplate", {}).get("metadata", {})},
            "spec": spec.get("podTemplate", {}).get("spec", {}),
        }
        core(pod, f"{where} podTemplate", errors)
        for i, claim in enumerate(spec.get("volumeClaimTemplates", [])):
            pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", **claim}
            core(pvc, f"{where} volumeClaimTemplates[{i}]", errors)


def pod_specs(doc):
    """The pod specs a document runs."""
    spec = doc.get("spec", {})
    if doc["kind"] == "SandboxTemplate":
        yield spec.get("podTemplate", {}).get("spec", {})
    elif "template" in spec and isinstance(spec["template"], dict):
        yield spec["template"].get("spec", {})


def boris_variables(boris):
    """The BORIS_* variables Boris reads: the env twins its --help names. Boris ignores a
    variable it does not know, so --check-config alone would not catch a misspelt one."""
    import re

    text = subprocess.run([boris, "--help"], capture_output=True, text=True, timeout=60).stdout
    return set(re.findall(r"\bBORIS_[A-Z0-9_]+", text))


def boris_flags(doc, where, boris, errors):
    """Each Boris container's args and environment through `boris --check-config`; the
    container's mount paths become temporary directories."""
    known = boris_variables(boris)
    for pod in pod_specs(doc):
        for c in pod.get("containers", []):
            if not str(c.get("image", "")).startswith("boris:"):
                continue
            with tempfile.TemporaryDirectory() as tmp:
                mounts = {m["mountPath"]: Path(tmp) / m["name"] for m in c.get("volumeMounts", [])}
                for local in mounts.values():
                    local.mkdir()

                def local(value):
                    for container_path, path in mounts.items():
                        if value == container_path or value.startswith(container_path + "/"):
                            return str(path) + value[len(container_path):]
                    return value

                env = {k: v for k, v in os.environ.items() if not k.startswith("BORIS_")}
                for e in c.get("env", []):
                    if e["name"].startswith("BORIS_") and e["name"] not in known:
                        errors.append(
                            f"{where} container {c['name']}: {e['name']} is not a variable "
                            "Boris reads (boris --help names them all)"
                        )
                    if "value" in e:
                        env[e["name"]] = local(str(e["value"]))
                    else:
                        # A secret's value: any non-empty string checks the same.
                        env[e["name"]] = "from-a-secret"
                args = [local(str(a)) for a in c.get("args", [])]
                run = subprocess.run(
                    [boris, *args, "--check-config"],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                if run.returncode != 0:
                    said = (run.stderr or run.stdout).strip().splitlines()
                    errors.append(
                        f"{where} container {c['name']}: boris --check-config: "
                        f"{said[-1] if said else run.returncode}"
                    )


def validate(docs, boris):
    crds = load_crds()
    errors = []
    for path, index, doc in docs:
        where = f"{path}#{index} ({doc.get('kind')} {doc.get('metadata', {}).get('name')})"
        if doc.get("apiVersion", "").partition("/")[0].endswith(SANDBOX_GROUP):
            sandbox_kind(doc, where, crds, errors)
        else:
            core(doc, where, errors)
        boris_flags(doc, where, boris, errors)
    return errors


def breaks(docs):
    """One broken copy of the manifests per way a manifest can go wrong."""
    def first(kind):
        return next(i for i, (_, _, d) in enumerate(docs) if d["kind"] == kind)

    def container(doc):
        return next(pod_specs(doc))["containers"][0]

    cases = []

    def broken(name, kind, change):
        copied = copy.deepcopy(docs)
        change(copied[first(kind)][2])
        cases.append((name, copied))

    broken("unknown field in a Deployment", "Deployment", lambda d: d["spec"].update(replicaz=1))
    broken("wrong type in a Service", "Service", lambda d: d["spec"]["ports"][0].update(port="eighty"))
    broken("unknown field in a SandboxWarmPool", "SandboxWarmPool",
           lambda d: d["spec"].update(sandboxTemplate={"name": "boris"}))
    broken("unknown field in a SandboxTemplate's pod", "SandboxTemplate",
           lambda d: container(d).update(imagePullPolicyy="Always"))
    broken("missing required field in a SandboxClaim", "SandboxClaim",
           lambda d: d["spec"].pop("warmPoolRef"))
    broken("an unknown Boris flag", "SandboxTemplate",
           lambda d: container(d)["args"].append("--no-such-flag"))
    broken("a misspelt Boris variable", "Deployment",
           lambda d: container(d)["env"].append({"name": "BORIS_TOKN", "value": "x"}))
    broken("a bad Boris variable", "Deployment",
           lambda d: container(d)["env"].append({"name": "BORIS_MAX_FILE_SIZE", "value": "huge"}))
    return cases


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    boris = sys.argv[1]
    docs = list(manifests())
    if not docs:
        sys.exit("no manifests under deploy/")
    if "--self-test" in sys.argv[2:]:
        for name, broken in breaks(docs):
            if not validate(broken, boris):
                sys.exit(f"self-test: the validator accepted {name}")
            print(f"self-test: caught {name}")
    errors = validate(docs, boris)
    for e in errors:
        print(f"INVALID {e}")
    kinds = sorted({d["kind"] for _, _, d in docs})
    print(f"{len(docs)} manifests ({', '.join(kinds)}): {len(errors)} errors")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
