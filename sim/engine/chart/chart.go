package chart

import (
	"fmt"
	"html/template"
	"io"
	"strconv"
	"time"

	"github.com/wsconverge/converge/contracts/record"
)

// Page is a judged run, ready to draw.
type Page struct {
	// System names the implementation judged; Seed the run's seed.
	System string
	Seed   uint64
	// Failed: the run failed (a violation or a harness failure).
	Failed bool
	// Start and End bound the run in virtual time.
	Start, End time.Time
	// About is the paragraph under the title: what the lanes show.
	About string
	// Legend lists the colours worth naming.
	Legend []Swatch
	// Top are the instances' rows (one lane each is usual), Rows the
	// subjects', in the order to draw them.
	Top, Rows []Row
	// Violations in report order; the first is the first violation.
	Violations []Violation
	// Failures are the harness's failures, verbatim.
	Failures []string
}

// Swatch is one legend entry.
type Swatch struct{ Fill, Name string }

// Row is one instance or subject: a label and its lanes.
type Row struct {
	// ID identifies the row (a violation's Subject finds it by this);
	// Label is what the page shows, Sub a second, smaller line.
	ID, Label, Sub string
	Lanes          []Lane
	// Marks are point events on the whole row (faults, crashes).
	Marks []Mark
}

// Lane is one line of a row: the values it held over time.
type Lane struct {
	Name     string
	Segments []Segment
}

// Segment is a value held over [From, To); From == To draws a point.
// Fill "none" draws it unseen (a value that means "nothing"); Title
// defaults to "lane value: from – to"; MinWidth (pixels) keeps a short
// segment visible in a long run.
type Segment struct {
	From, To    time.Time
	Value, Fill string
	Title       string
	MinWidth    float64
}

// Mark is a point event on a row; Class names its kind for the page
// ("fault", "crash").
type Mark struct {
	At    time.Time
	Class string
	Title string
}

// Violation is one violation of the run; Subject finds its row (by ID),
// else it is drawn across the whole chart. Evidence is the timeline that
// proves it, one line each.
type Violation struct {
	Subject  string
	At       time.Time
	Text     string
	Evidence []string
}

// Geometry of the chart, in pixels.
const (
	labelWidth = 220
	chartWidth = 1100
	laneHeight = 13
	laneGap    = 2
	rowGap     = 12
	topMargin  = 28
)

// The drawn forms, for the template.
type (
	rect struct {
		X, Y, W, H float64
		Fill       string
		Title      string
		Class      string
		Value      string
	}
	lane struct {
		Name  string
		Y     float64
		Rects []rect
	}
	row struct {
		ID, Label, Sub string
		Y              float64
		Lanes          []lane
		Marks          []rect
		Violations     []rect
	}
	violationView struct {
		ID       string
		Text     string
		First    bool
		Evidence []string
	}
	view struct {
		Title, System, Verdict string
		Seed                   uint64
		Start, End, About      string
		Width, Height          float64
		LabelWidth             float64
		Ticks                  []rect
		Top, Rows              []row
		Global                 []rect
		Violations             []violationView
		Failures               []string
		Legend                 []Swatch
	}
)

// HTML writes p as a page. Every text from the run is escaped.
func HTML(w io.Writer, p Page) error {
	if err := pageTemplate.Execute(w, layout(p)); err != nil {
		return fmt.Errorf("write html timeline: %w", err)
	}
	return nil
}

func layout(p Page) *view {
	end := p.End
	if !end.After(p.Start) {
		end = p.Start.Add(time.Second)
	}
	span := end.Sub(p.Start)
	x := func(t time.Time) float64 {
		return labelWidth + float64(t.Sub(p.Start))/float64(span)*chartWidth
	}
	offset := func(t time.Time) string { return record.Offset(t.Sub(p.Start)) }
	v := &view{
		Title: fmt.Sprintf("%s, seed %d", p.System, p.Seed), System: p.System, Seed: p.Seed, About: p.About,
		Start: p.Start.UTC().Format(time.RFC3339), End: record.Offset(span),
		Width: labelWidth + chartWidth + 20, LabelWidth: labelWidth, Failures: p.Failures, Legend: p.Legend,
		Verdict: "PASS",
	}
	if p.Failed {
		v.Verdict = "FAIL"
	}
	step := tickStep(span)
	for t := time.Duration(0); t <= span; t += step {
		v.Ticks = append(v.Ticks, rect{X: x(p.Start.Add(t)), Title: record.Offset(t)})
	}
	y := float64(topMargin)
	draw := func(r Row) row {
		out := row{ID: r.ID, Label: r.Label, Sub: r.Sub, Y: y}
		for i, l := range r.Lanes {
			ly := y + float64(i)*(laneHeight+laneGap)
			ln := lane{Name: l.Name, Y: ly}
			for _, s := range l.Segments {
				w := max(x(s.To)-x(s.From), 0.5, s.MinWidth)
				title := s.Title
				if title == "" {
					title = fmt.Sprintf("%s %s: %s – %s", l.Name, s.Value, offset(s.From), offset(s.To))
				}
				ln.Rects = append(ln.Rects, rect{X: x(s.From), Y: ly, W: w, H: laneHeight, Fill: s.Fill, Title: title,
					Value: s.Value})
			}
			out.Lanes = append(out.Lanes, ln)
		}
		height := rowHeight(len(r.Lanes))
		for _, m := range r.Marks {
			out.Marks = append(out.Marks, rect{X: x(m.At) - 1, Y: y - 3, W: 2, H: height + 6, Fill: "#24292f", Class: m.Class,
				Title: m.Title})
		}
		y += height + rowGap
		return out
	}
	for _, r := range p.Top {
		v.Top = append(v.Top, draw(r))
	}
	y += rowGap
	rowOf := map[string]int{}
	for _, r := range p.Rows {
		rowOf[r.ID] = len(v.Rows)
		v.Rows = append(v.Rows, draw(r))
	}
	v.Height = y + 10
	for i, vi := range p.Violations {
		id := "violation-" + strconv.Itoa(i+1)
		v.Violations = append(v.Violations, violationView{ID: id, Text: vi.Text, First: i == 0, Evidence: vi.Evidence})
		class := "violation"
		if i == 0 {
			class = "violation first"
		}
		mark := rect{X: x(vi.At) - 2, W: 4, Fill: "#cf222e", Class: class, Title: vi.Text, Value: id}
		if k, ok := rowOf[vi.Subject]; ok {
			r := &v.Rows[k]
			mark.Y, mark.H = r.Y-4, rowHeight(len(r.Lanes))+8
			r.Violations = append(r.Violations, mark)
		} else {
			mark.Y, mark.H = topMargin-6, v.Height-topMargin
			v.Global = append(v.Global, mark)
		}
	}
	return v
}

// rowHeight is the height of a row of n lanes.
func rowHeight(n int) float64 {
	n = max(n, 1)
	return float64(n)*(laneHeight+laneGap) - laneGap
}

// tickStep is a round step giving about ten ticks over span.
func tickStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
		time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour} {
		if span/s <= 12 {
			return s
		}
	}
	return span / 10
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"px": func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
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
<p>Virtual time from {{.Start}}, {{.End}} long. {{.About}} Black ticks are faults (and, on an instance's row,
crashes and restarts); the red bar is a violation, the <strong>first violation</strong> the wider one. Hover for details.</p>
<div class="legend">{{range .Legend}}<span><i style="background:{{.Fill}}"></i>{{.Name}}</span>{{end}}</div>
<svg xmlns="http://www.w3.org/2000/svg" width="{{px .Width}}" height="{{px .Height}}" role="img" aria-label="timeline">
{{- range .Ticks}}
<line class="tick" x1="{{px .X}}" x2="{{px .X}}" y1="14" y2="{{px $.Height}}" stroke="#eaeef2"/><text x="{{px .X}}" y="10" text-anchor="middle">{{.Title}}</text>
{{- end}}
{{- range .Top}}
<g class="instance" data-subject="{{.ID}}"><text x="4" y="{{px .Y}}" dy="10">{{.Label}}</text>
{{- range .Lanes}}<g class="lane" data-lane="{{.Name}}"><text class="lane-name" x="{{px $.LabelWidth}}" y="{{px .Y}}" dx="-4" dy="10" text-anchor="end">{{.Name}}</text>{{range .Rects}}<rect x="{{px .X}}" y="{{px .Y}}" width="{{px .W}}" height="{{px .H}}" fill="{{.Fill}}" data-value="{{.Value}}"><title>{{.Title}}</title></rect>{{end}}</g>{{end}}
{{- range .Marks}}<rect class="{{.Class}}" x="{{px .X}}" y="{{px .Y}}" width="{{px .W}}" height="{{px .H}}" fill="{{.Fill}}"><title>{{.Title}}</title></rect>{{end}}
</g>
{{- end}}
{{- range .Rows}}
<g class="subject" data-subject="{{.ID}}"><text x="4" y="{{px .Y}}" dy="10">{{.Label}}</text>{{if .Sub}}<text class="lane-name" x="4" y="{{px .Y}}" dy="24">{{.Sub}}<title>{{.ID}}</title></text>{{end}}
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
