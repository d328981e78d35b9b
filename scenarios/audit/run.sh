#!/usr/bin/env bash
# The blind audit of converge's checkers: apply each bug of
# scenarios/audit/acme/*.patch to a copy of examples/acme, run the acme
# simulator on the default fault mix, and report which bugs the judge kills.
# See scenarios/audit/README.md.
#
# Usage: scenarios/audit/run.sh [--seeds N] [--workspaces N] [--out FILE] [ID ...]
#   ID        a bug id (01, 7, 12-...); default: every patch. 00-none (the
#             unpatched acme, a false-positive check) always runs first.
#   --seeds   seeds per bug, 1..N (default $SEEDS or 200)
#   --workspaces  workspaces per run (default $WORKSPACES or 5)
#   --out     also write a TSV: id, clause, verdict, first failing seed,
#             checkers, changed_seeds (for a survivor: seeds whose history
#             differs from unpatched acme's), seconds
set -euo pipefail

SEEDS=${SEEDS:-200}
WORKSPACES=${WORKSPACES:-5}
OUT=""
IDS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--seeds) SEEDS=$2; shift 2 ;;
	--seeds=*) SEEDS=${1#*=}; shift ;;
	--workspaces) WORKSPACES=$2; shift 2 ;;
	--workspaces=*) WORKSPACES=${1#*=}; shift ;;
	--out) OUT=$2; shift 2 ;;
	--out=*) OUT=${1#*=}; shift ;;
	-h|--help) sed -n '2,16p' "$0"; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) IDS+=("$1"); shift ;;
	esac
done

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
AUDIT=$ROOT/scenarios/audit/acme
CLAUSES=$AUDIT/clauses.tsv
# Bugs a referee found equivalent: what they change, the spec allows (DR484).
EQUIVALENT=$AUDIT/equivalent.tsv
WORK=$(mktemp -d "${TMPDIR:-/tmp}/converge-audit.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# The verdict of one sim --json output on stdin: "pass D", or "fail SEED
# CHECKERS" (lowest failing seed, checkers that flagged it, sorted), or
# "bad". D is how many seeds' history hashes differ from those in the file
# given as $1 (the unpatched run's), "-" without one: a surviving bug whose
# hashes all equal the baseline's never changed what acme did. With $2, the
# hashes are written to that file.
mkdir -p "$WORK/verdict"
cat >"$WORK/verdict/go.mod" <<'EOF'
module verdict

go 1.21
EOF
cat >"$WORK/verdict/main.go" <<'EOF'
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

func main() {
	var out struct {
		Runs []struct {
			Seed          uint64 `json:"seed"`
			Hash          string `json:"hash"`
			Pass          bool   `json:"pass"`
			Deterministic bool   `json:"deterministic"`
			Violations    []struct {
				Checker string `json:"checker"`
			} `json:"violations"`
		} `json:"runs"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&out); err != nil || len(out.Runs) == 0 {
		fmt.Println("bad")
		return
	}
	first := -1
	for i, r := range out.Runs {
		if !r.Pass && (first < 0 || r.Seed < out.Runs[first].Seed) {
			first = i
		}
	}
	if len(os.Args) > 2 && os.Args[2] != "" {
		f, err := os.Create(os.Args[2])
		if err != nil {
			fmt.Println("bad")
			return
		}
		for _, r := range out.Runs {
			fmt.Fprintln(f, r.Seed, r.Hash)
		}
		f.Close()
	}
	if first < 0 {
		diff := "-"
		if len(os.Args) > 1 && os.Args[1] != "" {
			if f, err := os.Open(os.Args[1]); err == nil {
				base := map[uint64]string{}
				sc := bufio.NewScanner(f)
				for sc.Scan() {
					var seed uint64
					var h string
					if n, _ := fmt.Sscan(sc.Text(), &seed, &h); n == 2 {
						base[seed] = h
					}
				}
				f.Close()
				d := 0
				for _, r := range out.Runs {
					if h, ok := base[r.Seed]; !ok || h != r.Hash {
						d++
					}
				}
				diff = fmt.Sprint(d)
			}
		}
		fmt.Println("pass", diff)
		return
	}
	r := out.Runs[first]
	set := map[string]bool{}
	for _, v := range r.Violations {
		set[v.Checker] = true
	}
	if !r.Deterministic {
		set["nondeterministic"] = true
	}
	names := []string{}
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		names = []string{"unnamed"}
	}
	fmt.Println("fail", r.Seed, strings.Join(names, ","))
}
EOF
(cd "$WORK/verdict" && go build -o "$WORK/verdict.bin" .)

clause_of() { awk -F'\t' -v id="$1" '$1 == id { print $2 }' "$CLAUSES"; }
is_equivalent() { [ -f "$EQUIVALENT" ] && awk -F'\t' -v id="$1" '$1 == id { f = 1 } END { exit !f }' "$EQUIVALENT"; }

# The bugs to run: every patch, or those whose id prefix was given.
PATCHES=()
if [ ${#IDS[@]} -eq 0 ]; then
	for p in "$AUDIT"/[0-9]*.patch; do PATCHES+=("$p"); done
else
	for id in "${IDS[@]}"; do
		case "$id" in 00|00-none) continue ;; esac
		n=$(printf '%02d' "$((10#${id%%-*}))")
		found=("$AUDIT/$n"-*.patch)
		[ -e "${found[0]}" ] || { echo "run.sh: no patch $n" >&2; exit 2; }
		PATCHES+=("${found[0]}")
	done
fi

[ -n "$OUT" ] && printf 'id\tclause\tverdict\tseed\tcheckers\tchanged_seeds\tseconds\n' >"$OUT"

# run_one ID PATCH: prints the verdict line; PATCH empty for unpatched acme.
# Sets RESULT to pass / fail / error.
run_one() {
	local id=$1 patch=$2 clause dir rc v start secs line differ=-
	clause=$(clause_of "$id"); clause=${clause:--}
	dir=$WORK/$id
	cp -r "$ROOT/examples/acme" "$dir"
	rm -rf "$dir/acme/testdata" # rapid failfiles are acme-test state, not ours
	(cd "$dir" && go mod edit -replace "github.com/wsconverge/converge=$ROOT")
	if [ -n "$patch" ]; then
		# -p3: the patches are relative to the repository root (examples/acme/...).
		if ! (cd "$dir" && GIT_CEILING_DIRECTORIES=$WORK git apply -p3 "$patch"); then
			RESULT=error; line="ERROR patch does not apply"
		fi
	fi
	start=$SECONDS
	if [ -z "${line:-}" ] && ! (cd "$dir" && go build -o "$dir/acme-converge" ./cmd/acme-converge 2>"$dir/build.log"); then
		RESULT=error; line="ERROR does not build: $(head -c 300 "$dir/build.log" | tr '\n' ' ')"
	fi
	if [ -z "${line:-}" ]; then
		rc=0
		(cd "$dir" && ./acme-converge sim --system acme --seeds "$SEEDS" --workspaces "$WORKSPACES" \
			--stop-at-first-failure --no-shrink --json --replay-dir "$dir/replays") >"$dir/out.json" 2>"$dir/err.log" || rc=$?
		if [ "$id" = 00-none ]; then
			v=$("$WORK/verdict.bin" "" "$WORK/baseline.hashes" <"$dir/out.json")
		else
			v=$("$WORK/verdict.bin" "$WORK/baseline.hashes" <"$dir/out.json")
		fi
		case "$v" in
		pass*)
			differ=${v#pass }
			if [ "$rc" -ne 0 ]; then RESULT=error; line="ERROR sim exited $rc with every seed passing"
			elif [ "$differ" = 0 ]; then RESULT=pass; line="SURVIVED ($SEEDS seeds; WARNING: every history equals unpatched acme's)"
			else RESULT=pass; line="SURVIVED ($SEEDS seeds)"; fi
			;;
		fail*)
			read -r _ seed by <<<"$v"
			RESULT=fail; line="KILLED seed=$seed by=$by" ;;
		*)
			RESULT=error; line="ERROR sim exited $rc without a report: $(tail -c 300 "$dir/err.log" | tr '\n' ' ')" ;;
		esac
	fi
	secs=$((SECONDS - start))
	if [ "$id" != 00-none ] && is_equivalent "$id"; then
		# A bug the spec allows must pass: a kill here flags correct behaviour.
		case "$RESULT" in
		pass) RESULT=equivalent; line="EQUIVALENT, passed as it must ($SEEDS seeds)" ;;
		fail) RESULT=false-positive; line="FALSE POSITIVE on an equivalent bug: ${line#KILLED }" ;;
		esac
	fi
	if [ "$id" = 00-none ]; then
		case "$RESULT" in
		pass) line="PASSED, no false positive ($SEEDS seeds)" ;;
		fail) line="FALSE POSITIVE on unpatched acme: ${line#KILLED }" ;;
		esac
	fi
	printf '%s  %s  %s\n' "$id" "$clause" "$line"
	if [ -n "$OUT" ]; then
		local verdict=$RESULT s=- c=-
		case "$RESULT" in
		pass) verdict=survived ;;
		fail) verdict=killed; s=${line#*seed=}; s=${s%% *}; c=${line##*by=} ;;
		equivalent) verdict=equivalent ;;
		false-positive) verdict=FALSE-POSITIVE; s=${line#*seed=}; s=${s%% *}; c=${line##*by=} ;;
		esac
		[ "$id" = 00-none ] && { [ "$RESULT" = fail ] && verdict=FALSE-POSITIVE || verdict=passed; }
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$clause" "$verdict" "$s" "$c" "$differ" "$secs" >>"$OUT"
	fi
	line=""
	rm -rf "$dir"
}

echo "converge $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'): $SEEDS seeds x $WORKSPACES workspaces per bug, default fault mix"
line=""
run_one 00-none ""
baseline=$RESULT
killed=0 total=0 errors=0 equivalent=0 falsepos=0
for p in ${PATCHES[@]+"${PATCHES[@]}"}; do
	base=$(basename "$p")
	run_one "${base%%-*}" "$p"
	case "$RESULT" in
	fail) killed=$((killed + 1)); total=$((total + 1)) ;;
	pass) total=$((total + 1)) ;;
	equivalent) equivalent=$((equivalent + 1)) ;;
	false-positive) falsepos=$((falsepos + 1)) ;;
	*) errors=$((errors + 1)) ;;
	esac
done
echo "kill rate: $killed/$total"
[ "$equivalent" -gt 0 ] && echo "equivalent bugs (not counted; each passed as it must): $equivalent"
[ "$errors" -gt 0 ] && echo "WARNING: $errors bug(s) could not be judged (ERROR lines above)"
if [ "$falsepos" -gt 0 ]; then
	echo "WARNING: FALSE POSITIVE: $falsepos equivalent bug(s) flagged (above)"
	exit 1
fi
if [ "$baseline" = fail ]; then
	echo "WARNING: FALSE POSITIVE: unpatched acme fails (00-none above)"
	exit 1
fi
[ "$baseline" = pass ] || exit 1
exit 0
