package report

import (
	"fmt"
	"html/template"
	"io"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts/history"
)

// Geometry of the chart, in pixels.
const (
	labelWidth = 220
	chartWidth = 1100
	laneHeight = 13
	laneGap    = 2
	rowGap     = 12
	topMargin  = 28
)

// colours of each lane's values (anything else is grey).
var colours = map[string]map[string]string{
	LaneObserved: {"PENDING": "#d0d7de", "STANDBY": "#e3b341", "RUNNING": "#2da44e", "DELETED": "#57606a"},
	LaneOperation: {"NONE": "none", "PROVISIONING": "#8250df", "RESTORING": "#bf3989", "STARTING": "#0969da",
		"STOPPING": "#bc4c00", "ARCHIVING": "#1b7c83", "DELETING": "#a40e26"},
	LaneHealth: {"OK": "#aceebb", "ERROR": "#cf222e"},
	"leader":   {"leader": "#6639ba"},
}

// rect is one drawn segment or mark.
type rect struct {
	X, Y, W, H float64
	Fill       string
	Title      string
	Class      string
	Lane       string
	Value      string
}

type lane struct {
	Name  string
	Y     float64
	Rects []rect
}

type row struct {
	Workspace string
	Label     string
	Y         float64
	Lanes     []lane
	Marks     []rect
	// Violations are the markers of the violations on this workspace.
	Violations []rect
}

type violationView struct {
	ID       string
	Text     string
	First    bool
	Evidence []string
}

type page struct {
	Title      string
	System     string
	Seed       uint64
	Verdict    string
	Start, End string
	Width      float64
	Height     float64
	LabelWidth float64
	Ticks      []rect
	Leaders    []row
	Rows       []row
	Global     []rect
	Violations []violationView
	Failures   []string
	Legend     []rect
}

// HTML writes a self-contained page (no scripts, no external resources)
// for run: per workspace, swimlanes of observed status, operation and
// health over virtual time, the faults that struck it, each coordinator
// instance's leadership and crashes, and the violations — the first one
// marked on its workspace's lanes and shown with the timeline that proves
// it. Every text from the run is escaped.
func HTML(w io.Writer, run Run) error {
	p := build(run)
	if err := pageTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

func build(run Run) *page {
	res := &run.Result
	end := run.End
	if !end.After(run.Start) {
		end = run.Start.Add(time.Second)
	}
	span := end.Sub(run.Start)
	x := func(t time.Time) float64 {
		return labelWidth + float64(t.Sub(run.Start))/float64(span)*chartWidth
	}
	width := func(a, b time.Time) float64 { return max(x(b)-x(a), 0.5) }
	p := &page{
		Title: fmt.Sprintf("%s, seed %d", run.System, res.Seed), System: run.System, Seed: res.Seed,
		Start: run.Start.UTC().Format(time.RFC3339), End: history.Offset(span),
		Width: labelWidth + chartWidth + 20, LabelWidth: labelWidth, Failures: res.Failures,
	}
	p.Verdict = "PASS"
	if !res.OK() {
		p.Verdict = "FAIL"
	}
	// Ticks: about ten along the axis, on whole minutes or hours.
	step := tickStep(span)
	for t := time.Duration(0); t <= span; t += step {
		p.Ticks = append(p.Ticks, rect{X: x(run.Start.Add(t)), Title: history.Offset(t)})
	}
	y := float64(topMargin)
	for _, l := range Leaders(run.Events, end) {
		r := row{Workspace: l.Instance, Label: l.Instance, Y: y}
		ln := lane{Name: "leader", Y: y}
		for _, s := range l.Leading {
			ln.Rects = append(ln.Rects, rect{X: x(s.From), Y: y, W: width(s.From, s.To), H: laneHeight, Fill: colours["leader"]["leader"],
				Title: fmt.Sprintf("%s leads %s – %s", l.Instance, history.Offset(s.From.Sub(run.Start)), history.Offset(s.To.Sub(run.Start))), Lane: "leader", Value: "leader"})
		}
		r.Lanes = append(r.Lanes, ln)
		for _, c := range l.Crashes {
			r.Marks = append(r.Marks, rect{X: x(c.At) - 1, Y: y - 2, W: 2, H: laneHeight + 4, Fill: "#24292f", Class: "crash",
				Title: fmt.Sprintf("#%d %s %s %s", c.Seq, history.Offset(c.At.Sub(run.Start)), l.Instance, c.What)})
		}
		p.Leaders = append(p.Leaders, r)
		y += laneHeight + rowGap
	}
	y += rowGap
	rowOf := map[string]int{}
	for _, s := range Timelines(run.Events, end) {
		r := row{Workspace: s.Workspace, Label: s.Label, Y: y}
		for i, name := range Lanes {
			ly := y + float64(i)*(laneHeight+laneGap)
			ln := lane{Name: name, Y: ly}
			for _, seg := range s.Lanes[name] {
				fill, ok := colours[name][seg.Value]
				if !ok {
					fill = "#8c959f"
				}
				w := width(seg.From, seg.To)
				if name == LaneOperation && seg.Value != "NONE" {
					w = max(w, 3) // an operation lasts seconds in a run of hours: keep it visible
				}
				ln.Rects = append(ln.Rects, rect{X: x(seg.From), Y: ly, W: w, H: laneHeight, Fill: fill,
					Title: fmt.Sprintf("%s %s: %s – %s", name, seg.Value, history.Offset(seg.From.Sub(run.Start)), history.Offset(seg.To.Sub(run.Start))),
					Lane:  name, Value: seg.Value})
			}
			r.Lanes = append(r.Lanes, ln)
		}
		for _, m := range s.Marks {
			r.Marks = append(r.Marks, rect{X: x(m.At) - 1, Y: y - 3, W: 2, H: 3*(laneHeight+laneGap) + 3, Fill: "#24292f", Class: "fault",
				Title: fmt.Sprintf("#%d %s fault %s", m.Seq, history.Offset(m.At.Sub(run.Start)), m.What)})
		}
		rowOf[s.Workspace] = len(p.Rows)
		p.Rows = append(p.Rows, r)
		y += 3*(laneHeight+laneGap) + rowGap
	}
	p.Height = y + 10
	if res.Report != nil {
		for i, v := range res.Report.Violations {
			id := "violation-" + strconv.Itoa(i+1)
			vv := violationView{ID: id, Text: v.String(), First: i == 0}
			if i < len(res.Evidence) {
				vv.Evidence = res.Evidence[i]
			}
			p.Violations = append(p.Violations, vv)
			class := "violation"
			if i == 0 {
				class = "violation first"
			}
			mark := rect{X: x(v.At) - 2, W: 4, Fill: "#cf222e", Class: class, Title: v.String(), Value: id}
			if k, ok := rowOf[v.Subject]; ok {
				mark.Y, mark.H = p.Rows[k].Y-4, 3*(laneHeight+laneGap)+6
				p.Rows[k].Violations = append(p.Rows[k].Violations, mark)
			} else {
				mark.Y, mark.H = topMargin-6, p.Height-topMargin
				p.Global = append(p.Global, mark)
			}
		}
	}
	lx := float64(0)
	for _, name := range Lanes {
		for _, v := range legendOrder[name] {
			p.Legend = append(p.Legend, rect{X: lx, Fill: colours[name][v], Title: name + " " + v})
			lx += 1
		}
	}
	return p
}

var legendOrder = map[string][]string{
	LaneObserved:  {"PENDING", "STANDBY", "RUNNING", "DELETED"},
	LaneOperation: {"PROVISIONING", "RESTORING", "STARTING", "STOPPING", "ARCHIVING", "DELETING"},
	LaneHealth:    {"OK", "ERROR"},
}

// tickStep is a round step giving about ten ticks over span.
func tickStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour} {
		if span/s <= 12 {
			return s
		}
	}
	return span / 10
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"px":    func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"short": history.ShortID,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>converge: {{.Title}}</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 20px; color: #24292f; }
h1 { font-size: 18px; margin: 0 0 4px; }
.verdict { font-weight: bold; padding: 1px 6px; border-radius: 3px; color: #fff; }
.verdict.PASS { background: #2da44e; } .verdict.FAIL { background: #cf222e; }
svg text { font: 11px system-ui, sans-serif; fill: #24292f; }
svg text.lane-name { fill: #57606a; font-size: 9px; }
.legend span { display: inline-block; margin-right: 10px; }
.legend i { display: inline-block; width: 12px; height: 10px; margin-right: 3px; border: 1px solid #d0d7de; vertical-align: middle; }
.violations li { margin-bottom: 8px; }
.violations li.first { border-left: 4px solid #cf222e; padding-left: 6px; }
pre { background: #f6f8fa; padding: 8px; overflow-x: auto; font-size: 11px; }
</style>
</head>
<body>
<h1>{{.System}} — seed {{.Seed}} <span class="verdict {{.Verdict}}">{{.Verdict}}</span></h1>
<p>Virtual time from {{.Start}}, {{.End}} long. Each workspace has three lanes: observed status, operation, health.
Black ticks are faults (and, on a coordinator's lane, crashes and restarts); the red bar is a violation, the
<strong>first violation</strong> the wider one. Hover for details.</p>
<div class="legend">{{range .Legend}}<span><i style="background:{{.Fill}}"></i>{{.Title}}</span>{{end}}</div>
<svg xmlns="http://www.w3.org/2000/svg" width="{{px .Width}}" height="{{px .Height}}" role="img" aria-label="timeline">
{{- range .Ticks}}
<line class="tick" x1="{{px .X}}" x2="{{px .X}}" y1="14" y2="{{px $.Height}}" stroke="#eaeef2"/><text x="{{px .X}}" y="10" text-anchor="middle">{{.Title}}</text>
{{- end}}
{{- range .Leaders}}
<g class="instance" data-instance="{{.Workspace}}"><text x="4" y="{{px .Y}}" dy="10">{{.Label}}</text>
{{- range .Lanes}}<g class="lane" data-lane="{{.Name}}">{{range .Rects}}<rect x="{{px .X}}" y="{{px .Y}}" width="{{px .W}}" height="{{px .H}}" fill="{{.Fill}}"><title>{{.Title}}</title></rect>{{end}}</g>{{end}}
{{- range .Marks}}<rect class="{{.Class}}" x="{{px .X}}" y="{{px .Y}}" width="{{px .W}}" height="{{px .H}}" fill="{{.Fill}}"><title>{{.Title}}</title></rect>{{end}}
</g>
{{- end}}
{{- range .Rows}}
<g class="workspace" data-workspace="{{.Workspace}}"><text x="4" y="{{px .Y}}" dy="10">{{.Label}}</text><text class="lane-name" x="4" y="{{px .Y}}" dy="24">{{short .Workspace}}<title>{{.Workspace}}</title></text>
{{- range .Lanes}}
<g class="lane" data-lane="{{.Name}}"><text class="lane-name" x="{{px $.LabelWidth}}" y="{{px .Y}}" dx="-4" dy="10" text-anchor="end">{{.Name}}</text>{{range .Rects}}<rect x="{{px .X}}" y="{{px .Y}}" width="{{px .W}}" height="{{px .H}}" fill="{{.Fill}}" stroke="#d0d7de" stroke-width="0.3" data-value="{{.Value}}"><title>{{.Title}}</title></rect>{{end}}</g>
{{- end}}
{{- range .Marks}}<rect class="{{.Class}}" x="{{px .X}}" y="{{px .Y}}" width="{{px .W}}" height="{{px .H}}" fill="{{.Fill}}" opacity="0.7"><title>{{.Title}}</title></rect>{{end}}
{{- range .Violations}}<a href="#{{.Value}}"><rect class="{{.Class}}" x="{{px .X}}" y="{{px .Y}}" width="{{px .W}}" height="{{px .H}}" fill="{{.Fill}}"><title>{{.Title}}</title></rect></a>{{end}}
</g>
{{- end}}
{{- range .Global}}<a href="#{{.Value}}"><rect class="{{.Class}}" x="{{px .X}}" y="{{px .Y}}" width="{{px .W}}" height="{{px .H}}" fill="{{.Fill}}" opacity="0.6"><title>{{.Title}}</title></rect></a>{{end}}
</svg>
{{- if .Failures}}
<h2>Failures</h2>
<ul class="failures">{{range .Failures}}<li><pre>{{.}}</pre></li>{{end}}</ul>
{{- end}}
{{- if .Violations}}
<h2>Violations</h2>
<ol class="violations">{{range .Violations}}
<li id="{{.ID}}"{{if .First}} class="first"{{end}}>{{if .First}}<strong>first violation:</strong> {{end}}{{.Text}}{{if .Evidence}}<pre>{{range .Evidence}}{{.}}
{{end}}</pre>{{end}}</li>{{end}}
</ol>
{{- else}}
<p>No violations.</p>
{{- end}}
</body>
</html>
`))
