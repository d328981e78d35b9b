package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/judge"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
	"github.com/wsconverge/converge/sim/engine"
	"github.com/wsconverge/converge/sim/engine/chart/charttest"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

var t0 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// handRun is a small run written by hand: two workspaces, one with a
// hostile name, a fault, a leader, and a violation whose message tries to
// inject markup.
func handRun() Run {
	w1 := contracts.NewWorkspace("w1", "alice", `dev <b>&"`, "img", t0)
	w2 := contracts.NewWorkspace("w2", "bob", "ops", "img", t0)
	patch := func(p contracts.Patch) *contracts.Patch { return &p }
	events := []history.Event{
		{Seq: 1, At: t0, Kind: history.KindLeader, Method: "acquire", Instance: "coord-1", Epoch: 1},
		{Seq: 2, At: t0, Kind: history.KindInsert, Workspace: "w1", Row: &w1},
		{Seq: 3, At: t0.Add(time.Minute), Kind: history.KindInsert, Workspace: "w2", Row: &w2},
		{Seq: 4, At: t0.Add(2 * time.Minute), Kind: history.KindWrite, Workspace: "w1", Applied: true,
			Patch: patch(contracts.Patch{Operation: contracts.Some(contracts.OpProvisioning)})},
		{Seq: 5, At: t0.Add(3 * time.Minute), Kind: history.KindWrite, Workspace: "w1", Applied: true,
			Patch: patch(contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedStandby)})},
		{Seq: 6, At: t0.Add(3 * time.Minute), Kind: history.KindWrite, Workspace: "w1", Applied: false,
			Patch: patch(contracts.Patch{ObservedStatus: contracts.Some(contracts.ObservedRunning)})},
		{Seq: 7, At: t0.Add(4 * time.Minute), Kind: history.KindWrite, Workspace: "w1", Applied: true,
			Patch: patch(contracts.Patch{Operation: contracts.Some(contracts.OpNone)})},
		{Seq: 8, At: t0.Add(5 * time.Minute), Kind: history.KindFault, Workspace: "w1", Method: "storage.Lose"},
		{Seq: 9, At: t0.Add(6 * time.Minute), Kind: history.KindCrash, Instance: "coord-1", Method: "crash", Args: "crashed at port call 7"},
	}
	rep := &judge.Report{Exercised: map[string]int{"c4-non-preemptive": 3, "c8-ordering": 1}, Violations: []judge.Violation{
		{Checker: "c8-ordering", Contract: "C8", Subject: "w1", At: t0.Add(5 * time.Minute), Message: "<script>alert(1)</script> volume deleted early", Evidence: []int64{8}},
		{Checker: "c8-ordering", Contract: "C8", Subject: "w2", At: t0.Add(7 * time.Minute), Message: "again"},
	}}
	return Run{System: "exec:python3 x.py", Start: t0, End: t0.Add(10 * time.Minute), Events: events, Wall: 2 * time.Second,
		Result: wssim.Result{Seed: 7, Report: rep, Evidence: [][]string{{">> +00:05:00.000 #8 fault storage.Lose"}}}}
}

func render(t *testing.T, r Run) (*html.Node, string) {
	t.Helper()
	return charttest.Render(t, func(w io.Writer) error { return HTML(w, r) })
}

var (
	attr     = charttest.Attr
	hasClass = charttest.HasClass
	find     = charttest.Find
	text     = charttest.Text
)

// The page has, per workspace, the three lanes with the values the
// history gave them in order; the first violation marked on its
// workspace; faults and crashes marked; and every text from the run
// escaped.
func TestTheHTMLTimeline(t *testing.T) {
	doc, raw := render(t, handRun())
	rows := find(doc, func(n *html.Node) bool { return n.Data == "g" && hasClass(n, "subject") })
	require.Len(t, rows, 2)
	require.Equal(t, "w1", attr(rows[0], "data-subject"))
	values := func(row *html.Node, lane string) []string {
		var out []string
		for _, g := range find(row, func(n *html.Node) bool { return n.Data == "g" && attr(n, "data-lane") == lane }) {
			for _, r := range find(g, func(n *html.Node) bool { return n.Data == "rect" }) {
				out = append(out, attr(r, "data-value"))
			}
		}
		return out
	}
	require.Equal(t, []string{"PENDING", "STANDBY"}, values(rows[0], LaneObserved), "the write that did not apply changes nothing")
	require.Equal(t, []string{"NONE", "PROVISIONING", "NONE"}, values(rows[0], LaneOperation))
	require.Equal(t, []string{"OK"}, values(rows[0], LaneHealth))
	require.Equal(t, []string{"PENDING"}, values(rows[1], LaneObserved))

	first := find(doc, func(n *html.Node) bool { return n.Data == "rect" && hasClass(n, "violation") && hasClass(n, "first") })
	require.Len(t, first, 1, "one first violation")
	require.Equal(t, rows[0], first[0].Parent.Parent, "marked on its workspace's swimlane")
	others := find(rows[1], func(n *html.Node) bool { return n.Data == "rect" && hasClass(n, "violation") })
	require.Len(t, others, 1)
	require.False(t, hasClass(others[0], "first"))
	require.Len(t, find(rows[0], func(n *html.Node) bool { return n.Data == "rect" && hasClass(n, "fault") }), 1)
	require.Len(t, find(doc, func(n *html.Node) bool { return n.Data == "rect" && hasClass(n, "crash") }), 1)

	// Escaping: the hostile texts are text, never markup.
	require.Empty(t, find(doc, func(n *html.Node) bool { return n.Data == "script" || n.Data == "b" }))
	require.Contains(t, text(doc), `dev <b>&"`)
	require.Contains(t, raw, "&lt;script&gt;alert(1)&lt;/script&gt;")
	li := find(doc, func(n *html.Node) bool { return n.Data == "li" && attr(n, "id") == "violation-1" })
	require.Len(t, li, 1)
	require.True(t, hasClass(li[0], "first"))
	require.Contains(t, text(li[0]), "<script>alert(1)</script> volume deleted early")
	require.Contains(t, text(li[0]), ">> +00:05:00.000 #8 fault storage.Lose", "with the timeline that proves it")
	require.NotContains(t, raw, "ZgotmplZ", "every value passed the template's filters")
}

// A real run of a killed mutant renders with its first violation on the
// workspace it is about.
func TestTheHTMLOfAKilledMutant(t *testing.T) {
	m, err := wsmutants.Lookup("no-cas-claim")
	require.NoError(t, err)
	s, r, err := wssim.Execute(context.Background(), wssim.Config{Seed: 1, Workspaces: 3, Duration: 30 * time.Minute, System: m.System})
	require.NoError(t, err)
	require.True(t, r.Report.Failed())
	doc, raw := render(t, FromSim("mutant:no-cas-claim", s, r, time.Second))
	first := find(doc, func(n *html.Node) bool { return n.Data == "rect" && hasClass(n, "first") })
	require.Len(t, first, 1)
	require.Equal(t, r.Report.Violations[0].Subject, attr(first[0].Parent.Parent, "data-subject"))
	created := map[string]bool{}
	for _, e := range s.History().Events() {
		if e.Kind == history.KindInsert {
			created[e.Workspace] = true
		}
	}
	require.Greater(t, len(created), 3, "the workload creates workspaces beyond the initial fleet")
	require.Len(t, find(doc, func(n *html.Node) bool { return n.Data == "g" && hasClass(n, "subject") }), len(created), "one group per workspace the run created")
	if dir := os.Getenv("CONVERGE_REPORT_SAMPLE"); dir != "" {
		require.NoError(t, os.WriteFile(dir+"/no-cas-claim.html", []byte(raw), 0o644))
	}
}

// JUnit: a suite per seed, a case per checker and one for the run;
// violations fail their checker's case with the timeline, unexercised
// checkers are skipped, a run's failures fail the run case.
func TestJUnit(t *testing.T) {
	failing := handRun()
	passing := Run{System: "reference", Wall: time.Second, Result: wssim.Result{Seed: 8, Report: &judge.Report{Exercised: map[string]int{"c4-non-preemptive": 1}}}}
	broken := Run{System: "exec:x", Result: wssim.Result{Seed: 9, Failures: []string{"driver: coord-1#1: unknown method \"x\"\n  more"}}}
	var b bytes.Buffer
	require.NoError(t, JUnit("converge sim", []Run{failing, passing, broken}).Write(&b))
	var back engine.JUnitSuites
	require.NoError(t, xml.Unmarshal(b.Bytes(), &back))
	require.Len(t, back.Suites, 3)
	names := append([]string{RunCase}, wsjudge.Names()...)
	for i, s := range back.Suites[:2] {
		var got []string
		for _, c := range s.Cases {
			got = append(got, c.Name)
		}
		require.Equal(t, names, got, "suite %d", i)
	}
	f := back.Suites[0]
	require.Equal(t, "seed 7", f.Name)
	require.Equal(t, 1, f.Failures)
	require.Equal(t, len(names)-3, f.Skipped, "all but the run, c4 and c8 never exercised")
	c8 := f.Cases[slicesIndex(names, "c8-ordering")]
	require.Contains(t, c8.Failure.Message, "<script>alert(1)</script> volume deleted early")
	require.Contains(t, c8.Failure.Text, ">> +00:05:00.000 #8 fault storage.Lose")
	require.Contains(t, c8.Failure.Text, "again", "every violation of the checker")
	require.Equal(t, "exec:python3 x.py", c8.Classname)
	p := back.Suites[1]
	require.Zero(t, p.Failures)
	require.Nil(t, p.Cases[slicesIndex(names, "c4-non-preemptive")].Skipped)
	br := back.Suites[2]
	require.Equal(t, 1, br.Tests, "an unjudged run has only its run case")
	require.Equal(t, `driver: coord-1#1: unknown method "x"`, br.Cases[0].Failure.Message)
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
