package conform

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	"github.com/wsconverge/converge/contracts/oracle/history"
	"github.com/wsconverge/converge/wire/keyring"
	"github.com/wsconverge/converge/wire/keys"
	"github.com/wsconverge/converge/wire/keys/cosmoskeyring"
)

func TestCheckProfileRefusesWhatARunWould(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Profile
		want string
	}{
		{"every placeholder", Profile{Argv: []string{"d", "--home", "{home}", "--config={config}", "--node", "{endpoint}", "{ws}",
			"{chain_id}", "{key_name}", "{keyring_dir}", "{keyring_backend}", "{address}"}}, ""},
		{"braces that are no placeholder", Profile{Argv: []string{"d", `{"a":1}`, "{A}"}}, ""},
		{"no command", Profile{}, "empty command"},
		{"unknown placeholder", Profile{Argv: []string{"d", "{bin}"}}, "unknown placeholder {bin}: use {address} {chain_id} {config} {endpoint} {home}"},
		{"gRPC", Profile{Argv: []string{"d", "--grpc", "{grpc}"}}, "the façade serves no gRPC"},
		{"the key only in a key command", Profile{Argv: []string{"d", "{key}"}}, "unknown placeholder {key}"},
		{"the key in a key command", Profile{Argv: []string{"d"}, KeyCmd: []string{"add", "{name}", "{key}", "{home}"}}, ""},
		{"bad key command", Profile{Argv: []string{"d"}, KeyCmd: []string{"add", "{nme}"}}, "key command: unknown placeholder {nme}"},
		{"config path in the home", Profile{Argv: []string{"d"}, ConfigPath: "{home}/config/app.toml"}, ""},
		{"relative config path", Profile{Argv: []string{"d"}, ConfigPath: ".oracled/config.toml"}, ""},
		{"config path outside the home", Profile{Argv: []string{"d"}, ConfigPath: "/etc/oracled/config.toml"}, "not inside the sandbox home"},
		{"config path climbing out", Profile{Argv: []string{"d"}, ConfigPath: "{home}/../config.toml"}, "not inside the sandbox home"},
		{"config path naming itself", Profile{Argv: []string{"d"}, ConfigPath: "{config}"}, "unknown placeholder {config}"},
		{"key format", Profile{Argv: []string{"d"}, KeyFormat: "pem"}, `unknown key format "pem"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckProfile(tc.p)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Provision writes the config where the profile says and the key in its
// format, and the command line is the profile's words with the
// placeholders filled in: nothing appended.
func TestProvisionFollowsTheProfile(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	key := keys.PrivKeyFromSeed("conform-sut-1")
	cfg := oracle.DefaultConfig(home)
	cfg.Chain.Endpoint = "http://127.0.0.1:4711"
	prof := Profile{Argv: []string{"oracled", "start", "--home={home}", "--config", "{config}", "--node", "{endpoint}",
		"--ws", "{ws}", "--chain-id", "{chain_id}", "--from", "{key_name}", "--keyring-dir", "{keyring_dir}",
		"--keyring-backend", "{keyring_backend}", "{address}"},
		ConfigPath: "{home}/.oracled/config.toml", KeyFormat: KeyFormatCosmosTestKeyring}
	sb, err := Provision(context.Background(), home, cfg, key, prof)
	require.NoError(t, err)

	cp := filepath.Join(home, ".oracled", "config.toml")
	require.Equal(t, cp, sb.ConfigPath)
	b, err := os.ReadFile(cp)
	require.NoError(t, err)
	var written oracle.Config
	require.NoError(t, toml.Unmarshal(b, &written))
	require.Equal(t, cfg, written, "the config the harness wrote is the run's")
	require.NoFileExists(t, filepath.Join(home, "config.toml"))

	got, err := cosmoskeyring.Read(home, cfg.Key.Name)
	require.NoError(t, err)
	require.Equal(t, key.PubKey().Address(), got.PubKey().Address())
	require.Len(t, sb.KeyFiles, 2)

	argv, err := sb.Argv(prof)
	require.NoError(t, err)
	require.Equal(t, []string{"oracled", "start", "--home=" + home, "--config", cp, "--node", "http://127.0.0.1:4711",
		"--ws", "ws://127.0.0.1:4711/websocket", "--chain-id", cfg.Chain.ID, "--from", cfg.Key.Name, "--keyring-dir", home,
		"--keyring-backend", "test", key.PubKey().Address()}, argv)

	// The default format is the reference's.
	sb, err = Provision(context.Background(), filepath.Join(dir, "home2"), oracle.DefaultConfig(filepath.Join(dir, "home2")), key,
		Profile{Argv: []string{"converge", "oracled"}})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "home2", "config.toml"), sb.ConfigPath)
	k, err := keyring.Load(filepath.Join(dir, "home2"), cfg.Key.Name)
	require.NoError(t, err)
	require.Equal(t, key.Bytes(), k.Bytes())
	argv, err = sb.Argv(Profile{Argv: []string{"converge", "oracled"}})
	require.NoError(t, err)
	require.Equal(t, []string{"converge", "oracled"}, argv, "no --home appended")
}

// A lifetime's stdout and stderr are kept whole in files, a line too long
// to scan included, and the report says how each lifetime ended: on its
// own with its status, or killed by the harness's signal by name.
func TestRunKeepsTheWholeOutputAndNamesHowEachLifetimeEnded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the fake daemon is a POSIX shell script")
	}
	dir := t.TempDir()
	// The first lifetime writes a 2 MB line and exits 3; the second
	// sleeps until the harness kills it.
	daemon := `if [ -e "$HOME/ran" ]; then exec sleep 60; fi; touch "$HOME/ran"
head -c 2000000 /dev/zero | tr '\0' x; echo; echo last-words; echo err-line >&2; exit 3`
	script := Script{Period: 5 * time.Second, PoolSize: 3, Limit: 60 * time.Second, Steps: []Step{
		{Name: "launch, wait for the exit", Budget: 20 * time.Second, run: func(ctx context.Context, r *runner) error {
			if err := r.launch(); err != nil {
				return err
			}
			life := r.life
			_, err := r.w.watch.await(ctx, r.lifeFrom, 20*time.Second, "the exit", func(e *history.Event) bool {
				return e.Proc != nil && e.Proc.Action == history.ProcExit && e.Life == life
			})
			if err != nil {
				return err
			}
			return r.stop(syscall.SIGKILL, time.Second)
		}},
		{Name: "launch again, kill", Budget: 20 * time.Second, final: true, run: func(ctx context.Context, r *runner) error {
			if err := r.launch(); err != nil {
				return err
			}
			return r.stop(syscall.SIGKILL, 10*time.Second)
		}},
	}}
	res, err := Run(context.Background(), Options{Dir: dir, Seed: 1, Script: script,
		Profile: Profile{Argv: []string{"/bin/sh", "-c", daemon, "fake-daemon", "{home}"}}})
	require.NoError(t, err)
	require.Len(t, res.Lifetimes, 2)

	first := res.Lifetimes[0]
	require.Equal(t, filepath.Join(dir, "output", "life-1.stdout"), first.Stdout)
	out, err := os.ReadFile(first.Stdout)
	require.NoError(t, err)
	require.Equal(t, 2_000_000+1+len("last-words\n"), len(out), "stdout is kept whole")
	require.True(t, bytes.HasSuffix(out, []byte("\nlast-words\n")))
	errOut, err := os.ReadFile(first.Stderr)
	require.NoError(t, err)
	require.Equal(t, "err-line\n", string(errOut))
	require.Equal(t, "exit status 3", first.Ended)
	require.True(t, first.OnItsOwn)

	second := res.Lifetimes[1]
	require.Equal(t, "killed by SIGKILL", second.Ended)
	require.Equal(t, "SIGKILL", second.AfterSignal)
	require.False(t, second.OnItsOwn)

	s := res.Summary
	require.Equal(t, 2, s.Lifetimes)
	require.Equal(t, 1, s.Restarts)
	require.Equal(t, 1, s.OnItsOwn)
	require.Zero(t, s.Broadcasts)
	require.Contains(t, s.Cause, "ended on its own before it broadcast")

	var b strings.Builder
	require.NoError(t, res.WriteTable(&b))
	table := b.String()
	require.True(t, strings.HasPrefix(table, "what happened\n"), table)
	require.Contains(t, table, "life 1:     exit status 3, on its own; output: "+first.Stdout+", "+first.Stderr)
	require.Contains(t, table, "life 2:     killed by SIGKILL after the harness's SIGKILL")
	require.NotContains(t, table, "status=-1")
	require.NotContains(t, table, "exit status -1")
}

// bentDaemon builds scenarios/mutants/oracle/bentoracled into the test's
// temporary directory.
func bentDaemon(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bentoracled")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/wsconverge/converge/scenarios/mutants/oracle/bentoracled").CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// untilBroadcasts launches the daemon and waits for n answered broadcasts
// of its submissions (and, with commit, for one of its txs committed),
// then stops it with SIGTERM: enough of a script to see what the chain
// answers it.
func untilBroadcasts(n int, commit bool) Script {
	return Script{Period: 5 * time.Second, PoolSize: 3, Limit: 60 * time.Second, Steps: []Step{
		stepLaunch(),
		{Name: "answered broadcasts", Budget: 30 * time.Second, run: func(ctx context.Context, r *runner) error {
			seen, answered, committed := 0, false, !commit
			count := onAnswer(func(answer) bool {
				seen++
				return seen >= n
			})
			return r.await(ctx, r.w.watch.mark(), "answered broadcasts", func(e *history.Event) bool {
				if count(e) {
					answered = true
				}
				if e.Deliver != nil && e.Deliver.Origin == history.OriginSUT && e.Deliver.Code == 0 {
					committed = true
				}
				return answered && committed
			})
		}},
		{Name: "SIGTERM", Budget: shutdownWait, final: true, run: func(_ context.Context, r *runner) error {
			return r.stop(syscall.SIGTERM, shutdownWait)
		}},
	}}
}

// A daemon whose every submission fails admission (the bent reference
// empties its data-set signature, as a real daemon did: code 18): the
// summary says that none was admitted and why, before any verdict. Under
// AdmitUnverified the same daemon's txs are admitted and committed, the
// summary names what was waived, and the report opens and closes with
// the banner.
func TestReportOpensWithTheCauseAndTheDiagnosticModeGetsPastIt(t *testing.T) {
	if testing.Short() {
		t.Skip("two real-time runs of about 15 s")
	}
	bent := bentDaemon(t)
	prof := Profile{Argv: []string{bent, "--bend", "empty-signature", "--home", "{home}"}}
	var plain, diag *Result
	var perr, derr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		plain, perr = Run(context.Background(), Options{Dir: t.TempDir(), Seed: 31, Script: untilBroadcasts(3, false), Profile: prof})
	}()
	go func() {
		defer wg.Done()
		diag, derr = Run(context.Background(), Options{Dir: t.TempDir(), Seed: 32, Script: untilBroadcasts(3, true), Profile: prof, AdmitUnverified: true})
	}()
	wg.Wait()
	require.NoError(t, perr)
	require.NoError(t, derr)
	require.Empty(t, plain.Unmet)
	require.Empty(t, diag.Unmet)

	s := plain.Summary
	require.GreaterOrEqual(t, s.Broadcasts, 3)
	require.Zero(t, s.Admitted)
	require.Zero(t, s.Committed)
	require.Len(t, s.Rejected, 1)
	require.Equal(t, uint32(oracle.CodeInvalidRequest), s.Rejected[0].Code)
	require.Contains(t, s.Rejected[0].Log, "signature must not be empty")
	require.Equal(t, s.Broadcasts, s.Rejected[0].Count)
	require.Contains(t, s.Cause, "no broadcast of the daemon was admitted")
	var b strings.Builder
	require.NoError(t, plain.WriteTable(&b))
	table := b.String()
	t.Log(table)
	lines := strings.Split(table, "\n")
	require.Equal(t, "what happened", lines[0])
	require.Regexp(t, `^  command: +`+bent+` --bend empty-signature --home `, lines[1])
	require.Regexp(t, `^  broadcasts: +0 of \d+ admitted; \d+ rejected: code 18 "message 0: signature must not be empty: invalid request" ×\d+$`, lines[2])
	require.NotContains(t, table, "DIAGNOSTIC")
	require.False(t, plain.Passed())

	d := diag.Summary
	require.Equal(t, d.Broadcasts, d.Admitted, "every broadcast admitted: %+v", d.Rejected)
	require.NotEmpty(t, d.Waived)
	require.Equal(t, uint32(oracle.CodeInvalidRequest), d.Waived[0].Code)
	require.Equal(t, d.Admitted, d.Waived[0].Count)
	require.Positive(t, d.Committed, "the waived txs went into blocks")
	require.True(t, diag.Diagnostic)
	require.False(t, diag.Passed(), "a diagnostic run never passes")
	b.Reset()
	require.NoError(t, diag.WriteTable(&b))
	t.Log(b.String())
	lines = strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	require.Equal(t, DiagnosticBanner, lines[0])
	require.Equal(t, DiagnosticBanner, lines[len(lines)-1])
	require.Contains(t, b.String(), `waived:     admitted only because --admit-unverified let these checks pass: code 18 "message 0: signature must not be empty`)
	require.Contains(t, b.String(), "\nDIAGNOSTIC (no conformance claim)")
}
