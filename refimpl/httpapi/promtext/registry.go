package promtext

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ContentType is the media type of the text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Kind is a metric family's type.
type Kind string

// Metric kinds.
const (
	KindCounter   Kind = "counter"
	KindGauge     Kind = "gauge"
	KindHistogram Kind = "histogram"
)

// DefBuckets are histogram bucket bounds in seconds for durations from a
// millisecond to a minute.
var DefBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// Registry holds metric families. It is safe for concurrent use.
type Registry struct {
	mu       sync.Mutex
	families map[string]*family
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{families: make(map[string]*family)} }

// family is one metric name: its help, type, label names and series.
type family struct {
	name    string
	help    string
	kind    Kind
	labels  []string
	buckets []float64 // histograms only

	mu     sync.Mutex
	series map[string]*series // by joined label values
}

// series is one combination of label values.
type series struct {
	values []string
	// counters and gauges
	value float64
	// histograms: counts[i] observations ≤ buckets[i] (not cumulative),
	// counts[len(buckets)] the rest.
	counts []uint64
	sum    float64
	count  uint64
}

func (r *Registry) register(name, help string, kind Kind, buckets []float64, labels []string) *family {
	if !metricName.MatchString(name) {
		panic(fmt.Sprintf("promtext: invalid metric name %q", name))
	}
	for _, l := range labels {
		if !labelName.MatchString(l) || strings.HasPrefix(l, "__") || (kind == KindHistogram && l == "le") {
			panic(fmt.Sprintf("promtext: invalid label name %q for %s", l, name))
		}
	}
	if kind == KindHistogram {
		if len(buckets) == 0 || !slices.IsSorted(buckets) || slices.Contains(buckets, math.Inf(1)) {
			panic(fmt.Sprintf("promtext: histogram %s needs increasing finite buckets", name))
		}
		for i := 1; i < len(buckets); i++ {
			if buckets[i] == buckets[i-1] {
				panic(fmt.Sprintf("promtext: histogram %s has a repeated bucket %v", name, buckets[i]))
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.families[name]; dup {
		panic(fmt.Sprintf("promtext: metric %s registered twice", name))
	}
	f := &family{
		name: name, help: help, kind: kind,
		labels:  slices.Clone(labels),
		buckets: slices.Clone(buckets),
		series:  make(map[string]*series),
	}
	r.families[name] = f
	return f
}

// with returns the series of the given label values, creating it.
func (f *family) with(values []string) *series {
	if len(values) != len(f.labels) {
		panic(fmt.Sprintf("promtext: %s wants %d label values, got %d", f.name, len(f.labels), len(values)))
	}
	key := strings.Join(values, "\xff")
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.series[key]
	if !ok {
		s = &series{values: slices.Clone(values)}
		if f.kind == KindHistogram {
			s.counts = make([]uint64, len(f.buckets)+1)
		}
		f.series[key] = s
	}
	return s
}

// CounterVec is a counter family.
type CounterVec struct{ f *family }

// Counter is one counter series: a value that only goes up.
type Counter struct {
	f *family
	s *series
}

// Counter registers a counter family with the given label names.
func (r *Registry) Counter(name, help string, labels ...string) *CounterVec {
	return &CounterVec{r.register(name, help, KindCounter, nil, labels)}
}

// With returns the series for label values (in the order of the names).
func (v *CounterVec) With(values ...string) Counter { return Counter{v.f, v.f.with(values)} }

// Inc adds one.
func (c Counter) Inc() { c.Add(1) }

// Add adds d, which must not be negative.
func (c Counter) Add(d float64) {
	if d < 0 || math.IsNaN(d) {
		panic(fmt.Sprintf("promtext: counter %s cannot add %v", c.f.name, d))
	}
	c.f.mu.Lock()
	c.s.value += d
	c.f.mu.Unlock()
}

// Value returns the current value.
func (c Counter) Value() float64 {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	return c.s.value
}

// GaugeVec is a gauge family.
type GaugeVec struct{ f *family }

// Gauge is one gauge series: a value that goes up and down.
type Gauge struct {
	f *family
	s *series
}

// Gauge registers a gauge family with the given label names.
func (r *Registry) Gauge(name, help string, labels ...string) *GaugeVec {
	return &GaugeVec{r.register(name, help, KindGauge, nil, labels)}
}

// With returns the series for label values (in the order of the names).
func (v *GaugeVec) With(values ...string) Gauge { return Gauge{v.f, v.f.with(values)} }

// Set sets the value.
func (g Gauge) Set(x float64) {
	g.f.mu.Lock()
	g.s.value = x
	g.f.mu.Unlock()
}

// Add adds d (which may be negative).
func (g Gauge) Add(d float64) {
	g.f.mu.Lock()
	g.s.value += d
	g.f.mu.Unlock()
}

// Inc adds one.
func (g Gauge) Inc() { g.Add(1) }

// Dec subtracts one.
func (g Gauge) Dec() { g.Add(-1) }

// Value returns the current value.
func (g Gauge) Value() float64 {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	return g.s.value
}

// HistogramVec is a histogram family.
type HistogramVec struct{ f *family }

// Histogram is one histogram series.
type Histogram struct {
	f *family
	s *series
}

// Histogram registers a histogram family with the given upper bucket
// bounds (increasing, finite; +Inf is implied) and label names.
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) *HistogramVec {
	return &HistogramVec{r.register(name, help, KindHistogram, buckets, labels)}
}

// With returns the series for label values (in the order of the names).
func (v *HistogramVec) With(values ...string) Histogram {
	return Histogram{v.f, v.f.with(values)}
}

// Observe records one observation.
func (h Histogram) Observe(x float64) {
	i, _ := slices.BinarySearch(h.f.buckets, x) // first bound ≥ x
	h.f.mu.Lock()
	h.s.counts[i]++
	h.s.sum += x
	h.s.count++
	h.f.mu.Unlock()
}

// Count returns the number of observations.
func (h Histogram) Count() uint64 {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	return h.s.count
}

// WriteTo writes every family in the text exposition format.
func (r *Registry) WriteTo(w io.Writer) (int64, error) {
	r.mu.Lock()
	fams := make([]*family, 0, len(r.families))
	for _, f := range r.families {
		fams = append(fams, f)
	}
	r.mu.Unlock()
	slices.SortFunc(fams, func(a, b *family) int { return strings.Compare(a.name, b.name) })

	cw := &countingWriter{w: bufio.NewWriter(w)}
	for _, f := range fams {
		f.write(cw)
	}
	if err := cw.w.Flush(); err != nil && cw.err == nil {
		cw.err = err
	}
	return cw.n, cw.err
}

// ServeHTTP serves the registry (GET /metrics).
func (r *Registry) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", ContentType)
	_, _ = r.WriteTo(w)
}

type countingWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (c *countingWriter) str(s string) {
	if c.err != nil {
		return
	}
	n, err := c.w.WriteString(s)
	c.n += int64(n)
	c.err = err
}

func (f *family) write(w *countingWriter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.str("# HELP " + f.name + " " + escapeHelp(f.help) + "\n")
	w.str("# TYPE " + f.name + " " + string(f.kind) + "\n")
	keys := make([]string, 0, len(f.series))
	for k := range f.series {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := f.series[k]
		if f.kind != KindHistogram {
			w.str(f.name + labelSet(f.labels, s.values, "", "") + " " + formatFloat(s.value) + "\n")
			continue
		}
		var cum uint64
		for i, b := range f.buckets {
			cum += s.counts[i]
			w.str(f.name + "_bucket" + labelSet(f.labels, s.values, "le", formatFloat(b)) + " " + strconv.FormatUint(cum, 10) + "\n")
		}
		w.str(f.name + "_bucket" + labelSet(f.labels, s.values, "le", "+Inf") + " " + strconv.FormatUint(s.count, 10) + "\n")
		w.str(f.name + "_sum" + labelSet(f.labels, s.values, "", "") + " " + formatFloat(s.sum) + "\n")
		w.str(f.name + "_count" + labelSet(f.labels, s.values, "", "") + " " + strconv.FormatUint(s.count, 10) + "\n")
	}
}

// labelSet renders {a="x",b="y"} plus an optional extra label; "" when
// there are no labels.
func labelSet(names, values []string, extraName, extraValue string) string {
	if len(names) == 0 && extraName == "" {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n + `="` + escapeLabel(values[i]) + `"`)
	}
	if extraName != "" {
		if len(names) > 0 {
			b.WriteByte(',')
		}
		b.WriteString(extraName + `="` + escapeLabel(extraValue) + `"`)
	}
	b.WriteByte('}')
	return b.String()
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
