# SPDX-License-Identifier: LGPL-2.1-or-later
# fish completion for node-reset(8), written by "node-reset completion fish" from the program's verb
# and option tables (make completions): do not edit. Installed to
# /usr/share/fish/vendor_completions.d/node-reset.fish.

# The verb the command line names so far, skipping the options and their values.
function __node_reset_verb
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l verb
    set -l skip 0
    for t in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case -o --output --root -m --manifest --profile --phases --skip-phases --timeout --kubeconfig --node-name --etcd-db-copy-max --backup-keep --drain-timeout --etcd-timeout --unit-timeout --cri-endpoint --concurrency --pods-timeout --kill-grace --xtables-wait --proxy --report-url --report-header --report-header-file --report-cacert --for --probe-timeout --stale-for
                set skip 1
            case '-*'
            case '*'
                if test -z "$verb"
                    set verb $t
                else if contains -- $verb manifest
                    set verb "$verb $t"
                end
        end
    end
    echo $verb
end

# Is the verb the command line names so far ("manifest check"; "" before any) one of the arguments?
function __node_reset_takes
    set -l verb (__node_reset_verb)
    contains -- "$verb" $argv
end

# A comma separated list's next element, from the words given.
function __node_reset_list
    set -l cur (string replace -r -- '^--[a-z-]+=' '' (commandline -ct))
    set -l head (string replace -r -- '[^,]*$' '' $cur)
    for w in $argv
        contains -- $w (string split , -- $head); or echo $head$w
    end
end

complete -c node-reset -f
complete -c node-reset -n '__node_reset_takes ""' -a plan -d 'Show what a reset would do (dry run)'
complete -c node-reset -n '__node_reset_takes ""' -a run -d 'Plan, confirm, reset, then verify'
complete -c node-reset -n '__node_reset_takes ""' -a status -d 'Show what is left (residue); exit 0 when clean'
complete -c node-reset -n '__node_reset_takes ""' -a manifest -d 'check, print'
complete -c node-reset -n '__node_reset_takes manifest' -a check -d 'Validate manifest files'
complete -c node-reset -n '__node_reset_takes manifest' -a print -d 'Show the effective manifest, detection and profile included'
complete -c node-reset -n '__node_reset_takes ""' -a orphan-check -d 'Exit 0 when this worker\'s control plane has been gone --for long'
complete -c node-reset -n '__node_reset_takes ""' -a forget -d 'From a surviving control plane: remove a gone node\'s etcd member and Node'
complete -c node-reset -n '__node_reset_takes ""' -a drain -d 'From a control plane: cordon NODE and evict its pods, as kubectl drain'
complete -c node-reset -n '__node_reset_takes ""' -a help -d 'Show this help, or a command\'s options'
complete -c node-reset -n '__node_reset_takes ""' -a completion -d 'Print the completion script for SHELL'
complete -c node-reset -n '__node_reset_takes "manifest check"' -F
complete -c node-reset -n '__node_reset_takes "help"' -a 'plan run status manifest orphan-check forget drain help completion'
complete -c node-reset -n '__node_reset_takes "completion"' -a 'bash zsh fish'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "manifest check" "manifest print" "orphan-check" "forget" "drain" "help" "completion" "manifest"' -s h -l help -d 'Show this help'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "manifest check" "manifest print" "orphan-check" "forget" "drain" "help" "completion" "manifest"' -s v -l verbose -d 'Log debug messages too; the text report lists every action'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "manifest check" "manifest print" "orphan-check" "forget" "drain" "help" "completion" "manifest"' -s q -l quiet -d 'Print only errors: no text report (the exit status says it), no progress'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "manifest check" "manifest print" "orphan-check" "forget" "drain" "help" "manifest"' -s o -l output -x -a 'text json' -d 'The report\'s format (text by default)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "manifest print" "orphan-check" "forget" "drain" "manifest"' -l root -x -a '(__fish_complete_directories)' -d 'Act on the tree beneath DIR (only mounts, files unless --phases)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "manifest print" "manifest"' -s m -l manifest -r -F -d 'Use FILE instead of the detected profile (repeatable)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "manifest print" "manifest"' -l profile -x -a 'kubeadm kubespray kubekey k3s rke2 all' -d 'This built-in profile instead of detecting'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "manifest print" "manifest"' -l with-runtime -d 'Also stop the runtime kubelet used (the detected one), remove its config and state'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "manifest print" "manifest"; and string match -q -- "--with-runtime=*" (commandline -ct)' -a '--with-runtime=containerd --with-runtime=crio --with-runtime=docker'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l phases -x -a '(__node_reset_list backup drain etcd services-early node-object pods services-late processes cgroups mounts firewall network files reload verify)' -d 'Only these phases (comma separated)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l skip-phases -x -a '(__node_reset_list backup drain etcd services-early node-object pods services-late processes cgroups mounts firewall network files reload verify)' -d 'Skip these phases'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "manifest print" "forget" "drain" "manifest"' -l timeout -x -d 'Bound the whole command (90, 90s, 15m, 1h)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l lazy-unmount -d 'Detach busy mounts lazily instead of failing them'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "orphan-check" "forget" "drain"' -l kubeconfig -r -F -d 'Credentials that may delete Nodes and evict pods (default: the node\'s administrator kubeconfig)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "orphan-check" "forget"' -l node-name -x -d 'This node\'s name (default: from its client certificate)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l etcd-db-copy-max -x -d 'When no etcd member answers, copy its member/snap/db into the backup up to SIZE (K, M, G suffixes; 8G)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l no-backup -d 'Do not save the PKI, configs and an etcd snapshot first'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l backup-keep -x -d 'Keep at most N backups in /var/backups/node-reset, the newest (this run\'s among them); older ones are removed (5; 0 keeps every one)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l drain -d 'Cordon this node and evict its pods (Eviction API, PodDisruptionBudgets respected) before the reset, as kubectl drain --ignore-daemonsets; implies --delete-node'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "drain"' -l drain-force -d '--drain: evict pods no controller manages too (kubectl drain --force)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "drain"' -l drain-delete-emptydir-data -d '--drain: evict pods with emptyDir data too, which is lost (kubectl drain --delete-emptydir-data)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status" "drain"' -l drain-timeout -x -d '--drain: retry refused evictions and wait for the pods this long (5m)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l etcd-timeout -x -d 'Bound the etcd phase\'s calls each time it asks (30s)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l unit-timeout -x -d 'How long to wait for each unit\'s stop job (100s)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l delete-node -d 'Delete this node\'s Node object (admin.conf or --kubeconfig), or with only the kubelet\'s credentials set it NotReady, so it can join again'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l cri-endpoint -x -d 'The CRI socket (unix:///PATH), instead of probing'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l concurrency -x -d 'CRI calls in flight at once in the pods phase (default: from the cores and the CNI\'s IPAM lock)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l pods-timeout -x -d 'Bound the pods phase, its rescue ladder included (120s)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l kill-grace -x -d 'From SIGTERM to SIGKILL in the processes phase (5s)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l xtables-wait -x -d 'How long to wait for /run/xtables.lock (10s)'
complete -c node-reset -n '__node_reset_takes "" "plan" "run" "status"' -l no-group-delete -d 'Delete links one by one (no IFLA_GROUP fast path)'
complete -c node-reset -n '__node_reset_takes "" "run" "forget" "drain"' -s y -l yes -d 'Do not ask for confirmation'
complete -c node-reset -n '__node_reset_takes "" "run"' -l step -d 'Ask before each phase: yes, skip or quit (needs a terminal)'
complete -c node-reset -n '__node_reset_takes "" "run" "orphan-check"' -l proxy -x -d 'Use this HTTP proxy (none by default, whatever the environment)'
complete -c node-reset -n '__node_reset_takes "" "run"' -l report-url -x -d 'POST the status and the report to URL (start and end)'
complete -c node-reset -n '__node_reset_takes "" "run"' -l report-header -x -d '... with this header (repeatable)'
complete -c node-reset -n '__node_reset_takes "" "run"' -l report-header-file -r -F -d '... with the headers in FILE, one per line'
complete -c node-reset -n '__node_reset_takes "" "run"' -l report-cacert -r -F -d '... trusting the CA certificates in FILE'
complete -c node-reset -n '__node_reset_takes "" "orphan-check"' -l for -x -d 'How long the evidence must persist (30m)'
complete -c node-reset -n '__node_reset_takes "" "orphan-check"' -l probe-timeout -x -d 'Bound the API request (10s)'
complete -c node-reset -n '__node_reset_takes "" "forget" "drain"' -l plan -d 'Print the plan only (dry run); exit as the run would'
complete -c node-reset -n '__node_reset_takes "" "forget"' -l stale-for -x -d 'The Node\'s Ready heartbeat and Lease must be this old (5m)'
complete -c node-reset -n '__node_reset_takes "" "forget"' -l force -d 'Do not wait for --stale-for (never forgets a member that answers)'
complete -c node-reset -n '__node_reset_takes "" "forget"' -l etcd-gone -d 'With no etcd here, a control plane\'s member is known to be gone'
complete -c node-reset -n '__node_reset_takes ""' -s V -l version -d 'Show the version and the optional libraries'
