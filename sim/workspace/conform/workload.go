package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/history"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// apiInstance names the API in the history, as the simulator does.
const apiInstance = "api"

// workload drives the implementation through its own SPEC 4.3 HTTP API,
// as the configured users and the administrator: actions drawn from the
// seed by the simulator's generator (wssim.DrawAction), the API's bad
// inputs, and limit races (concurrent requests, for real).
type workload struct {
	r    *run
	src  wssim.Source
	rng  *rand.Rand
	http *http.Client
	next int

	mu  sync.Mutex
	ids []string // workspaces created, in order
	own map[string]User
	// toured is the tour's workspace while the tour takes it round: the
	// drawn actions leave it alone, so that a drawn deletion or change of
	// mind never cuts the tour short of its read-backs.
	toured string
}

func newWorkload(r *run) *workload {
	seed := wssim.SubSeed(r.cfg.Seed, streamWorkload)
	return &workload{r: r, src: wssim.NewSource(seed), rng: rand.New(rand.NewPCG(seed, 25)),
		http: &http.Client{Timeout: 15 * time.Second}, own: map[string]User{}}
}

// answer is one HTTP answer.
type answer struct {
	status int
	body   map[string]any
	err    error
}

func (a answer) code() string {
	if a.err != nil {
		return "transport: " + a.err.Error()
	}
	if e, ok := a.body["error"].(map[string]any); ok {
		return fmt.Sprintf("%d %v", a.status, e["code"])
	}
	return strconv.Itoa(a.status)
}

// do sends one request to a running instance (round robin; a transport
// error moves on to the next one, as a load balancer would).
func (w *workload) do(ctx context.Context, method, path, token, ctype string, body []byte) answer {
	var last answer
	for range len(w.r.instances) {
		w.mu.Lock()
		in := w.r.instances[w.next%len(w.r.instances)]
		w.next++
		w.mu.Unlock()
		if !in.running() {
			continue
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, in.url()+"/api/v1"+path, rd)
		if err != nil {
			return answer{err: err}
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := w.http.Do(req)
		if err != nil {
			last = answer{err: err}
			if ctx.Err() != nil {
				return last
			}
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		a := answer{status: resp.StatusCode}
		_ = json.Unmarshal(b, &a.body)
		w.r.mu.Lock()
		w.r.apiCalls++
		w.r.statuses[a.status]++
		w.r.mu.Unlock()
		return a
	}
	if last.err == nil {
		last.err = fmt.Errorf("no instance is running")
	}
	return last
}

func (w *workload) record(method, id, args string, a answer, ok bool) {
	e := history.Event{Kind: history.KindAPI, Instance: apiInstance, Workspace: id, Method: method, Args: args}
	if ok {
		e.Result = a.code()
	} else {
		e.Err = a.code()
	}
	w.r.add(e)
}

func jsonBody(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// create POSTs a workspace for u; desired "" leaves the default.
func (w *workload) create(ctx context.Context, u User, name string, desired contracts.DesiredState) {
	body := map[string]any{"name": name, "image_ref": w.r.cfg.Image}
	args := "user=" + u.Name + " name=" + name + " image=" + w.r.cfg.Image
	if desired != "" {
		body["desired_state"] = string(desired)
		args += " desired=" + string(desired)
	}
	a := w.do(ctx, http.MethodPost, "/workspaces", u.Token, "application/json", jsonBody(body))
	id, _ := a.body["id"].(string)
	ok := a.status == http.StatusCreated && id != ""
	w.record(wsjudge.MAPICreate, id, args, a, ok)
	if ok {
		w.mu.Lock()
		w.ids = append(w.ids, id)
		w.own[id] = u
		w.mu.Unlock()
		w.r.users.add(id, u)
	}
}

func (w *workload) pick(n int) (string, User, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ids) == 0 {
		return "", User{}, false
	}
	id := w.ids[n%len(w.ids)]
	return id, w.own[id], true
}

// pickDrawn is pick for a drawn action: among the workspaces other than
// the one the tour is taking round.
func (w *workload) pickDrawn(n int) (string, User, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := w.ids
	if w.toured != "" {
		ids = make([]string, 0, len(w.ids))
		for _, id := range w.ids {
			if id != w.toured {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return "", User{}, false
	}
	id := ids[n%len(ids)]
	return id, w.own[id], true
}

func (w *workload) desire(ctx context.Context, pick int, d contracts.DesiredState) {
	id, u, ok := w.pickDrawn(pick)
	if !ok {
		return
	}
	a := w.do(ctx, http.MethodPatch, "/workspaces/"+id, u.Token, "application/json", jsonBody(map[string]any{"desired_state": string(d)}))
	w.record("api.Patch", id, "user="+u.Name+" desired="+string(d), a, a.status == http.StatusOK)
}

func (w *workload) remove(ctx context.Context, pick int) {
	id, u, ok := w.pickDrawn(pick)
	if !ok {
		return
	}
	a := w.do(ctx, http.MethodDelete, "/workspaces/"+id, u.Token, "", nil)
	w.record("api.Delete", id, "user="+u.Name, a, a.status == http.StatusAccepted)
}

// recover asks the administrator to recover a workspace: one in ERROR
// when there is one (not the tour's), else the pick (answered 409).
func (w *workload) recover(ctx context.Context, pick int) {
	id, _, ok := w.pickDrawn(pick)
	if !ok {
		return
	}
	if rows, err := w.r.rows(ctx); err == nil {
		w.mu.Lock()
		for _, row := range rows {
			if _, mine := w.own[row.ID]; mine && row.ID != w.toured && row.HealthStatus == contracts.HealthError && !row.Deleted() {
				id = row.ID
				break
			}
		}
		w.mu.Unlock()
	}
	dataLost := false
	if row, err := w.r.sb.store.Get(ctx, id); err == nil && row.ErrorInfo != nil && row.ErrorInfo.Reason == contracts.ReasonDataLost {
		dataLost = true
	}
	adm := w.r.cfg.Admin
	a := w.do(ctx, http.MethodPost, "/workspaces/"+id+":recover", adm.Token, "application/json", []byte("{}"))
	w.record("api.Recover", id, "admin="+adm.Name, a, a.status == http.StatusOK)
	if a.status == http.StatusOK && dataLost {
		// The administrator's recovery of a DataLost workspace
		// acknowledges the loss: from then on the user is owed only
		// what they read or write again (as the simulator's model).
		w.r.users.forget(id)
		w.r.add(history.Event{Kind: history.KindUser, Instance: apiInstance, Workspace: id, Method: "user.data-loss-acknowledged"})
	}
}

// race sends n+1 concurrent POSTs asking for RUNNING as one user: a
// limit race on the real system.
func (w *workload) race(ctx context.Context, pick, n int) {
	u := w.r.cfg.Users[pick%len(w.r.cfg.Users)]
	var wg sync.WaitGroup
	for i := range n + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.create(ctx, u, fmt.Sprintf("race-%d-%d", pick, i), contracts.DesiredRunning)
		}()
	}
	wg.Wait()
}

// badInputs sends the API's bad inputs (SPEC 4.3) and reports any
// answer other than the status the clause gives.
func (w *workload) badInputs(ctx context.Context) {
	u, adm := w.r.cfg.Users[0], w.r.cfg.Admin
	id, _, ok := w.pick(0)
	if !ok {
		id = "00000000-0000-4000-8000-000000000000"
	}
	big := `{"name":"` + strings.Repeat("x", 70000) + `","image_ref":"i"}`
	cases := []struct {
		what, method, path, token, ctype, body string
		want                                   int
	}{
		{"body not application/json", "POST", "/workspaces", u.Token, "text/plain", `{"name":"a","image_ref":"i"}`, 415},
		{"unknown member", "POST", "/workspaces", u.Token, "application/json", `{"name":"a","image_ref":"i","colour":1}`, 400},
		{"desired_state ERROR", "POST", "/workspaces", u.Token, "application/json", `{"name":"a","image_ref":"i","desired_state":"ERROR"}`, 400},
		{"name with a NUL", "POST", "/workspaces", u.Token, "application/json", `{"name":"a\u0000b","image_ref":"i"}`, 400},
		{"standby_ttl_seconds 0", "POST", "/workspaces", u.Token, "application/json", `{"name":"a","image_ref":"i","standby_ttl_seconds":0}`, 400},
		{"body over 65,536 bytes", "POST", "/workspaces", u.Token, "application/json", big, 413},
		{"no token", "GET", "/workspaces", "", "", "", 401},
		{"unknown token", "GET", "/workspaces", "not-a-token", "", "", 401},
		{"id not a UUID", "GET", "/workspaces/not-a-uuid", u.Token, "", "", 404},
		{"desired_state of the wrong type", "PATCH", "/workspaces/" + id, u.Token, "application/json", `{"desired_state":5}`, 400},
		{"recovery without the admin role", "POST", "/workspaces/" + id + ":recover", u.Token, "application/json", "{}", 403},
		{"admin listing with a bad query", "GET", "/admin/workspaces?health=MAYBE", adm.Token, "", "", 400},
	}
	for _, c := range cases {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		a := w.do(ctx, c.method, c.path, c.token, c.ctype, body)
		w.record("api.BadInput", "", c.what, a, a.status == c.want)
		if a.err == nil && a.status != c.want && a.status != http.StatusServiceUnavailable {
			w.r.problem("SPEC 4.3: %s (%s %s) answered %d, want %d", c.what, c.method, c.path, a.status, c.want)
		}
	}
}

// run drives the workload until ctx ends: the creations, the bad inputs,
// then actions drawn from the seed every 1 to 4 s.
func (w *workload) run(ctx context.Context) {
	users := w.r.cfg.Users
	for i := range w.r.cfg.Workspaces {
		a := wssim.DrawAction(w.src, wssim.UserCreate)
		d := a.Desired
		if d == contracts.DesiredRunning && w.rng.IntN(2) == 0 {
			d = "" // the default, RUNNING
		}
		w.create(ctx, users[i%len(users)], "cf-"+strconv.Itoa(i+1), d)
	}
	w.badInputs(ctx)
	if id, u, ok := w.pick(0); ok {
		w.mu.Lock()
		w.toured = id
		w.mu.Unlock()
		go w.tour(ctx, id, u)
	}
	go w.r.users.loop(ctx, w)
	kinds := []wssim.Kind{wssim.UserDesire, wssim.UserDesire, wssim.UserDesire, wssim.UserDesire, wssim.UserDesire,
		wssim.UserDesire, wssim.AdminRecover, wssim.UserDelete, wssim.FaultAPIRace, wssim.UserCreate}
	created := w.r.cfg.Workspaces
	for {
		pause := time.Duration(1000+w.rng.IntN(3000)) * time.Millisecond
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C: // the workload's own pace, drawn from the seed
		}
		k := wssim.DrawKind(w.src, "workload kind", kinds)
		a := wssim.DrawAction(w.src, k)
		switch k {
		case wssim.UserDesire:
			w.desire(ctx, a.Pick, a.Desired)
		case wssim.AdminRecover:
			w.recover(ctx, a.Pick)
		case wssim.UserDelete:
			if w.rng.IntN(2) == 0 { // deletions are rarer than the rest
				w.remove(ctx, a.Pick)
			}
		case wssim.FaultAPIRace:
			if created < 3*w.r.cfg.Workspaces {
				created += a.N + 1
				w.race(ctx, a.Pick, a.N)
			}
		case wssim.UserCreate:
			if created < 3*w.r.cfg.Workspaces {
				created++
				w.create(ctx, users[(a.N-1+len(users))%len(users)], "cf-"+strconv.Itoa(created), a.Desired)
			}
		}
	}
}

// tour takes the first workspace (id, of u) through every operation, so
// that each is exercised whatever the draws (asking for RUNNING first,
// whatever it was created with): RUNNING → PENDING (STOPPING, then
// ARCHIVING), → RUNNING (RESTORING, STARTING), → STANDBY, then DELETE.
// Until it returns the drawn actions leave id alone (pickDrawn); its
// user's visits (users.loop) and the faults do not.
// When an object fault is aimed at its archive (Fault.Archived), the tour
// goes round once more (→ PENDING, → RUNNING) and the fault strikes only
// in that second ARCHIVED: the first round's restore and read-back stay
// whole, so the run reads its users' bytes back whatever the schedule.
func (w *workload) tour(ctx context.Context, id string, u User) {
	defer func() {
		w.mu.Lock()
		w.toured = ""
		w.mu.Unlock()
	}()
	type step struct {
		desired contracts.DesiredState
		display string
	}
	steps := []step{{contracts.DesiredRunning, "RUNNING"}, {contracts.DesiredPending, "ARCHIVED"}, {contracts.DesiredRunning, "RUNNING"}, {contracts.DesiredStandby, "STANDBY"}}
	aimedAt := -1 // the step at which the aimed faults strike
	if w.r.hasArmed() {
		aimedAt = len(steps)
		steps = append(steps, step{contracts.DesiredPending, "ARCHIVED"}, step{contracts.DesiredRunning, "RUNNING"})
	}
	// damaged: a fault aimed at the archived workspace (Fault.Archived)
	// damaged its archive, so its restore must end in ERROR with reason
	// DataLost (SPEC 1.5), after which the tour can only delete it.
	damaged := false
steps:
	for i, st := range steps {
		if st.desired != "" && !w.until(ctx, func() bool {
			a := w.do(ctx, http.MethodPatch, "/workspaces/"+id, u.Token, "application/json", jsonBody(map[string]any{"desired_state": string(st.desired)}))
			w.record("api.Patch", id, "user="+u.Name+" desired="+string(st.desired), a, a.status == http.StatusOK)
			return a.status == http.StatusOK
		}) {
			return
		}
		if st.desired == contracts.DesiredPending {
			// The user keeps working while it stops.
			w.r.users.workUntilStopped(ctx, id)
		}
		inError := false
		if !w.until(ctx, func() bool {
			a := w.do(ctx, http.MethodGet, "/workspaces/"+id, u.Token, "", nil)
			inError = damaged && a.body["display_state"] == "ERROR"
			return inError || a.body["display_state"] == st.display && a.body["operation"] == "NONE"
		}) {
			return
		}
		switch {
		case inError:
			w.r.note("tour", id+" entered ERROR after its archive was damaged; the tour deletes it")
			break steps
		case st.display == "RUNNING":
			// The user works while it runs (writing, and reading back
			// what they wrote before it was archived and restored).
			w.r.users.tryVisit(ctx, w, id, 20)
		default:
			w.r.users.markAway(id, st.display)
		}
		if i == aimedAt {
			// Strike the faults aimed at an archived workspace before
			// its user asks for it back.
			damaged = w.r.strikeArchived(ctx, id)
		}
	}
	w.until(ctx, func() bool {
		a := w.do(ctx, http.MethodDelete, "/workspaces/"+id, u.Token, "", nil)
		w.record("api.Delete", id, "user="+u.Name, a, a.status == http.StatusAccepted)
		return a.status == http.StatusAccepted || a.status == http.StatusNotFound
	})
}

// until polls cond every half second until it holds or ctx ends.
func (w *workload) until(ctx context.Context, cond func() bool) bool {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}
