#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cluster-delete step: check everything the workflow was given before anything is deleted, and lay
# out the order of the resets. In: WORKERS, CONTROL_PLANES (JSON lists of nodes, as ssh reaches
# them: names or addresses), WORKLOADS, CSI, CNI (JSON lists of objects, KIND/NAME or
# NAMESPACE/KIND/NAME), OBJECT_WAIT_SECONDS, RESET_TIMEOUT, REPORT_WAIT_SECONDS (whole seconds: the
# deadlines of steps that end 30 or 60 s before them, to say why), SSH_PORT, SSH_CONNECT_TIMEOUT,
# PROBE_TIMEOUT, STATUS_URL, REPORT_URL. Out, in /tmp/plan: workers and
# other-control-planes (JSON lists), first-control-plane (a node, or nothing when there is no
# control plane), nodes (every node, one a line: what the summary checks). Anything that is not
# what it should be fails the step, naming it.
set -eu

out=/tmp/plan
mkdir -p "$out"

fail() {
        echo "plan: $*" >&2
        exit 1
}

# strings LIST JSON: the strings of a JSON list of strings, one a line, in order. Refuses anything
# else: an element with a quote, a backslash, a blank, a comma or a bracket, an empty one, a list of
# anything but strings.
strings() {
        flat=$(printf '%s' "$2" | tr '\n\r\t' '   ')
        printf '%s\n' "$flat" | grep -Eq '^ *\[ *("[^][" \\,]+" *(, *"[^][" \\,]+" *)*)?\] *$' ||
                fail "$1 is not a JSON list of strings without blanks: $2"
        printf '%s' "$flat" | tr -d ' []' | tr ',' '\n' | tr -d '"'
}

# A node is a host name or an address: it must not begin with '-' (ssh would read an option).
node_ok() { printf '%s\n' "$1" | grep -Eq '^[A-Za-z0-9][A-Za-z0-9._:-]*$'; }
# An object: NAMESPACE/KIND/NAME or KIND/NAME (kubectl's KIND, with its group: deployment.apps).
object_ok() {
        printf '%s\n' "$1" | grep -Eq '^([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[A-Za-z][A-Za-z0-9.-]*/[A-Za-z0-9][A-Za-z0-9.:_-]*$'
}

json_list() { # the lines of stdin as a JSON list of strings (each already checked)
        sep=
        printf '['
        while IFS= read -r w; do
                printf '%s"%s"' "$sep" "$w"
                sep=,
        done
        printf ']'
}

worker_list=$(strings workers "$WORKERS")
cp_list=$(strings control-planes "$CONTROL_PLANES")
all=$(printf '%s\n%s\n' "$cp_list" "$worker_list" | sed '/^$/d')
[ -n "$all" ] || fail "no node to reset: both control-planes and workers are empty"
for n in $all; do
        node_ok "$n" || fail "'$n' is not a node name or address"
done
dup=$(printf '%s\n' "$all" | sort | uniq -d)
[ -z "$dup" ] || fail "listed more than once (a node is a control plane or a worker, once): $(printf '%s\n' "$dup" | tr '\n' ' ')"

for list in workloads csi cni; do
        case $list in
        workloads) value=$WORKLOADS ;;
        csi) value=$CSI ;;
        cni) value=$CNI ;;
        esac
        for o in $(strings "$list" "$value"); do
                object_ok "$o" || fail "$list: '$o' is not KIND/NAME or NAMESPACE/KIND/NAME"
        done
done

# seconds NAME VALUE MIN: a whole number of seconds, at least MIN
seconds() {
        case $2 in
        '' | *[!0-9]*) fail "$1 is not a whole number of seconds: '$2'" ;;
        esac
        [ "$2" -ge "$3" ] || fail "$1 must be at least $3 seconds: $2"
}
seconds object-wait-seconds "$OBJECT_WAIT_SECONDS" 60
seconds reset-timeout "$RESET_TIMEOUT" 120
seconds report-wait-seconds "$REPORT_WAIT_SECONDS" 40
seconds ssh-connect-timeout "$SSH_CONNECT_TIMEOUT" 1
if ! printf '%s\n' "$SSH_PORT" | grep -Eq '^[1-9][0-9]{0,4}$' || [ "$SSH_PORT" -gt 65535 ]; then
        fail "ssh-port is not a port number: '$SSH_PORT'"
fi
printf '%s\n' "$PROBE_TIMEOUT" | grep -Eq '^[1-9][0-9]*(s|m)?$' || fail "probe-timeout is not a duration such as 10s: '$PROBE_TIMEOUT'"
for url in status-url:"$STATUS_URL" report-url:"$REPORT_URL"; do
        case ${url#*:} in
        http://?* | https://?*) ;;
        *) fail "${url%%:*} is not an http(s) URL: '${url#*:}'" ;;
        esac
done

printf '%s\n' "$worker_list" | sed '/^$/d' | json_list >"$out/workers"
printf '%s\n' "$cp_list" | sed -n '1p' | tr -d '\n' >"$out/first-control-plane"
printf '%s\n' "$cp_list" | sed '1d;/^$/d' | json_list >"$out/other-control-planes"
printf '%s\n' "$all" >"$out/nodes"

echo "plan: workers $(cat "$out/workers"), then the control planes $(cat "$out/other-control-planes")," \
        "then the first one, '$(cat "$out/first-control-plane")'" >&2
