package oracle

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/contracts/record"
	"github.com/wsconverge/converge/sim/engine/chart"
)

// Lanes of a request's row, top to bottom.
const (
	LaneDoc    = "doc"
	LaneFetch  = "fetch"
	LaneSubmit = "submit"
	LaneRounds = "rounds"
)

// The colours of the oracle page.
var (
	docColours = map[oracle.RequestStatus]string{oracle.StatusEnabled: "#2da44e", oracle.StatusPaused: "#e3b341",
		oracle.StatusDisabled: "#57606a"}
	colourOK, colourFailed, colourRefused = "#2da44e", "#cf222e", "#bc4c00"
	colourRound, colourLife, colourWS     = "#0969da", "#6639ba", "#54aeff"
	colourFault                           = "#d4a72c"
)

// Page is a run with its records kept (Options.Keep) as the shared
// timeline page draws it: the daemon's lifetimes and WebSocket, the fault
// windows, and per request its document's status on the chain, the
// daemon's fetches, its broadcasts and the rounds completed. A violation
// about "r=ID …" is marked on request ID's row.
func Page(system string, res *Result) chart.Page {
	start := Genesis
	end := start.Add(res.SimTime)
	if len(res.Events) > 0 && res.Events[len(res.Events)-1].At.After(end) {
		end = res.Events[len(res.Events)-1].At
	}
	off := func(t time.Time) string { return record.Offset(t.Sub(start)) }
	p := chart.Page{System: system, Seed: res.Seed, Failed: res.Report != nil && len(res.Report.Violations) > 0,
		Start: start, End: end,
		About: "The daemon's row shows its lifetimes and its WebSocket connections; the faults' row each fault window. " +
			"Each request has four lanes: its document's status on the chain, the daemon's fetches (green answered, red failed), " +
			"its broadcasts (green admitted, orange refused with a code, red an RPC error) and the rounds the chain completed.",
		Legend: []chart.Swatch{{Fill: docColours[oracle.StatusEnabled], Name: "doc ENABLED"}, {Fill: docColours[oracle.StatusPaused], Name: "doc PAUSED"},
			{Fill: docColours[oracle.StatusDisabled], Name: "doc DISABLED"}, {Fill: colourOK, Name: "fetch or broadcast ok"},
			{Fill: colourRefused, Name: "broadcast refused"}, {Fill: colourFailed, Name: "failed"}, {Fill: colourRound, Name: "round completed"},
			{Fill: colourFault, Name: "fault window"}},
	}
	daemon := chart.Row{ID: "daemon", Label: system}
	life, ws := chart.Lane{Name: "life"}, chart.Lane{Name: "websocket"}
	var lifeFrom time.Time
	lifeN, wsOpen := 0, map[int64]time.Time{}
	faults := map[string]*chart.Lane{}
	faultOpen := map[string]time.Time{}
	requests := map[uint64]*chart.Row{}
	docStatus := map[uint64]*chart.Segment{}
	row := func(id uint64) *chart.Row {
		r := requests[id]
		if r == nil {
			r = &chart.Row{ID: subjectOf(id), Label: "request " + strconv.FormatUint(id, 10),
				Lanes: []chart.Lane{{Name: LaneDoc}, {Name: LaneFetch}, {Name: LaneSubmit}, {Name: LaneRounds}}}
			requests[id] = r
		}
		return r
	}
	point := func(r *chart.Row, lane int, at time.Time, value, fill, title string) {
		r.Lanes[lane].Segments = append(r.Lanes[lane].Segments, chart.Segment{From: at, To: at, Value: value, Fill: fill, Title: title, MinWidth: 2})
	}
	setDoc := func(id uint64, status oracle.RequestStatus, at time.Time) {
		cur := docStatus[id]
		if cur != nil && cur.Value == status.String() {
			return
		}
		r := row(id)
		if cur != nil {
			cur.To = at
			r.Lanes[0].Segments = append(r.Lanes[0].Segments, *cur)
		}
		fill, ok := docColours[status]
		if !ok {
			fill = "#8c959f"
		}
		docStatus[id] = &chart.Segment{From: at, Value: status.String(), Fill: fill}
	}
	for i := range res.Events {
		e := &res.Events[i]
		switch {
		case e.Proc != nil:
			switch e.Proc.Action {
			case history.ProcStart:
				lifeN++
				lifeFrom = e.At
			case history.ProcExit:
				life.Segments = append(life.Segments, chart.Segment{From: lifeFrom, To: e.At, Value: "life " + strconv.Itoa(lifeN), Fill: colourLife,
					Title: fmt.Sprintf("life %d: %s – %s, %s", lifeN, off(lifeFrom), off(e.At), e.Proc.ExitText())})
				lifeFrom = time.Time{}
			case history.ProcSignal, history.ProcTrace:
				what := e.Proc.Signal
				if e.Proc.Action == history.ProcTrace {
					what = "a Go trace: " + e.Proc.Output
				}
				daemon.Marks = append(daemon.Marks, chart.Mark{At: e.At, Class: "crash", Title: fmt.Sprintf("#%d %s %s", e.Seq, off(e.At), what)})
			}
		case e.WS != nil && e.WS.Action == history.WSConnect:
			wsOpen[e.WS.Conn] = e.At
		case e.WS != nil && e.WS.Action == history.WSClose:
			if from, ok := wsOpen[e.WS.Conn]; ok {
				ws.Segments = append(ws.Segments, chart.Segment{From: from, To: e.At, Value: "connected", Fill: colourWS,
					Title: fmt.Sprintf("connection %d: %s – %s, closed by the %s", e.WS.Conn, off(from), off(e.At), e.WS.By)})
				delete(wsOpen, e.WS.Conn)
			}
		case e.Fault != nil:
			f := e.Fault
			l := faults[f.ID]
			if l == nil {
				l = &chart.Lane{Name: f.ID}
				faults[f.ID] = l
			}
			key := f.ID + " " + f.Target
			switch f.Phase {
			case history.FaultStart:
				faultOpen[key] = e.At
			case history.FaultEnd:
				if from, ok := faultOpen[key]; ok {
					l.Segments = append(l.Segments, chart.Segment{From: from, To: e.At, Value: f.ID, Fill: colourFault, MinWidth: 2,
						Title: fmt.Sprintf("%s %s: %s – %s", f.ID, faultText(f), off(from), off(e.At))})
					delete(faultOpen, key)
				}
			default:
				l.Segments = append(l.Segments, chart.Segment{From: e.At, To: e.At, Value: f.ID, Fill: colourFault, MinWidth: 2,
					Title: fmt.Sprintf("#%d %s %s %s", e.Seq, off(e.At), f.ID, faultText(f))})
			}
		case e.Src != nil && e.Src.Phase == history.PhaseDone:
			s := e.Src
			fill, what := colourFailed, fmt.Sprintf("status %d", s.Status)
			switch {
			case s.Aborted:
				what = "aborted by the daemon"
			case s.Class == "ok":
				fill, what = colourOK, "answered "+s.Body
			default:
				what += " (" + s.Class + ")"
			}
			point(row(s.RequestID), 1, e.At, s.Class, fill, fmt.Sprintf("#%d %s GET endpoint %d: %s", e.Seq, off(e.At), s.Endpoint, what))
		case e.CheckTx != nil && e.CheckTx.Origin == history.OriginSUT:
			c := e.CheckTx
			for _, m := range c.Tx.Msgs {
				if m.Type != oracle.TypeURLSubmit {
					continue
				}
				fill, what := colourOK, "admitted"
				switch {
				case c.RPCError != "":
					fill, what = colourFailed, "RPC error "+c.RPCError
				case c.Code != 0:
					fill, what = colourRefused, fmt.Sprintf("code %d %s", c.Code, c.Log)
				}
				point(row(m.RequestID), 2, e.At, what, fill, fmt.Sprintf("#%d %s broadcast of nonce %d (sequence %d): %s", e.Seq, off(e.At), m.Nonce, c.Tx.Sequence, what))
			}
		case e.Block != nil:
			for _, c := range e.Block.Completes {
				point(row(c.RequestID), 3, e.At, "complete", colourRound, fmt.Sprintf("#%d %s round %d completed at height %d: %s", e.Seq, off(e.At), c.Nonce, c.BlockHeight, c.RawData))
			}
		case e.Deliver != nil && e.Deliver.Code == 0:
			for _, d := range e.Deliver.Docs {
				setDoc(d.RequestID, oracle.RequestStatus(d.Status), e.At)
			}
		}
	}
	if !lifeFrom.IsZero() {
		life.Segments = append(life.Segments, chart.Segment{From: lifeFrom, To: end, Value: "life " + strconv.Itoa(lifeN), Fill: colourLife,
			Title: fmt.Sprintf("life %d: %s – the end", lifeN, off(lifeFrom))})
	}
	for conn, from := range wsOpen {
		ws.Segments = append(ws.Segments, chart.Segment{From: from, To: end, Value: "connected", Fill: colourWS,
			Title: fmt.Sprintf("connection %d: %s – the end", conn, off(from))})
	}
	sort.Slice(ws.Segments, func(i, j int) bool { return ws.Segments[i].From.Before(ws.Segments[j].From) })
	daemon.Lanes = []chart.Lane{life, ws}
	p.Top = append(p.Top, daemon)
	if len(faults) > 0 {
		fr := chart.Row{ID: "faults", Label: "faults"}
		ids := make([]string, 0, len(faults))
		for id := range faults {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return faultOrder(ids[i]) < faultOrder(ids[j]) })
		for _, id := range ids {
			l := faults[id]
			for key, from := range faultOpen {
				if strings.HasPrefix(key, id+" ") {
					l.Segments = append(l.Segments, chart.Segment{From: from, To: end, Value: id, Fill: colourFault,
						Title: fmt.Sprintf("%s: %s – the end", key, off(from))})
				}
			}
			sort.SliceStable(l.Segments, func(i, j int) bool { return l.Segments[i].From.Before(l.Segments[j].From) })
			fr.Lanes = append(fr.Lanes, *l)
		}
		p.Top = append(p.Top, fr)
	}
	ids := make([]uint64, 0, len(requests))
	for id := range requests {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		r := requests[id]
		if cur := docStatus[id]; cur != nil {
			cur.To = end
			r.Lanes[0].Segments = append(r.Lanes[0].Segments, *cur)
		}
		p.Rows = append(p.Rows, *r)
	}
	if res.Report != nil {
		for _, v := range res.Report.Violations {
			row, _, _ := strings.Cut(v.Subject, " ") // "r=ID n=N": request ID's row
			cv := chart.Violation{Subject: row, At: v.At, Text: v.String()}
			for _, seq := range v.Evidence {
				if seq >= 1 && int(seq) <= len(res.Events) {
					cv.Evidence = append(cv.Evidence, ">> "+history.Line(res.Events[seq-1], start))
				}
			}
			p.Violations = append(p.Violations, cv)
		}
	}
	return p
}

// subjectOf is the subject the oracle checkers give request id ("r=ID").
func subjectOf(id uint64) string { return "r=" + strconv.FormatUint(id, 10) }

// faultText is a fault's target and parameters.
func faultText(f *history.Fault) string {
	var b strings.Builder
	b.WriteString(f.Target)
	for _, p := range f.Params {
		fmt.Fprintf(&b, " %s=%s", p.Key, p.Value)
	}
	return strings.TrimSpace(b.String())
}

// faultOrder sorts fault ids F1 … F18 by number.
func faultOrder(id string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "F"))
	if err != nil {
		return 1 << 20
	}
	return n
}
