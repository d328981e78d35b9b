package oracle_test

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/wsconverge/converge/contracts/oracle/history"
	oraclemutants "github.com/wsconverge/converge/scenarios/mutants/oracle"
	"github.com/wsconverge/converge/sim/engine/chart"
	"github.com/wsconverge/converge/sim/engine/chart/charttest"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

// The oracle world's page: the daemon's lifetimes, a row per request
// whose fetch and broadcast lanes hold one point per record of the
// history, and no violation for the reference.
func TestTheOraclePageShowsEveryRequestsRecords(t *testing.T) {
	res, err := oraclesim.Run(context.Background(), oraclesim.Options{Seed: 7, Keep: true})
	require.NoError(t, err)
	require.Empty(t, res.Report.Violations)
	doc, _ := charttest.Render(t, func(w io.Writer) error { return chart.HTML(w, oraclesim.Page(res.System, res)) })

	fetches, broadcasts, starts := map[string]int{}, map[string]int{}, 0
	for _, e := range res.Events {
		switch {
		case e.Src != nil && e.Src.Phase == history.PhaseDone:
			fetches["r="+itoa(e.Src.RequestID)]++
		case e.CheckTx != nil && e.CheckTx.Origin == history.OriginSUT:
			for _, m := range e.CheckTx.Tx.Msgs {
				if m.RequestID != 0 {
					broadcasts["r="+itoa(m.RequestID)]++
				}
			}
		case e.Proc != nil && e.Proc.Action == history.ProcStart:
			starts++
		}
	}
	require.NotEmpty(t, fetches)
	rows := charttest.Rows(doc, "subject")
	require.NotEmpty(t, rows)
	for _, r := range rows {
		id := charttest.Attr(r, "data-subject")
		require.Len(t, charttest.Values(r, oraclesim.LaneFetch), fetches[id], "%s's fetches", id)
		require.Len(t, charttest.Values(r, oraclesim.LaneSubmit), broadcasts[id], "%s's broadcasts", id)
	}
	top := charttest.Rows(doc, "instance")
	require.Equal(t, "daemon", charttest.Attr(top[0], "data-subject"))
	require.Len(t, charttest.Values(top[0], "life"), starts, "one segment per lifetime")
	require.Contains(t, charttest.Text(doc), "No violations.")
}

// A mutant's first violation about a request is marked on that request's
// row, and listed with the records that prove it.
func TestTheOraclePageMarksTheFirstViolationOnItsRequest(t *testing.T) {
	m, ok := oraclemutants.ByName("no-resync-on-32")
	require.True(t, ok)
	var res *oraclesim.Result
	for seed := uint64(1); seed <= 5 && (res == nil || len(res.Report.Violations) == 0); seed++ {
		var err error
		res, err = oraclesim.Run(context.Background(), oraclesim.Options{Seed: seed, Keep: true, System: m})
		require.NoError(t, err)
	}
	require.NotEmpty(t, res.Report.Violations, "the mutant fails within five seeds")
	doc, _ := charttest.Render(t, func(w io.Writer) error { return chart.HTML(w, oraclesim.Page(res.System, res)) })
	first := charttest.Rects(doc, "first")
	require.Len(t, first, 1)
	v := res.Report.Violations[0]
	want, _, _ := strings.Cut(v.Subject, " ")
	require.True(t, strings.HasPrefix(want, "r="), "the mutant's first violation is about a request: %s", v)
	require.Equal(t, want, charttest.Attr(first[0].Parent.Parent, "data-subject"))
	li := charttest.Find(doc, func(n *html.Node) bool { return n.Data == "li" && charttest.Attr(n, "id") == "violation-1" })
	require.Len(t, li, 1)
	require.Contains(t, charttest.Text(li[0]), ">> ", "with its evidence")
	require.Contains(t, charttest.Text(doc), "FAIL")
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
