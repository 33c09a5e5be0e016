#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# The node_reset role's fleet path (tasks/fleet.yml): one node-reset call per node, judged on the
# node from the agent's JSON report, so that the controller templates one task per host and carries
# back a few fields instead of the whole report.

DOCUMENTATION = r"""
module: node_reset
short_description: Reset a Kubernetes node with one node-reset call, or look at what is left in check mode
description:
  - "Runs C(node-reset --yes --output=json run) (plan, reset, verify, the rejoin verdict and the report in
    one call) and judges the node from the report; in check mode C(node-reset --output=json status),
    whose residue is what a reset would take. Never parses the agent's text."
  - "I(state): C(clean), exit status 0; C(residue), the run ended and something is left or the node is
    not rejoinable (exit status 1, no action failed); C(failed), an action failed or the agent did not
    run (usage, manifest, refusal, no report); in check mode C(would reset), residue to take."
options:
  binary: {type: str, default: node-reset, description: "The agent on the node (a bare name: from PATH)."}
  command_prefix: {type: list, elements: str, default: [], description: "Words before the binary."}
  root: {type: str, default: "", description: "--root DIR."}
  manifest: {type: str, default: "", description: "--manifest FILE, on the node."}
  phases: {type: raw, default: [], description: "--phases, a list or a comma separated string; verify is added."}
  skip_phases: {type: raw, default: [], description: "--skip-phases."}
  report_url: {type: str, default: "", description: "--report-url, run only."}
  timeout: {type: int, default: 0, description: "--timeout SECONDS (0, no bound)."}
  extra_args: {type: list, elements: str, default: [], description: "Any other options."}
  delete_node: {type: bool, default: false, description: "--delete-node (implied by drain)."}
  drain: {type: bool, default: false, description: "--drain."}
  drain_force: {type: bool, default: false, description: "--drain-force."}
  drain_delete_emptydir_data: {type: bool, default: false, description: "--drain-delete-emptydir-data."}
  drain_timeout: {type: str, default: "", description: "--drain-timeout."}
  node_name: {type: str, default: "", description: "--node-name."}
  kubeconfig: {type: str, default: "", description: "--kubeconfig FILE, on the node."}
  confirm: {type: bool, default: false, description: "Must be true to reset outside check mode."}
  fail: {type: bool, default: true, description: "Fail the host when it is not clean."}
  return_report: {type: bool, default: false, description: "Return the agent's whole report as report."}
"""

RETURN = r"""
state: {type: str, description: "clean, residue, failed; would reset in check mode."}
exit_status: {type: int, description: "The agent's exit status (not rc: Ansible fails a result whose rc is not 0)."}
command: {type: str, description: "run, or status in check mode."}
counts: {type: dict, description: "The report's counts (actions, changed, unchanged, failed, skipped); null in check mode."}
verdict: {type: str, description: "clean, residue or unknown."}
residue: {type: list, description: "The targets left."}
failures: {type: list, description: "Each failed action: kind, target, message."}
rejoinable: {type: bool, description: "The rejoin verdict."}
report: {type: dict, description: "The whole report (return_report only)."}
"""

import json

from ansible.module_utils.basic import AnsibleModule


def words(value):
    if isinstance(value, str):
        value = value.split(",")
    return [w.strip() for w in value or [] if str(w).strip()]


def argv(p, check_mode):
    a = list(p["command_prefix"]) + [p["binary"]]
    phases = words(p["phases"])
    if phases and "verify" not in phases:
        phases.append("verify")  # the host is judged by the residue it reports
    a += ["--root", p["root"]] if p["root"] else []
    a += ["--manifest", p["manifest"]] if p["manifest"] else []
    a += ["--phases", ",".join(phases)] if phases else []
    a += ["--skip-phases", ",".join(words(p["skip_phases"]))] if words(p["skip_phases"]) else []
    a += ["--timeout", str(p["timeout"])] if p["timeout"] > 0 else []
    a += ["--kubeconfig", p["kubeconfig"]] if p["kubeconfig"] else []
    a += ["--node-name", p["node_name"]] if p["node_name"] else []
    a += ["--delete-node"] if p["delete_node"] and not p["drain"] else []
    a += list(p["extra_args"])
    if check_mode:
        return a + ["--output=json", "status"]
    a += ["--drain"] if p["drain"] else []
    a += ["--drain-force"] if p["drain"] and p["drain_force"] else []
    a += ["--drain-delete-emptydir-data"] if p["drain"] and p["drain_delete_emptydir_data"] else []
    a += ["--drain-timeout", p["drain_timeout"]] if p["drain"] and p["drain_timeout"] else []
    a += ["--report-url", p["report_url"]] if p["report_url"] else []
    return a + ["--yes", "--output=json", "run"]


def judge(rc, report, check_mode):
    if not report or rc not in (0, 1):
        return "failed"
    if check_mode:
        return "would reset" if report.get("residue") else "clean" if rc == 0 else "residue"
    if (report.get("counts") or {}).get("failed", 0) > 0:
        return "failed"
    return "clean" if rc == 0 else "residue"


def main():
    spec = dict(
        binary=dict(type="str", default="node-reset"),
        command_prefix=dict(type="list", elements="str", default=[]),
        root=dict(type="str", default=""),
        manifest=dict(type="str", default=""),
        phases=dict(type="raw", default=[]),
        skip_phases=dict(type="raw", default=[]),
        report_url=dict(type="str", default=""),
        timeout=dict(type="int", default=0),
        extra_args=dict(type="list", elements="str", default=[]),
        delete_node=dict(type="bool", default=False),
        drain=dict(type="bool", default=False),
        drain_force=dict(type="bool", default=False),
        drain_delete_emptydir_data=dict(type="bool", default=False),
        drain_timeout=dict(type="str", default=""),
        node_name=dict(type="str", default=""),
        kubeconfig=dict(type="str", default=""),
        confirm=dict(type="bool", default=False),
        fail=dict(type="bool", default=True),
        return_report=dict(type="bool", default=False),
    )
    m = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    p = m.params
    if not m.check_mode and not p["confirm"]:
        m.fail_json(msg="node_reset: not confirmed (node_reset_confirm=yes); nothing was run", state="failed")
    cmd = argv(p, m.check_mode)
    rc, out, err = m.run_command(cmd)
    try:
        report = json.loads(out) if out.lstrip().startswith("{") else None
    except ValueError:
        report = None
    state = judge(rc, report, m.check_mode)
    r = report or {}
    acts = [a for ph in r.get("phases") or [] for a in ph["actions"]]
    failures = [dict(kind=a["kind"], target=a["target"], message=a.get("message")) for a in acts
                if a["result"] == "failed"]
    residue = [x["target"] for x in r.get("residue") or []]
    result = dict(
        changed=bool(r.get("residue")) if m.check_mode else bool(r.get("changed")),
        state=state, exit_status=rc, command=cmd[-1], counts=r.get("counts"), verdict=r.get("verdict"),
        residue=residue, failures=failures, rejoinable=(r.get("rejoin") or {}).get("rejoinable"),
    )
    if p["return_report"]:
        result["report"] = report
    if state in ("clean", "would reset") or not p["fail"]:
        m.exit_json(**result)
    why = "; ".join("%s %s: %s" % (f["kind"], f["target"], f["message"]) for f in failures)
    if residue:
        why += "%sresidue: %d item(s): %s" % ("; " if why else "", len(residue), ", ".join(residue[:5]))
    if not why:  # the agent's own reason: what makes the node not rejoinable, else its last words
        lines = err.strip().splitlines()
        why = " / ".join([l for l in lines if "Not rejoinable" in l or "Cannot" in l] or lines[-3:]) or "no report"
    m.fail_json(msg="node-reset %s exited %d (%s): %s" % (cmd[-1], rc, state, why), **result)


if __name__ == "__main__":
    main()
