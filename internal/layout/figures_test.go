package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's one kill-rate figure is the blind audit's last run, as its
// bug-by-bug table counts it (issue 23: the README gave three mutant
// counts that disagreed). The table is what scenarios/audit/run.sh
// prints; whoever runs it again updates both or this test fails.
func TestREADMEKillRateIsTheAuditsLastRun(t *testing.T) {
	root := filepath.Join("..", "..")
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		return string(b)
	}
	m := regexp.MustCompile(`scenarios/audit/run.sh` + "`" + ` \| all \| (\d+) of (\d+) `).FindStringSubmatch(read("README.md"))
	require.NotNil(t, m, "the README's figures table gives the audit's kill rate")
	audit := read("scenarios/audit/README.md")
	runs := regexp.MustCompile(`\*\*(\d+)/(\d+)\*\*`).FindAllStringSubmatch(audit, -1)
	require.NotEmpty(t, runs)
	last := runs[len(runs)-1]
	require.Equal(t, []string{last[1], last[2]}, []string{m[1], m[2]}, "the README gives the audit's last run")
	rows := regexp.MustCompile(`(?m)^\| (\d\d) \| [^|]+ \| (killed|survived|equivalent) \|`).FindAllStringSubmatch(audit, -1)
	killed, judged := 0, 0
	for _, r := range rows {
		switch r[2] {
		case "killed":
			killed++
			judged++
		case "survived":
			judged++
		case "equivalent":
			require.Regexp(t, `(?m)^`+r[1]+`\t`, read("scenarios/audit/acme/equivalent.tsv"),
				"a bug the table calls equivalent is listed, with its reason, where run.sh reads it")
		}
	}
	require.Equal(t, last[2], strconv.Itoa(judged), "the last run's table has a row per bug, equivalent bugs aside (DR484)")
	require.Equal(t, last[1], strconv.Itoa(killed), "the last run's table counts the kills its summary gives")
}
