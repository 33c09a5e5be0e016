#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The completion scripts are written from the option tables (issues 42, 44), and complete what the
# parser takes, no more:
#   - shell-completion/'s bash, zsh and fish scripts are "node-reset completion SHELL"'s output
#     (make completions writes them again after a table changed);
#   - read against the tables themselves ("node-reset help -o json"), both ways: each verb completes
#     exactly the options it takes, before the verb every option, the commands, the manifest
#     subcommands, the phases for --phases (a new phase is there, or this fails), the words of every
#     option that takes one of a list (--profile, --output, --with-runtime) exactly, help's and
#     completion's operands; --with-runtime's value only after '=' (the one form the parser takes);
#   - bash by calling its function as bash would, fish by "complete -C", zsh by the _arguments specs
#     its function hands over for each verb (and zsh -n).
# Reads files and runs shells: no namespace needed.
. "$(dirname "$0")/lib.sh"
require_cmd python3
[ -x "$NODE_RESET" ] || skip "build $NODE_RESET first"
T=$(mktemp -d /tmp/nr-completion.XXXXXX)
trap 'rm -rf "$T"' EXIT
BASH_SCRIPT=$TOP/shell-completion/bash/node-reset
ZSH_SCRIPT=$TOP/shell-completion/zsh/_node-reset
FISH_SCRIPT=$TOP/shell-completion/fish/node-reset.fish

for s in bash:$BASH_SCRIPT zsh:$ZSH_SCRIPT fish:$FISH_SCRIPT; do
        "$NODE_RESET" completion "${s%%:*}" > "$T/${s%%:*}.generated"
        assert "${s#*:} is 'node-reset completion ${s%%:*}' (make completions)" cmp -s "$T/${s%%:*}.generated" "${s#*:}"
done

# The tables, as lines a shell reads: "verb VERB", "options VERB --a --b ...", "values OPTION w1 w2 ...".
"$NODE_RESET" help -o json > "$T/help.json"
assert "help -o json exits 0" test $? -eq 0
python3 - "$T/help.json" > "$T/tables" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
for c in t["commands"]:
    print("verb", c["name"])
    print("options", c["name"].replace(" ", "+"), " ".join("--" + o for o in sorted(c["options"])))
    if c["operand_values"]:
        print("operands", c["name"], " ".join(c["operand_values"]))
print("options", "-", " ".join("--" + o["name"] for o in sorted(t["options"], key=lambda o: o["name"])))
for o in t["options"]:
    if o["values"]:
        print("values", o["name"], o["argument"], o["complete"], " ".join(o["values"]))
print("phases", " ".join(t["phases"]))
print("commands", " ".join(sorted({c["name"].split()[0] for c in t["commands"]})))
PY
table() { awk -v k="$1" -v n="$2" '$1 == k && $2 == n { $1 = $2 = ""; sub(/^ +/, ""); print }' "$T/tables"; }
phases=$(awk '$1 == "phases" { $1 = ""; sub(/^ /, ""); print }' "$T/tables")
commands=$(awk '$1 == "commands" { $1 = ""; sub(/^ /, ""); print }' "$T/tables")
mapfile -t verbs < <(awk '$1 == "verb" { $1 = ""; sub(/^ /, ""); print }' "$T/tables")
assert "the tables list verbs, phases and options" test "${#verbs[@]}" -ge 8 -a -n "$phases" -a -n "$(table options -)"
words() { tr ' ' '\n' | grep -v '^$' | sort | xargs; }

# --- bash -----------------------------------------------------------------------------------------
assert "the bash script is valid bash" bash -n "$BASH_SCRIPT"
# shellcheck source=/dev/null
. "$BASH_SCRIPT"
complete_words() { # WORD... (the last one is being completed): prints the candidates
        COMP_WORDS=(node-reset "$@")
        COMP_CWORD=$#
        COMPREPLY=()
        _node_reset
        printf '%s\n' "${COMPREPLY[@]}"
}
for v in "${verbs[@]}"; do
        read -r -a vw <<< "$v"
        assert "bash: '$v --' completes exactly the options '$v' takes" \
                test "$(complete_words "${vw[@]}" -- | words)" = "$(table options "${v// /+}" | words)"
done
assert "bash: before the verb, every option" test "$(complete_words -- | words)" = "$(table options - | words)"
assert "bash: the commands" test "$(complete_words "" | words)" = "$(echo "$commands" | words)"
assert "bash: manifest's subcommands" test "$(complete_words manifest "" | words)" = "check print"
assert "bash: --phases offers exactly the phases" test "$(complete_words --phases "" | words)" = "$(echo "$phases" | words)"
assert "bash: --skip-phases too, after a verb" test "$(complete_words plan --skip-phases "" | words)" = "$(echo "$phases" | words)"
assert "bash: --phases completes after a comma" test "$(complete_words --phases mounts,fi | words)" = "mounts,files mounts,firewall"
while read -r _ name arg complete vals; do
        [ "$complete" = word ] || continue
        assert "bash: --$name= offers exactly its words ($vals)" test "$(complete_words "--$name" = "" | words)" = "$(echo "$vals" | words)"
        assert "bash: --$name=X in one word too" test "$(complete_words "--$name=" | words)" = "$(echo "$vals" | sed "s/[^ ]*/--$name=&/g" | words)"
        if [ "$arg" = optional ]; then
                # --with-runtime containerd is no option's value: the parser reads an operand
                assert "bash: '--$name ' offers none of its words (only --$name=X is one)" \
                        eval '! complete_words "--$name" "" | grep -qxF "$(echo "$vals" | cut -d" " -f1)"'
        else
                assert "bash: '--$name ' offers its words" test "$(complete_words "--$name" "" | words)" = "$(echo "$vals" | words)"
        fi
done < <(grep '^values ' "$T/tables")
mkdir -p "$T/dir.d" && : > "$T/manifest.conf"
assert "bash: --root completes directories" test "$(complete_words --root "$T/d")" = "$T/dir.d"
assert "bash: -m completes files" test "$(complete_words -m "$T/ma")" = "$T/manifest.conf"
assert "bash: manifest check completes files" test "$(complete_words manifest check "$T/ma")" = "$T/manifest.conf"
assert "bash: help completes the commands" test "$(complete_words help "" | words)" = "$(echo "$commands" | words)"
assert "bash: completion completes the shells" test "$(complete_words completion "" | words)" = "$(table operands completion | words)"
assert "bash: an option's value is not the verb" test "$(complete_words --root /tmp manifest "" | words)" = "check print"

# --- zsh: the specs _arguments gets ----------------------------------------------------------------
if command -v zsh > /dev/null; then
        assert "the zsh script is valid zsh" zsh -n "$ZSH_SCRIPT"
        zsh_specs() { # WORD...: the specs for completing after them
                zsh -f -c 'words=("$@" ""); CURRENT=$#words; _arguments() { print -rl -- "$@"; }; source '"$ZSH_SCRIPT" \
                        zsh node-reset "$@"
        }
        zsh_options() { zsh_specs "$@" | sed -nE "s/^\*(--[a-z-]+).*/\1/p" | words; }
        for v in "${verbs[@]}"; do
                read -r -a vw <<< "$v"
                assert "zsh: '$v' gets exactly the options '$v' takes" \
                        test "$(zsh_options "${vw[@]}")" = "$(table options "${v// /+}" | words)"
        done
        assert "zsh: before the verb, every option" test "$(zsh_options)" = "$(table options - | words)"
        assert "zsh: an option's value is not the verb" test "$(zsh_options --root /x plan)" = "$(table options plan | words)"
        assert "zsh: --phases completes the phases as a comma list" \
                zsh_specs plan | grep -qF "_values -s , phases $phases'"
        assert "zsh: --with-runtime's value only after '=' and optional" \
                eval 'zsh_specs run | grep -qE "^\*--with-runtime=-\[.*\]::with-runtime:\($(table values with-runtime | cut -d" " -f3-)\)$"'
        assert "zsh: manifest check's operands are files" zsh_specs manifest check | grep -qx "\*:file:_files"
else
        echo "zsh not installed (make deps): its script's specs not read"
fi

# --- fish: complete -C ------------------------------------------------------------------------------
if command -v fish > /dev/null; then
        assert "the fish script is valid fish" fish --no-execute "$FISH_SCRIPT"
        fish_complete() { fish --no-config -c "source '$FISH_SCRIPT'; complete -C'$1'" | cut -f1; }
        for v in "${verbs[@]}"; do
                assert "fish: '$v --' completes exactly the options '$v' takes" \
                        test "$(fish_complete "node-reset $v --" | words)" = "$(table options "${v// /+}" | words)"
        done
        assert "fish: the commands" test "$(fish_complete "node-reset " | words)" = "$(echo "$commands" | words)"
        runtimes=$(table values with-runtime | cut -d' ' -f3-)
        assert "fish: --with-runtime= offers exactly the runtimes" \
                test "$(fish_complete "node-reset --with-runtime=" | words)" = "$(echo "$runtimes" | sed 's/[^ ]*/--with-runtime=&/g' | words)"
        assert "fish: '--with-runtime ' offers no runtime" \
                eval '! fish_complete "node-reset --with-runtime " | grep -qxF "$(echo "$runtimes" | cut -d" " -f1)"'
        assert "fish: --phases= offers exactly the phases" \
                test "$(fish_complete "node-reset --phases=" | sed 's/^--phases=//' | words)" = "$(echo "$phases" | words)"
        assert "fish: manifest's subcommands" test "$(fish_complete "node-reset manifest " | words)" = "check print"
else
        echo "fish not installed (make deps): its script not asked"
fi
finish
