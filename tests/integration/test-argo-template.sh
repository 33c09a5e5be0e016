#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/argo/cluster-delete.yaml, proven offline (no Argo controller can run here):
#   - it validates against Argo v3.6.5's own JSON Schema with the controller's rules
#     (tests/argo/argo_schema.py: IntOrString takes an integer, unknown fields are refused), and the
#     same validator accepts Argo's own example documents but the two its README names, so it
#     rejects nothing Argo accepts; the schema fixtures (a typo, a misspelt dependency, wrong types,
#     an unknown kind) are refused, each at its line;
#   - the semantic lint (tests/argo/argo_lint.py) passes on it, passes Argo's examples on Argo's own
#     rules, and finds every defect of its fixtures, and of the template with one defect put in;
#   - its scripts (examples/argo/steps/) are shellcheck-clean (sh) and the template carries exactly
#     their text (tools/argo-scripts.py --check).
# Argo's schema and examples are found in $NR_ARGO_DIR (only there when it is set), else in
# shared/argo of a parent directory of the repository, else in /work/shared/argo; without them the
# schema part is skipped, saying so, and the rest runs (exit 77 at the end).
. "$(dirname "$0")/lib.sh"
require_cmd python3 shellcheck
python3 -c 'import yaml, jsonschema' 2>/dev/null || skip "python3-yaml or python3-jsonschema is not installed (make deps)"
A=$TOP/tests/argo
T=$TOP/examples/argo/cluster-delete.yaml
WORK=$(mktemp -d /tmp/nr-argo.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ARGO_DIR=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import argo_schema; print(argo_schema.find_argo_dir() or "")' "$A")

# expect_findings TOOL FILE: TOOL's findings on FILE are exactly its "# expect TOOL: LINE: MESSAGE"
# lines (each message a prefix of the finding's, at that line), and it exits 1
expect_findings() {
        python3 - "$@" <<-'EOF'
	import re, sys
	tool, path, top = sys.argv[1], sys.argv[2], sys.argv[3]
	sys.path.insert(0, top + "/tests/argo")
	import argo_lint, argo_schema
	want = [tuple(m.groups()) for m in re.finditer(r"^# expect %s: (\d+): (.*)$" % tool, open(path).read(), re.M)]
	if tool == "schema":
	    findings = argo_schema.check_file(argo_schema.Validator(argo_schema.find_argo_dir()), path)
	else:
	    findings = argo_lint.lint_file(path)
	got = [m.groups() for m in (re.match(r"^%s:(\d+): (.*)$" % re.escape(path), f) for f in findings) if m]
	missing = [w for w in want if not any(g[0] == w[0] and w[1] in g[1] for g in got)]
	extra = [g for g in got if not any(g[0] == w[0] and w[1] in g[1] for w in want)]
	for m in missing:
	    print("  not found: %s: %s" % m)
	for e in extra:
	    print("  not expected: %s: %s" % e)
	sys.exit(0 if want and len(got) == len(findings) and not missing and not extra else 1)
	EOF
}

# --- the schema ---------------------------------------------------------------------------------
if [ -n "$ARGO_DIR" ]; then
        echo "Argo's schema and examples: $ARGO_DIR"
        assert "cluster-delete.yaml is valid against Argo v3.6.5's schema (IntOrString as string or integer, unknown fields refused)" \
                python3 "$A/argo_schema.py" "$T"
        python3 "$A/argo_schema.py" --examples >"$WORK/examples.log"
        rc=$?
        tail -n 1 "$WORK/examples.log"
        assert "the validator accepts Argo's own examples but memoize-simple.yaml and webhdfs-input-output-artifacts.yaml" \
                test $rc -eq 0
        assert "... and these two, for the reason the README gives" \
                grep -q "208 accepted, rejected: memoize-simple.yaml webhdfs-input-output-artifacts.yaml$" "$WORK/examples.log"
        for f in "$A"/fixtures/schema-*.yaml; do
                assert "schema fixture $(basename "$f"): refused, each defect at its line" expect_findings schema "$f" "$TOP"
        done
        # the schema as shipped takes IntOrString as a string only: corrected, it takes both
        sed 's/^    activeDeadlineSeconds: 60$/    activeDeadlineSeconds: "60"/' "$T" >"$WORK/string-deadline.yaml"
        assert "the lint fixtures are valid against the schema (the lint is what finds their defects); so is an IntOrString as a string" \
                python3 "$A/argo_schema.py" "$A"/fixtures/lint-*.yaml "$WORK/string-deadline.yaml"
else
        echo "SKIP (schema): Argo's schema and examples (v3.6.5/schema.json) are not in \$NR_ARGO_DIR," \
                "shared/argo of a parent of $TOP, or /work/shared/argo"
fi

# --- the lint -----------------------------------------------------------------------------------
assert "the lint passes on cluster-delete.yaml" python3 "$A/argo_lint.py" "$T"
if [ -n "$ARGO_DIR" ]; then
        mapfile -t examples < <(find "$ARGO_DIR/v3.6.5/examples" -name '*.yaml' | sort)
        assert "the lint on Argo's own rules passes Argo's ${#examples[@]} example files" \
                python3 "$A/argo_lint.py" --argo-only "${examples[@]}"
fi
for f in "$A"/fixtures/lint-*.yaml; do
        assert "lint fixture $(basename "$f"): every defect found at its line, nothing else" expect_findings lint "$f" "$TOP"
done

# One defect put into the real template at a time: the lint must name it.
mutant() { # DESCRIPTION EXPECTED-FINDING SED-EXPRESSION
        local m=$WORK/mutant.yaml out
        sed "$3" "$T" >"$m"
        if cmp -s "$m" "$T"; then
                fail "mutant '$1': the expression changed nothing"
                return
        fi
        out=$(python3 "$A/argo_lint.py" "$m")
        assert "cluster-delete.yaml with $1: the lint says '$2'" grep -qF "$2" <<<"$out"
}
mutant "reset-node unbounded" "reset-node: a script template without activeDeadlineSeconds" \
        '/^  - name: reset-node$/,/^    script:/{/activeDeadlineSeconds/d}'
mutant "the summary reading a step of its own group" "{{steps.summary.outputs.result}}: step summary runs in group 6, not before this one (group 6)" \
        '0,/value: "{{steps.plan.outputs.parameters.nodes}}"/s//value: "{{steps.summary.outputs.result}}"/'
mutant "a misspelt argument" "step reset-first-control-plane passes nodee, which reset-node does not take" \
        '0,/          - name: node$/s//          - name: nodee/'
mutant "a workflow parameter nobody declared" "the workflow's arguments declare no parameter report-urls" \
        's/{{workflow.parameters.report-url}}/{{workflow.parameters.report-urls}}/'
mutant "a call to a template that is not there" "step apps calls no template: delete-app" \
        '0,/        template: delete-apps$/s//        template: delete-app/'
mutant "the failures read outside the exit handler" "{{workflow.failures}} is set for exit handlers only" \
        's/value: "{{workflow.parameters.cluster}}"/value: "{{workflow.failures}}"/'

# --- the scripts --------------------------------------------------------------------------------
assert "the step scripts are shellcheck-clean (sh)" shellcheck -s sh "$TOP"/examples/argo/steps/*.sh
assert "the template carries exactly the scripts' text (tools/argo-scripts.py --check)" \
        python3 "$TOP/tools/argo-scripts.py" --check "$T"
sed '0,/^        set -eu$/s//        set -e/' "$T" >"$WORK/edited.yaml"
cp -r "$TOP/examples/argo/steps" "$WORK/steps"
assert "... and says so when a script in the template is edited by hand" \
        eval '! python3 "$TOP/tools/argo-scripts.py" --check "$WORK/edited.yaml" >/dev/null 2>&1'

[ -n "$ARGO_DIR" ] || { [ "$_failures" -eq 0 ] && skip "the schema part did not run (see above); the rest passed"; }
finish
