#!/usr/bin/env python3
"""Structure of every manifest under contrib/kubernetes, for tests/kubernetes/manifests-test.sh.

  check-manifests.py GPU_PREFLIGHT_BINARY SOURCE_DIR

Parses every *.yaml, *.yml and *.json there and checks what could be wrong without a cluster:
known apiVersion/kind pairs; in every pod template, each volumeMount names a declared volume,
each volume is mounted, every mount is read-only, a pod that runs gpu-preflight without NPD has no
API token and no privileges; every gpu-preflight command line (NPD rules, container commands) is
accepted by the real binary and answers 0 on a ready and 1 on a broken snapshot; the
NodeReadinessRule's fields are the CRD's (readiness.node.x-k8s.io/v1alpha1), its condition is the
one NPD sets and its nodes are NPD's; the Job tolerates the rule's taint; the DeviceTaintRules that
gpu-preflight-device-taints makes from real reports have the API's fields and values
(resource.k8s.io DeviceTaintRuleSpec) and select the GPUs the reports leave out (a MIG-enabled one
by its MIG devices, as NVIDIA's DRA driver names them). Prints one line
per problem and exits 1 if there is any.
"""
import glob
import json
import os
import re
import subprocess
import sys

import yaml

BIN, SRC = sys.argv[1], sys.argv[2]
CONTRIB = os.path.join(SRC, "contrib/kubernetes")
READY = os.path.join(SRC, "docs/examples/healthy-8gpu")
BROKEN = os.path.join(SRC, "docs/examples/broken-node")
WARN = os.path.join(SRC, "tests/fixtures/excluded-gpu")  # verdict warn: 3 of 4 GPUs
MIG = "tests/fixtures/nvml-mig-left-out"  # GPU 1 in MIG mode and GPU 2 left out
HOST_BINARY = "/usr/bin/gpu-preflight"  # where the .deb installs it

KNOWN_KINDS = {
    ("v1", "ServiceAccount"), ("v1", "ConfigMap"), ("v1", "Pod"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1", "Role"), ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("apps/v1", "DaemonSet"), ("apps/v1", "Deployment"), ("batch/v1", "Job"),
    ("readiness.node.x-k8s.io/v1alpha1", "NodeReadinessRule"),
}
# NodeReadinessRuleSpec and ConditionRequirement (api/v1alpha1/nodereadinessrule_types.go).
NRR_SPEC = {"conditions", "enforcementMode", "taint", "nodeSelector", "conditionPolicy", "dryRun"}
NRR_REQUIRED = {"conditions", "enforcementMode", "taint", "nodeSelector"}
NRR_CONDITION = {"type", "requiredStatus", "defaultStatus"}
STATUSES = {"True", "False", "Unknown"}
# DeviceTaintRuleSpec, DeviceTaintSelector and DeviceTaint (resource.k8s.io v1beta2; v1alpha3 from
# Kubernetes 1.35 has the same fields):
# https://kubernetes.io/docs/reference/kubernetes-api/resource/device-taint-rule-v1beta2/
DTR_API = {"resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3"}
DTR_SPEC = {"deviceSelector", "taint"}
DTR_SELECTOR = {"driver", "pool", "device"}
DTR_TAINT = {"key", "value", "effect", "timeAdded"}
DTR_EFFECTS = {"None", "NoSchedule", "NoExecute"}
QUALIFIED_NAME = re.compile(r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                            r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# Only the NPD DaemonSet may be privileged (chroot into the host's root).
PRIVILEGED_OK = {"npd-gpu-preflight"}

problems = []


def problem(where, text):
    problems.append(f"{where}: {text}")


def run(args, root):
    r = subprocess.run([BIN, *args, "--root", root], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def check_command(where, args, warn_rc=None):
    """A gpu-preflight command line: accepted, 0 on the ready snapshot, 1 on the broken one (and
    warn_rc on a WARN one, when given)."""
    if "--root" in args:
        problem(where, f"a shipped command names --root: {args}")
        return
    for root, want in ((READY, 0), (WARN, warn_rc), (BROKEN, 1)):
        if want is None:
            continue
        rc, out, err = run(args, root)
        if rc != want:
            problem(where, f"`gpu-preflight {' '.join(args)}` on {os.path.basename(root)} exits {rc}, "
                           f"not {want}: {err.strip()[:300]}")


def gpf_args(command):
    """gpu-preflight's arguments in a container command or NPD rule, or None."""
    for i, word in enumerate(command):
        if os.path.basename(word) == "gpu-preflight":
            return command[i + 1:]
    return None


def pod_spec(doc):
    kind = doc.get("kind")
    if kind == "Pod":
        return doc.get("spec", {})
    if kind in ("DaemonSet", "Deployment", "Job"):
        return doc.get("spec", {}).get("template", {}).get("spec", {})
    return None


def check_pod(where, name, spec, npd_info):
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    mounted = set()
    containers = spec.get("initContainers", []) + spec.get("containers", [])
    runs_checker = False
    gpus = {}
    for c in containers:
        cw = f"{where} container {c['name']}"
        sc = c.get("securityContext", {})
        for m in c.get("volumeMounts", []):
            if m["name"] not in volumes:
                problem(cw, f"mounts {m['name']}, which is not a volume of the pod")
            if m.get("readOnly") is not True:
                problem(cw, f"mount {m['name']} at {m['mountPath']} is not readOnly: true")
            mounted.add(m["name"])
        limit = c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu")
        if limit is not None:
            gpus[c["name"]] = limit
        command = c.get("command", []) + c.get("args", [])
        args = gpf_args(command)
        if args is not None:
            runs_checker = True
            check_command(cw, args)
            # The binary is the node's, mounted from where the package puts it, or the image's.
            exe = command[0]
            if exe != HOST_BINARY and exe != "/usr/sbin/chroot":
                src = [volumes.get(m["name"], {}).get("hostPath", {}).get("path")
                       for m in c.get("volumeMounts", []) if m["mountPath"] == exe]
                if src != [HOST_BINARY]:
                    problem(cw, f"runs {exe}, which is not a mount of the host's {HOST_BINARY}")
            if not sc.get("privileged"):
                if sc.get("allowPrivilegeEscalation") is not False:
                    problem(cw, "allowPrivilegeEscalation is not false")
                if sc.get("capabilities", {}).get("drop") != ["ALL"]:
                    problem(cw, "does not drop ALL capabilities")
                if limit is None:
                    problem(cw, "runs gpu-preflight without nvidia.com/gpu: it would see no GPU")
        if sc.get("privileged") and name not in PRIVILEGED_OK:
            problem(cw, "is privileged")
        if npd_info is not None and "node-problem-detector" in " ".join(command):
            for flag in command:
                if flag.startswith("--config.custom-plugin-monitor="):
                    npd_info["daemonset_configs"] = flag.split("=", 1)[1].split(",")
    for v in volumes:
        if v not in mounted:
            problem(where, f"volume {v} is mounted by no container")
    if runs_checker and name not in PRIVILEGED_OK:
        if spec.get("automountServiceAccountToken") is not False:
            problem(where, "runs gpu-preflight with an API token (automountServiceAccountToken is not false)")
        if spec.get("hostPID") or spec.get("hostNetwork"):
            problem(where, "uses the host's PID or network namespace")
    # An init container's GPUs are the ones the trainer gets: ask for the same number.
    if len(set(gpus.values())) > 1:
        problem(where, f"containers ask for different GPU counts: {gpus}")
    return spec


def check_device_taint_rule(where, d):
    """One DeviceTaintRule against the API's fields and value formats."""
    if d.get("apiVersion") not in DTR_API or d.get("kind") != "DeviceTaintRule":
        problem(where, f"unknown apiVersion/kind {d.get('apiVersion')}/{d.get('kind')}")
        return
    meta = d.get("metadata", {})
    name = meta.get("name", "")
    if len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
        problem(where, f"metadata.name {name!r} is not a DNS subdomain")
    for k, v in meta.get("labels", {}).items():
        if not QUALIFIED_NAME.fullmatch(k) or not isinstance(v, str) or not LABEL_VALUE.fullmatch(v):
            problem(where, f"label {k}={v!r} is not a label")
    spec = d.get("spec", {})
    for k in spec.keys() - DTR_SPEC:
        problem(where, f"spec.{k} is not a field of DeviceTaintRuleSpec")
    selector = spec.get("deviceSelector", {})
    for k in selector.keys() - DTR_SELECTOR:
        problem(where, f"spec.deviceSelector.{k} is not a field of DeviceTaintSelector")
    if not selector.get("device") or not selector.get("pool") or not selector.get("driver"):
        problem(where, "the selector does not name one device (driver, pool and device)")
    taint = spec.get("taint", {})
    for k in taint.keys() - DTR_TAINT:
        problem(where, f"spec.taint.{k} is not a field of DeviceTaint")
    if not QUALIFIED_NAME.fullmatch(taint.get("key", "")):
        problem(where, f"taint key {taint.get('key')!r} is not a label name")
    if not LABEL_VALUE.fullmatch(taint.get("value", "")):
        problem(where, f"taint value {taint.get('value')!r} is not a label value")
    if taint.get("effect") not in DTR_EFFECTS:
        problem(where, f"taint effect {taint.get('effect')!r} is not one of {sorted(DTR_EFFECTS)}")


def check_device_taints():
    """gpu-preflight-device-taints on real reports: the GPUs left out get NoSchedule, those kept with
    a warning None, a healthy node none; every rule passes the API's checks."""
    converter = os.path.join(CONTRIB, "gpu-preflight-device-taints")
    cases = [  # fixture, expected {device: effect}
        ("tests/fixtures/log-xid79-one-of-8", {"gpu-3": "NoSchedule"}),
        ("tests/fixtures/compat-cuda124-b200", {"gpu-0": "None"}),
        ("tests/fixtures/healthy-4gpu", {}),
        # GPU 1 in MIG mode (its two GPU instances, named as NVIDIA's DRA driver names its MIG
        # devices: docs/integrations/kubernetes.md), GPU 2 whole
        (MIG, {"gpu-1-mig-2g20gb-14-0": "NoSchedule", "gpu-1-mig-3g40gb-9-4": "NoSchedule",
               "gpu-2": "NoSchedule"}),
    ]
    for fixture, want in cases:
        where = f"gpu-preflight-device-taints on {os.path.basename(fixture)}"
        report = run(["--format", "json"], os.path.join(SRC, fixture))[1]
        p = subprocess.run([sys.executable, converter, "--node", "node-07"], input=report,
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            problem(where, f"exited {p.returncode}: {p.stderr.strip()}")
            continue
        items = json.loads(p.stdout).get("items", [])
        got = {}
        for d in items:
            check_device_taint_rule(f"{where}: {d.get('metadata', {}).get('name')}", d)
            sel = d.get("spec", {}).get("deviceSelector", {})
            if sel.get("pool") != "node-07" or sel.get("driver") != "gpu.nvidia.com":
                problem(where, f"selects pool {sel.get('pool')!r} of driver {sel.get('driver')!r}")
            got[sel.get("device")] = d.get("spec", {}).get("taint", {}).get("effect")
        if got != want:
            problem(where, f"tainted {got}, expected {want}")
    # A MIG-enabled GPU whose GPU instances the report lacks (an older report, NVML declined):
    # exit 2, not a rule for a device the driver does not publish.
    no_instances = json.loads(run(["--format", "json"], os.path.join(SRC, MIG))[1])
    for g in no_instances["facts"]["nvml"]["gpus"]:
        g.pop("gpu_instances", None)
    # Not a report, or no node name: exit 2, nothing printed.
    for stdin, args in (("{}", ["--node", "n"]), (run(["--format", "json"], READY)[1], []),
                        (json.dumps(no_instances), ["--node", "n"])):
        p = subprocess.run([sys.executable, converter, *args], input=stdin, capture_output=True,
                           text=True, timeout=60)
        if p.returncode != 2 or p.stdout:
            problem("gpu-preflight-device-taints", f"exited {p.returncode} on a bad input {args}")


def main():
    files = sorted(glob.glob(os.path.join(CONTRIB, "*.yaml")) + glob.glob(os.path.join(CONTRIB, "*.yml")) +
                   glob.glob(os.path.join(CONTRIB, "*.json")))
    if len(files) < 6:
        problem(CONTRIB, f"only {len(files)} manifests")
    npd = {}          # NPD config file name -> config
    docs = []         # (file, document)
    for path in files:
        name = os.path.basename(path)
        try:
            if path.endswith(".json"):
                loaded = [json.load(open(path, encoding="utf-8"))]
            else:
                loaded = [d for d in yaml.safe_load_all(open(path, encoding="utf-8")) if d is not None]
        except (ValueError, yaml.YAMLError) as e:
            problem(name, f"does not parse: {e}")
            continue
        for d in loaded:
            if isinstance(d, dict) and d.get("plugin") == "custom":
                npd[name] = d
            else:
                docs.append((name, d))

    # node-problem-detector's custom plugin configurations (its Validate(), and ours).
    conditions = set()
    for name, c in npd.items():
        cond_types = [x["type"] for x in c["conditions"]]
        conditions.update(cond_types)
        for i, rule in enumerate(c["rules"]):
            rw = f"{name} rule {i} ({rule.get('condition')})"
            if rule["type"] != "permanent":
                problem(rw, "is not permanent: it would set no condition")
            if rule["condition"] not in cond_types:
                problem(rw, "its condition has no default in conditions (NPD refuses the file)")
            args = gpf_args([rule["path"], *rule["args"]])
            if args is None:
                problem(rw, "does not run gpu-preflight")
                continue
            if name.endswith("-pod.json") and rule["args"][:2] != ["/host", HOST_BINARY]:
                problem(rw, "the pod variant does not run the host's binary under chroot /host")
            # --strict: NonOK on WARN too, so the warning's line stays on its own condition.
            strict = "--strict" in args
            check_command(rw, args, warn_rc=1 if strict else 0)
            # NPD's message is the line: one line within max_output_length, on any verdict.
            for root in (READY, WARN, BROKEN):
                out = run(args, root)[1]
                if out.count("\n") != 1 or len(out) - 1 > c["pluginConfig"]["max_output_length"]:
                    problem(rw, f"prints {out!r} on {os.path.basename(root)}: not one line within max_output_length")
        strict_rules = [r for r in c["rules"] if "--strict" in r["args"]]
        if len(strict_rules) != 1 or strict_rules[0]["condition"] == c["rules"][0]["condition"]:
            problem(name, "no rule of its own (with --strict) carries a WARN node's line")

    nrr = []
    for name, d in docs:
        where = f"{name} {d.get('kind')}/{d.get('metadata', {}).get('name')}"
        if (d.get("apiVersion"), d.get("kind")) not in KNOWN_KINDS:
            problem(where, f"unknown apiVersion/kind {d.get('apiVersion')}/{d.get('kind')}")
            continue
        if not d.get("metadata", {}).get("name"):
            problem(where, "no metadata.name")
        spec = pod_spec(d)
        if spec is not None:
            check_pod(where, d["metadata"]["name"], spec, npd_info)
        if d["kind"] == "NodeReadinessRule":
            nrr.append((where, d))

    # The NodeReadinessRule acts on the condition NPD sets, on the nodes NPD runs on.
    daemonset = [d for _, d in docs if d.get("kind") == "DaemonSet"]
    ds_selector = daemonset[0]["spec"]["template"]["spec"].get("nodeSelector") if daemonset else None
    if not nrr:
        problem(CONTRIB, "no NodeReadinessRule")
    for where, d in nrr:
        spec = d["spec"]
        for k in spec.keys() - NRR_SPEC:
            problem(where, f"spec.{k} is not a field of NodeReadinessRuleSpec")
        for k in NRR_REQUIRED - spec.keys():
            problem(where, f"spec.{k} is required")
        for cond in spec.get("conditions", []):
            for k in cond.keys() - NRR_CONDITION:
                problem(where, f"conditions[].{k} is not a field of ConditionRequirement")
            if cond.get("type") not in conditions:
                problem(where, f"condition {cond.get('type')} is set by no NPD configuration ({sorted(conditions)})")
            for k in ("requiredStatus", "defaultStatus"):
                # An unquoted False in YAML is a boolean, which the CRD rejects.
                if k in cond and cond[k] not in STATUSES:
                    problem(where, f"conditions[].{k} is {cond[k]!r}, not one of the strings {sorted(STATUSES)}")
            if cond.get("type") == "GPUNotReady" and cond.get("requiredStatus") != "False":
                problem(where, "GPUNotReady must be False for the taint to go")
        if spec.get("enforcementMode") not in ("bootstrap-only", "continuous"):
            problem(where, f"enforcementMode {spec.get('enforcementMode')!r}")
        taint = spec.get("taint", {})
        if not re.fullmatch(r"readiness\.k8s\.io/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", taint.get("key", "")):
            problem(where, f"taint key {taint.get('key')!r} is not readiness.k8s.io/NAME")
        if taint.get("effect") not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            problem(where, f"taint effect {taint.get('effect')!r}")
        if ds_selector is None or spec.get("nodeSelector") != {"matchLabels": ds_selector}:
            problem(where, f"nodeSelector {spec.get('nodeSelector')} is not the NPD DaemonSet's {ds_selector}: "
                           "nodes without NPD would stay tainted")
        # The pre-flight Job checks a node the rule keeps other pods off.
        for name, d2 in docs:
            if d2.get("kind") == "Job" and "gpu-preflight" in d2["metadata"]["name"]:
                tol = pod_spec(d2).get("tolerations", [])
                if not isinstance(tol, list) or not all(isinstance(t, dict) for t in tol):
                    problem(f"{name} Job/{d2['metadata']['name']}", "tolerations is not a list of tolerations")
                elif not any(t.get("key") == taint.get("key") for t in tol):
                    problem(f"{name} Job/{d2['metadata']['name']}", f"does not tolerate {taint.get('key')}")

    # The DaemonSet loads the configuration the docs put into its ConfigMap.
    doc = open(os.path.join(SRC, "docs/integrations/kubernetes.md"), encoding="utf-8").read()
    keys = re.findall(r"--from-file=([\w.-]+)=\S*/(npd-gpu-preflight[\w-]*\.json)", doc)
    if not keys:
        problem("docs/integrations/kubernetes.md", "no `kubectl create configmap --from-file=KEY=FILE`")
    for path in npd_info.get("daemonset_configs", []):
        if os.path.basename(path) not in [k for k, _ in keys]:
            problem("npd-gpu-preflight-daemonset.yaml", f"loads {path}, which the documented ConfigMap does not hold")
    for key, file in keys:
        if file not in npd or not file.endswith("-pod.json"):
            problem("docs/integrations/kubernetes.md", f"the ConfigMap's {key} is {file}, not a pod configuration")
    # Every condition NPD sets is documented.
    for cond in conditions:
        if cond not in doc:
            problem("docs/integrations/kubernetes.md", f"does not name the condition {cond}")

    check_device_taints()

    for p in problems:
        print(f"FAIL: {p}")
    print(f"{len(files)} manifests, {len(docs)} Kubernetes objects, {len(npd)} NPD configurations: "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


npd_info = {}
if __name__ == "__main__":
    sys.exit(main())
