package report

import (
	"fmt"
	"io"
	"time"

	"github.com/wsconverge/converge/contracts/history"
	"github.com/wsconverge/converge/sim/engine/chart"
)

// colours of each lane's values (anything else is grey).
var colours = map[string]map[string]string{
	LaneObserved: {"PENDING": "#d0d7de", "STANDBY": "#e3b341", "RUNNING": "#2da44e", "DELETED": "#57606a"},
	LaneOperation: {"NONE": "none", "PROVISIONING": "#8250df", "RESTORING": "#bf3989", "STARTING": "#0969da",
		"STOPPING": "#bc4c00", "ARCHIVING": "#1b7c83", "DELETING": "#a40e26"},
	LaneHealth: {"OK": "#aceebb", "ERROR": "#cf222e"},
	"leader":   {"leader": "#6639ba"},
}

// HTML writes a self-contained page (no scripts, no external resources)
// for run: per workspace, swimlanes of observed status, operation and
// health over virtual time, the faults that struck it, each coordinator
// instance's leadership and crashes, and the violations — the first one
// marked on its workspace's lanes and shown with the timeline that proves
// it. Every text from the run is escaped.
func HTML(w io.Writer, run Run) error {
	return chart.HTML(w, Page(run))
}

// Page is run as the shared timeline page draws it.
func Page(run Run) chart.Page {
	res := &run.Result
	end := run.End
	if !end.After(run.Start) {
		end = run.Start.Add(time.Second)
	}
	off := func(t time.Time) string { return history.Offset(t.Sub(run.Start)) }
	p := chart.Page{System: run.System, Seed: res.Seed, Failed: !res.OK(), Start: run.Start, End: end,
		About:    "Each workspace has three lanes: observed status, operation, health.",
		Failures: res.Failures}
	for _, l := range Leaders(run.Events, end) {
		r := chart.Row{ID: l.Instance, Label: l.Instance}
		ln := chart.Lane{Name: "leader"}
		for _, s := range l.Leading {
			ln.Segments = append(ln.Segments, chart.Segment{From: s.From, To: s.To, Value: "leader", Fill: colours["leader"]["leader"],
				Title: fmt.Sprintf("%s leads %s – %s", l.Instance, off(s.From), off(s.To))})
		}
		r.Lanes = append(r.Lanes, ln)
		for _, c := range l.Crashes {
			r.Marks = append(r.Marks, chart.Mark{At: c.At, Class: "crash", Title: fmt.Sprintf("#%d %s %s %s", c.Seq, off(c.At), l.Instance, c.What)})
		}
		p.Top = append(p.Top, r)
	}
	for _, s := range Timelines(run.Events, end) {
		r := chart.Row{ID: s.Workspace, Label: s.Label, Sub: history.ShortID(s.Workspace)}
		for _, name := range Lanes {
			ln := chart.Lane{Name: name}
			for _, seg := range s.Lanes[name] {
				fill, ok := colours[name][seg.Value]
				if !ok {
					fill = "#8c959f"
				}
				cs := chart.Segment{From: seg.From, To: seg.To, Value: seg.Value, Fill: fill}
				if name == LaneOperation && seg.Value != "NONE" {
					cs.MinWidth = 3 // an operation lasts seconds in a run of hours: keep it visible
				}
				ln.Segments = append(ln.Segments, cs)
			}
			r.Lanes = append(r.Lanes, ln)
		}
		for _, m := range s.Marks {
			r.Marks = append(r.Marks, chart.Mark{At: m.At, Class: "fault", Title: fmt.Sprintf("#%d %s fault %s", m.Seq, off(m.At), m.What)})
		}
		p.Rows = append(p.Rows, r)
	}
	if res.Report != nil {
		for i, v := range res.Report.Violations {
			cv := chart.Violation{Subject: v.Subject, At: v.At, Text: v.String()}
			if i < len(res.Evidence) {
				cv.Evidence = res.Evidence[i]
			}
			p.Violations = append(p.Violations, cv)
		}
	}
	for _, name := range Lanes {
		for _, v := range legendOrder[name] {
			p.Legend = append(p.Legend, chart.Swatch{Fill: colours[name][v], Name: name + " " + v})
		}
	}
	return p
}

var legendOrder = map[string][]string{
	LaneObserved:  {"PENDING", "STANDBY", "RUNNING", "DELETED"},
	LaneOperation: {"PROVISIONING", "RESTORING", "STARTING", "STOPPING", "ARCHIVING", "DELETING"},
	LaneHealth:    {"OK", "ERROR"},
}
