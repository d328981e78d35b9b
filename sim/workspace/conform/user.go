package conform

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/archive"
	"github.com/wsconverge/converge/contracts/history"
	wsjudge "github.com/wsconverge/converge/judge/workspace"
	wssim "github.com/wsconverge/converge/sim/workspace"
)

// The users' data: each workspace's owner writes files under userDir
// through the workspace agent (cmd/workspace-agent: PUT and GET
// /files/{path}) while the API shows the workspace RUNNING, and reads
// them back when it comes back after being away (stopped, archived,
// restored, its container replaced). Only files under userDir are the
// user's: whatever else a volume holds (the image's skeleton, the agent's
// probe files) is not judged.
const (
	userDir = "conform-user/"
	// agentPort is the workspace agent's port in its container (its
	// AGENT_ADDR default).
	agentPort = "8080/tcp"
	// agentTempPrefix names the agent's own temporary files (an upload
	// cut short by a kill leaves one beside its target).
	agentTempPrefix = ".converge-agent-"
	streamUsers     = 2503
)

var userPaths = [...]string{userDir + "notes.md", userDir + "src/main.go", userDir + "data/results.csv"}

// fileState is what a user knows of one file: the last write the agent
// acknowledged (want, has), the writes sent since whose answer never came
// (alts: any of them may have landed), or nothing at all (any: the user
// acknowledged a data loss, or the volume was destroyed with no archive).
type fileState struct {
	want []byte
	has  bool
	alts [][]byte
	any  bool
}

// accepts reports whether the file as found (found false: absent) is
// what the user may find.
func (f *fileState) accepts(got []byte, found bool) bool {
	switch {
	case f.any:
		return true
	case !found:
		return !f.has
	case f.has && bytes.Equal(got, f.want):
		return true
	}
	for _, a := range f.alts {
		if bytes.Equal(got, a) {
			return true
		}
	}
	return false
}

// users is the durability model: for each workspace, what its user wrote.
type users struct {
	r    *run
	http *http.Client

	mu        sync.Mutex
	model     map[string]map[string]*fileState
	ws        map[string]*userWS
	destroyed map[string]bool // archive keys whose object or .meta a fault hit
}

// userWS is one workspace's user.
type userWS struct {
	mu  sync.Mutex
	id  string
	u   User
	rng *rand.Rand
	// ctr is the container the user last reached; away what the API
	// showed since (a display state other than RUNNING).
	ctr    string
	addr   string
	away   string
	writes int
	gone   bool
}

func newUsers(r *run) *users {
	return &users{r: r, http: &http.Client{Timeout: 5 * time.Second}, model: map[string]map[string]*fileState{},
		ws: map[string]*userWS{}, destroyed: map[string]bool{}}
}

func (us *users) add(id string, u User) {
	us.mu.Lock()
	defer us.mu.Unlock()
	if _, ok := us.ws[id]; ok {
		return
	}
	seed := wssim.SubSeed(us.r.cfg.Seed, streamUsers)
	us.ws[id] = &userWS{id: id, u: u, rng: rand.New(rand.NewPCG(seed, uint64(len(us.ws))))}
}

func (us *users) get(id string) *userWS {
	us.mu.Lock()
	defer us.mu.Unlock()
	return us.ws[id]
}

func (us *users) ids() []string {
	us.mu.Lock()
	defer us.mu.Unlock()
	out := make([]string, 0, len(us.ws))
	for id := range us.ws {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// state returns the model of path in id, created empty.
func (us *users) state(id, p string) *fileState {
	m := us.model[id]
	if m == nil {
		m = map[string]*fileState{}
		us.model[id] = m
	}
	f := m[p]
	if f == nil {
		f = &fileState{}
		m[p] = f
	}
	return f
}

// forget makes every file of id's model unknown: nothing of it is owed
// until the user reads or writes it again.
func (us *users) forget(id string) {
	us.mu.Lock()
	defer us.mu.Unlock()
	for _, f := range us.model[id] {
		*f = fileState{any: true}
	}
}

// volumeLost: a fault destroyed id's volume; what is owed is what the
// archive at key holds (as the simulator's model: SPEC C12 promises the
// data in the volume, or in the archive once the volume is gone), or
// nothing when it has none or it cannot be read.
func (us *users) volumeLost(ctx context.Context, id, key string) {
	var files map[string][]byte
	var err error
	if key != "" {
		files, err = us.r.readArchive(ctx, key)
	}
	us.mu.Lock()
	defer us.mu.Unlock()
	for p, f := range us.model[id] {
		if key == "" || err != nil {
			*f = fileState{any: true}
			continue
		}
		b, ok := files[p]
		*f = fileState{want: b, has: ok}
	}
}

// workUntilStopped is the user who keeps working while their workspace
// is being stopped: after the stop was requested, write every 20 ms
// while the agent answers (at most 500 writes: an editor saving as the
// user types). Every write it acknowledges
// is owed: SPEC 5.3 has the container stopped before the volume is
// archived, so nothing the agent acknowledged can be missing from the
// archive (docs/decisions/workspaces-conform.md, DR441).
func (us *users) workUntilStopped(ctx context.Context, id string) {
	w := us.get(id)
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// The agent the user was just working with: looking it up again
	// could come after the container is gone.
	addr := w.addr
	if addr == "" {
		return
	}
	for n := 0; n < 500 && ctx.Err() == nil; n++ {
		if !us.write1(ctx, w, addr, userPaths[n%len(userPaths)]) {
			us.note(w, "user.stopped", "", fmt.Sprintf("after %d writes while stopping", n), "")
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// markAway notes that the user saw id in display state d.
func (us *users) markAway(id, d string) {
	if w := us.get(id); w != nil {
		w.mu.Lock()
		w.away = d
		w.mu.Unlock()
	}
}

// tryVisit visits id up to tries times, half a second apart, until the
// user reaches its agent.
func (us *users) tryVisit(ctx context.Context, wl *workload, id string, tries int) bool {
	for range tries {
		if us.visit(ctx, wl, id, true) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(500 * time.Millisecond):
		}
	}
	return false
}

// loop has every user visit each of their workspaces about every two
// seconds until ctx ends, writing on about half of the visits.
func (us *users) loop(ctx context.Context, wl *workload) {
	rng := rand.New(rand.NewPCG(wssim.SubSeed(us.r.cfg.Seed, streamUsers), 1))
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(1500+rng.IntN(1000)) * time.Millisecond):
		}
		for _, id := range us.ids() {
			if ctx.Err() != nil {
				return
			}
			us.visit(ctx, wl, id, rng.IntN(2) == 0)
		}
	}
}

func (us *users) destroy(key string) {
	us.mu.Lock()
	us.destroyed[strings.TrimSuffix(key, ".meta")] = true
	us.mu.Unlock()
}

// note records a user action outside the API.
func (us *users) note(w *userWS, method, args, result, errText string) {
	us.r.add(history.Event{Kind: history.KindUser, Instance: w.u.Name, Workspace: w.id, Method: method, Args: args, Result: result, Err: errText})
}

// visit is the user's look at workspace id: when the API shows it
// RUNNING at rest, reach the agent, read the data back if the user was
// away since the last visit (or the container changed), then write.
// It reports whether the user reached the agent.
func (us *users) visit(ctx context.Context, wl *workload, id string, write bool) bool {
	w := us.get(id)
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone {
		return false
	}
	a := wl.do(ctx, http.MethodGet, "/workspaces/"+id, w.u.Token, "", nil)
	switch {
	case a.err != nil:
		return false
	case a.status == http.StatusNotFound:
		w.gone = true
		return false
	case a.status != http.StatusOK:
		return false
	}
	display, _ := a.body["display_state"].(string)
	if display != "RUNNING" || a.body["operation"] != "NONE" {
		if display != "" && display != "RUNNING" {
			w.away = display
		}
		return false
	}
	addr, ctr, err := agentAddr(ctx, id)
	if err != nil {
		us.note(w, "user.connect", "", "", err.Error())
		return false
	}
	if w.ctr != "" && ctr != w.ctr && w.away == "" {
		w.away = "container replaced"
	}
	if w.away != "" || w.ctr == "" {
		if !us.verify(ctx, w, addr) {
			return false
		}
		w.away = ""
	}
	w.ctr, w.addr = ctr, addr
	if write {
		us.write(ctx, w, addr)
	}
	return true
}

// verify reads back every file the model knows through the agent and
// records a user.verify event: Err when a file is not what the user may
// find. A file read back becomes what the user knows. It reports false
// (and records no verification) when the agent cannot be reached.
func (us *users) verify(ctx context.Context, w *userWS, addr string) bool {
	us.mu.Lock()
	var paths []string
	for p := range us.model[w.id] {
		paths = append(paths, p)
	}
	us.mu.Unlock()
	if len(paths) == 0 {
		return true
	}
	sort.Strings(paths)
	got := map[string][]byte{}
	for _, p := range paths {
		b, found, err := us.agentGet(ctx, addr, p)
		if err != nil {
			us.note(w, "user.connect", "", "", err.Error())
			return false
		}
		if found {
			got[p] = b
		}
	}
	us.mu.Lock()
	var diffs []string
	for _, p := range paths {
		f := us.state(w.id, p)
		b, found := got[p]
		if !f.accepts(b, found) {
			switch {
			case !found:
				diffs = append(diffs, fmt.Sprintf("%s missing (%d bytes acknowledged)", p, len(f.want)))
			case !f.has:
				diffs = append(diffs, fmt.Sprintf("%s holds %d bytes never written", p, len(b)))
			default:
				diffs = append(diffs, fmt.Sprintf("%s differs from the last acknowledged write (%d bytes written, %d read)", p, len(f.want), len(b)))
			}
			continue
		}
		*f = fileState{want: b, has: found}
	}
	us.mu.Unlock()
	args := "after " + w.away
	if w.away == "" {
		args = "first visit"
	}
	if len(diffs) > 0 {
		us.note(w, wsjudge.UserVerify, args, "", strings.Join(diffs, "; "))
	} else {
		us.note(w, wsjudge.UserVerify, args, strconv.Itoa(len(got))+" files as written", "")
	}
	return true
}

// write overwrites one or two of the user's files with seeded content.
// An acknowledged write is owed; one without an acknowledgment may or may
// not have landed.
func (us *users) write(ctx context.Context, w *userWS, addr string) {
	n := 1 + w.rng.IntN(2)
	for range n {
		if !us.write1(ctx, w, addr, userPaths[w.rng.IntN(len(userPaths))]) {
			return
		}
	}
}

// write1 overwrites file p with seeded content; it reports whether the
// agent acknowledged the write.
func (us *users) write1(ctx context.Context, w *userWS, addr, p string) bool {
	w.writes++
	var b bytes.Buffer
	fmt.Fprintf(&b, "workspace %s, %s, write %d\n", w.id, p, w.writes)
	for range 20 + w.rng.IntN(200) {
		fmt.Fprintf(&b, "%016x\n", w.rng.Uint64())
	}
	data := b.Bytes()
	err := us.agentPut(ctx, addr, p, data)
	us.mu.Lock()
	f := us.state(w.id, p)
	if err == nil {
		f.want, f.has, f.any = data, true, false
	} else {
		f.alts = append(f.alts, data)
	}
	us.mu.Unlock()
	if err != nil {
		us.note(w, "user.write", p, "", err.Error())
		return false
	}
	us.note(w, "user.write", p, strconv.Itoa(len(data))+" bytes acknowledged", "")
	return true
}

func (us *users) agentPut(ctx context.Context, addr, p string, data []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+addr+"/files/"+p, bytes.NewReader(data))
	if err != nil {
		return err
	}
	resp, err := us.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("agent: PUT %s: %d %s", p, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

func (us *users) agentGet(ctx context.Context, addr, p string) ([]byte, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/files/"+p, nil)
	if err != nil {
		return nil, false, err
	}
	resp, err := us.http.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	switch {
	case err != nil:
		return nil, false, err
	case resp.StatusCode == http.StatusNotFound:
		return nil, false, nil
	case resp.StatusCode != http.StatusOK:
		return nil, false, fmt.Errorf("agent: GET %s: %d %s", p, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return body, true, nil
}

// agentAddr is where the agent of workspace id's container answers: its
// published agent port, else the container's address on its network;
// and the container's id.
func agentAddr(ctx context.Context, id string) (addr, ctr string, err error) {
	out, err := exec.CommandContext(ctx, "docker", "inspect", "--type", "container", contracts.ContainerName(id)).Output()
	if err != nil {
		return "", "", fmt.Errorf("inspect %s: %w", contracts.ContainerName(id), err)
	}
	var info []struct {
		ID    string `json:"Id"`
		State struct {
			Running bool `json:"Running"`
		} `json:"State"`
		NetworkSettings struct {
			Ports    map[string][]struct{ HostIP, HostPort string } `json:"Ports"`
			Networks map[string]struct {
				IPAddress string `json:"IPAddress"`
			} `json:"Networks"`
		} `json:"NetworkSettings"`
	}
	if err := json.Unmarshal(out, &info); err != nil || len(info) != 1 {
		return "", "", fmt.Errorf("inspect %s: %v", contracts.ContainerName(id), err)
	}
	c := info[0]
	if !c.State.Running {
		return "", "", fmt.Errorf("%s is not running", contracts.ContainerName(id))
	}
	for _, b := range c.NetworkSettings.Ports[agentPort] {
		if b.HostPort == "" {
			continue
		}
		host := b.HostIP
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		return net.JoinHostPort(host, b.HostPort), c.ID, nil
	}
	for _, n := range c.NetworkSettings.Networks {
		if n.IPAddress != "" {
			return net.JoinHostPort(n.IPAddress, strings.TrimSuffix(agentPort, "/tcp")), c.ID, nil
		}
	}
	return "", "", fmt.Errorf("%s publishes no agent port and has no address", contracts.ContainerName(id))
}

// userFiles keeps the user's own files of a volume's or an archive's.
func userFiles(all map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for p, b := range all {
		if strings.HasPrefix(p, userDir) && !strings.HasPrefix(path.Base(p), agentTempPrefix) {
			out[p] = b
		}
	}
	return out
}

// readArchive reads the archive at key from the bucket as a restore
// would (SPEC 5.3): the archive and its .meta must exist, the checksum
// and any declared bytes and entries must match, and it must unpack. A
// corrupt or missing archive is an error, never an empty one.
func (r *run) readArchive(ctx context.Context, key string) (map[string][]byte, error) {
	get := func(k string) ([]byte, error) {
		obj, err := r.sb.s3.GetObject(ctx, r.sb.bucket, k, minio.GetObjectOptions{})
		if err != nil {
			return nil, err
		}
		defer obj.Close()
		b, err := io.ReadAll(obj)
		var er minio.ErrorResponse
		if errors.As(err, &er) && er.Code == "NoSuchKey" {
			return nil, fmt.Errorf("%s: %w", k, contracts.ErrNotFound)
		}
		return b, err
	}
	data, err := get(key)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", key, err)
	}
	meta, err := get(contracts.MetaKey(key))
	if err != nil {
		return nil, fmt.Errorf("archive %s: .meta: %w", key, err)
	}
	return decodeArchive(key, data, meta)
}

// decodeArchive checks an archive against its .meta and unpacks it.
func decodeArchive(key string, data, meta []byte) (map[string][]byte, error) {
	if err := archive.VerifyMeta(data, meta); err != nil {
		return nil, fmt.Errorf("archive %s: %w", key, err)
	}
	if m, err := archive.ParseMeta(meta); err == nil && m.Sized {
		got, err := archive.MetaOf(data)
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", key, err)
		}
		if got.Bytes != m.Bytes || got.Entries != m.Entries {
			return nil, fmt.Errorf("archive %s: %w: holds %d bytes in %d entries, .meta says %d in %d",
				key, archive.ErrChecksumMismatch, got.Bytes, got.Entries, m.Bytes, m.Entries)
		}
	}
	files, err := archive.Unpack(data)
	if err != nil {
		return nil, fmt.Errorf("archive %s: %w", key, err)
	}
	return files, nil
}

// readVolume reads every regular file of workspace id's volume, or
// reports that it has none (ok false), through a created, never-started
// helper container of the workspace image mounting it (docker cp).
func (r *run) readVolume(ctx context.Context, id string) (files map[string][]byte, ok bool, err error) {
	vol := contracts.VolumeName(id)
	if out, err := exec.CommandContext(ctx, "docker", "volume", "inspect", vol).CombinedOutput(); err != nil {
		if strings.Contains(strings.ToLower(string(out)), "no such volume") {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("docker volume inspect %s: %v: %s", vol, err, strings.TrimSpace(string(out)))
	}
	const mnt = "/conform-volume"
	out, err := exec.CommandContext(ctx, "docker", "create", "--network", "none", "--label", "org.wsconverge.managed="+r.managed,
		"--mount", "type=volume,source="+vol+",target="+mnt+",readonly", r.cfg.Image).Output()
	if err != nil {
		return nil, false, fmt.Errorf("create a helper for %s: %w", vol, err)
	}
	ctr := strings.TrimSpace(string(out))
	defer func() { _ = exec.CommandContext(context.WithoutCancel(ctx), "docker", "rm", "-f", ctr).Run() }()
	cmd := exec.CommandContext(ctx, "docker", "cp", ctr+":"+mnt+"/.", "-")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	tarball, err := cmd.Output()
	if err != nil {
		return nil, false, fmt.Errorf("docker cp from %s: %v: %s", vol, err, strings.TrimSpace(stderr.String()))
	}
	files, err = filesOfTar(bytes.NewReader(tarball))
	if err != nil {
		return nil, false, fmt.Errorf("volume %s: %w", vol, err)
	}
	return files, true, nil
}

// filesOfTar collects the regular files of docker cp's tar stream of a
// directory's "/." (entries "./path") by their path in it.
func filesOfTar(rd io.Reader) (map[string][]byte, error) {
	files := map[string][]byte{}
	tr := tar.NewReader(rd)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("tar: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		name := strings.TrimPrefix(path.Clean(hdr.Name), "./")
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("tar: %s: %w", name, err)
		}
		files[name] = b
	}
}

// owed is what a user who knows model is owed, given the files found: a
// file found as the user may find it is owed as found (an unanswered
// write that landed, or anything after an acknowledged loss); any other
// is owed as last acknowledged (or not at all when nothing was).
func owed(model map[string]*fileState, found map[string][]byte) map[string][]byte {
	want := map[string][]byte{}
	for p, st := range model {
		b, in := found[p]
		switch {
		case st.accepts(b, in):
			if in {
				want[p] = b
			}
		case st.has:
			want[p] = st.want
		}
	}
	return want
}

// final is the world's bytes at the end: each owed workspace's volume (its
// user's files), the archives (read from the bucket as a restore would),
// and what each user is owed, resolved against what is found where an
// unacknowledged write may or may not have landed.
func (r *run) final(ctx context.Context, rows []contracts.Workspace, end time.Time) (*wsjudge.Final, []string) {
	us := r.users
	f := &wsjudge.Final{End: end, Rows: rows, Volumes: map[string]map[string][]byte{}, Expected: map[string]map[string][]byte{},
		Archives: func(key string) (map[string][]byte, error) {
			files, err := r.readArchive(ctx, key)
			if err != nil {
				return nil, err
			}
			return userFiles(files), nil
		}}
	var problems []string
	for _, w := range rows {
		us.mu.Lock()
		_, known := us.model[w.ID]
		us.mu.Unlock()
		if !known || w.Deleted() {
			continue
		}
		files, ok, err := r.readVolume(ctx, w.ID)
		if err != nil {
			problems = append(problems, "read the volume of "+w.ID+": "+err.Error())
			continue
		}
		unrestored := w.ArchiveKey != "" && w.RestoreMarker() != w.ArchiveKey
		var found map[string][]byte
		switch {
		case ok:
			f.Volumes[w.ID] = userFiles(files)
			found = f.Volumes[w.ID]
			if !unrestored {
				break
			}
			fallthrough
		case w.ArchiveKey != "":
			found, _ = f.Archives(w.ArchiveKey)
		}
		us.mu.Lock()
		if w.ArchiveKey != "" && us.destroyed[w.ArchiveKey] && (!ok || unrestored) {
			// The data lived only in an archive a fault destroyed: a
			// restore must end in DataLost, which the checker accepts;
			// before one is tried nothing is owed (as the simulator).
			us.mu.Unlock()
			continue
		}
		f.Expected[w.ID] = owed(us.model[w.ID], found)
		us.mu.Unlock()
	}
	return f, problems
}
