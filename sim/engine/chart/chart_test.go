package chart_test

import (
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/wsconverge/converge/sim/engine/chart"
	"github.com/wsconverge/converge/sim/engine/chart/charttest"
)

var t0 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// handPage is a page written by hand: an instance, two subjects (one with
// a hostile label), a point segment, marks, and three violations: one on
// a subject, one on an unknown subject, one trying to inject markup.
func handPage() chart.Page {
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	return chart.Page{
		System: `exec:evil "<i>"`, Seed: 9, Failed: true, Start: t0, End: at(60), About: "Two lanes per subject.",
		Legend: []chart.Swatch{{Fill: "#2da44e", Name: "state up"}},
		Top: []chart.Row{{ID: "inst-1", Label: "inst-1", Lanes: []chart.Lane{{Name: "leader", Segments: []chart.Segment{
			{From: at(0), To: at(30), Value: "leader", Fill: "#6639ba"}}}},
			Marks: []chart.Mark{{At: at(30), Class: "crash", Title: "crashed"}}}},
		Rows: []chart.Row{
			{ID: "s1", Label: `s1 <b>&"`, Sub: "short", Lanes: []chart.Lane{
				{Name: "state", Segments: []chart.Segment{{From: at(0), To: at(10), Value: "down", Fill: "#cf222e"}, {From: at(10), To: at(60), Value: "up", Fill: "#2da44e"}}},
				{Name: "events", Segments: []chart.Segment{{From: at(20), To: at(20), Value: "ping", Fill: "#0969da", MinWidth: 2}}},
			}, Marks: []chart.Mark{{At: at(5), Class: "fault", Title: "a fault"}}},
			{ID: "s2", Label: "s2", Lanes: []chart.Lane{{Name: "state", Segments: []chart.Segment{{From: at(0), To: at(60), Value: "up", Fill: "#2da44e"}}}, {Name: "events"}}},
		},
		Violations: []chart.Violation{
			{Subject: "s2", At: at(40), Text: "<script>alert(1)</script> first", Evidence: []string{">> +00:40:00.000 #3 the proof"}},
			{Subject: "nowhere", At: at(41), Text: "about no row"},
			{Subject: "s1", At: at(42), Text: "third"},
		},
		Failures: []string{"harness <failure>"},
	}
}

func write(p chart.Page) func(io.Writer) error {
	return func(w io.Writer) error { return chart.HTML(w, p) }
}

// The page shows each row's lanes with their values in order, marks each
// violation on its subject's row (or across the chart when no row is
// its), the first one apart, and escapes every text from the run.
func TestThePageDrawsRowsLanesAndViolations(t *testing.T) {
	doc, raw := charttest.Render(t, write(handPage()))
	top := charttest.Rows(doc, "instance")
	require.Len(t, top, 1)
	require.Equal(t, []string{"leader"}, charttest.Values(top[0], "leader"))
	require.Len(t, charttest.Rects(top[0], "crash"), 1)

	rows := charttest.Rows(doc, "subject")
	require.Len(t, rows, 2)
	require.Equal(t, "s1", charttest.Attr(rows[0], "data-subject"))
	require.Equal(t, []string{"down", "up"}, charttest.Values(rows[0], "state"))
	require.Equal(t, []string{"ping"}, charttest.Values(rows[0], "events"))
	require.Empty(t, charttest.Values(rows[1], "events"))
	require.Len(t, charttest.Rects(rows[0], "fault"), 1)

	first := charttest.Rects(doc, "first")
	require.Len(t, first, 1, "one first violation")
	require.Equal(t, rows[1], first[0].Parent.Parent, "the first violation is on s2's row")
	require.Len(t, charttest.Rects(rows[0], "violation"), 1, "the third, on s1")
	all := charttest.Rects(doc, "violation")
	require.Len(t, all, 3, "the one about no row is drawn across the chart")

	// A point keeps its least width.
	ping := charttest.Find(rows[0], func(n *html.Node) bool { return n.Data == "rect" && charttest.Attr(n, "data-value") == "ping" })
	require.Len(t, ping, 1)
	w, err := strconv.ParseFloat(charttest.Attr(ping[0], "width"), 64)
	require.NoError(t, err)
	require.InDelta(t, 2.0, w, 0.01)

	require.Empty(t, charttest.Find(doc, func(n *html.Node) bool { return n.Data == "script" || n.Data == "b" }))
	require.Contains(t, charttest.Text(doc), `exec:evil "<i>"`)
	require.Contains(t, charttest.Text(doc), `s1 <b>&"`)
	require.Contains(t, raw, "&lt;script&gt;alert(1)&lt;/script&gt;")
	li := charttest.Find(doc, func(n *html.Node) bool { return n.Data == "li" && charttest.Attr(n, "id") == "violation-1" })
	require.Len(t, li, 1)
	require.True(t, charttest.HasClass(li[0], "first"))
	require.Contains(t, charttest.Text(li[0]), ">> +00:40:00.000 #3 the proof", "with the timeline that proves it")
	require.Contains(t, charttest.Text(doc), "harness <failure>")
	require.Contains(t, charttest.Text(doc), "FAIL")
}

// A run that passed says so and lists no violation; a run with no span
// still draws.
func TestThePageOfAPassAndOfAnEmptyRun(t *testing.T) {
	doc, _ := charttest.Render(t, write(chart.Page{System: "x", Seed: 1, Start: t0, End: t0}))
	require.Contains(t, charttest.Text(doc), "PASS")
	require.Contains(t, charttest.Text(doc), "No violations.")
	require.Empty(t, charttest.Rows(doc, "subject"))
}
