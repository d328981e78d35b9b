package conform

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	wsjudge "github.com/wsconverge/converge/judge/workspace"
)

// Duration is a time.Duration written as a Go duration string in TOML.
type Duration time.Duration

// UnmarshalText reads "90s", "2m".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// User is an API user and the bearer token the implementation accepts
// for it.
type User struct {
	Name  string `toml:"name" json:"name"`
	Token string `toml:"token" json:"-"`
}

// Config is a conformance run's configuration (conform.toml). Zero
// fields take the profile's values.
type Config struct {
	// Profile names the defaults: "short" (under 5 minutes of wall time
	// on two cores) or "long".
	Profile string `toml:"profile"`
	// Instances is how many instances of the implementation run.
	Instances int `toml:"instances"`
	// Seed draws the workload and the faults.
	Seed uint64 `toml:"seed"`
	// TimeScale is K, passed as CONVERGE_TIME_SCALE: the implementation's
	// clock runs K times faster than the wall clock from
	// CONVERGE_TIME_ORIGIN. An implementation that ignores K is run with
	// time_scale = 1.
	TimeScale float64 `toml:"time_scale"`
	// Workspaces is how many workspaces the workload creates (besides
	// those of the limit races).
	Workspaces int `toml:"workspaces"`
	// FaultPhase is how long faults are injected (wall time); QuietPhase
	// the most the quiet phase waits for every workspace to converge.
	FaultPhase Duration `toml:"fault_phase"`
	QuietPhase Duration `toml:"quiet_phase"`
	// Faults are the real fault kinds that are on (FaultKinds).
	Faults []string `toml:"faults"`
	// StartTimeout bounds the wait for an instance's API.
	StartTimeout Duration `toml:"start_timeout"`
	// HealthPath is polled until it answers 200 (SPEC 4.3: /healthz).
	HealthPath string `toml:"health_path"`
	// Image is the workspaces' image (it must run the workspace agent).
	Image string `toml:"workspace_image"`
	// Users are the API's users; Admin holds the admin role.
	Users []User `toml:"users"`
	Admin User   `toml:"admin"`
	// MaxRunningPerUser and MaxRunningGlobal are the limits the
	// implementation is told (and judged against).
	MaxRunningPerUser int `toml:"max_running_per_user"`
	MaxRunningGlobal  int `toml:"max_running_global"`
	// Env is added to every instance's environment (NAME=VALUE, each
	// placeholder substituted).
	Env []string `toml:"env"`
}

// Profiles names the built-in profiles.
var Profiles = []string{"short", "long"}

// profile returns the defaults of a profile.
func profile(name string) (Config, error) {
	base := Config{
		Profile: name, Instances: 2, Seed: 1, TimeScale: 1,
		StartTimeout: Duration(time.Minute), HealthPath: "/healthz", Image: "converge/workspace-agent:dev",
		Users:             []User{{Name: "alice", Token: "conform-alice-0123456789"}, {Name: "bob", Token: "conform-bob-0123456789"}},
		Admin:             User{Name: "root", Token: "conform-root-0123456789"},
		MaxRunningPerUser: 2, MaxRunningGlobal: 100,
		Faults: FaultKindNames(),
	}
	switch name {
	case "short", "":
		base.Profile = "short"
		base.Workspaces = 4
		base.FaultPhase = Duration(75 * time.Second)
		base.QuietPhase = Duration(100 * time.Second)
	case "long":
		base.Workspaces = 12
		base.FaultPhase = Duration(20 * time.Minute)
		base.QuietPhase = Duration(15 * time.Minute)
	default:
		return Config{}, fmt.Errorf("unknown profile %q (known: %s)", name, strings.Join(Profiles, ", "))
	}
	return base, nil
}

// LoadConfig reads a conform.toml (path "" for none) over the profile it
// names (or prof, when the file names none). Unknown keys are errors.
func LoadConfig(path, prof string) (Config, error) {
	var file Config
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return Config{}, err
		}
		dec := toml.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&file); err != nil {
			var strict *toml.StrictMissingError
			if errors.As(err, &strict) {
				var keys []string
				for _, e := range strict.Errors {
					keys = append(keys, strings.Join(e.Key(), "."))
				}
				return Config{}, fmt.Errorf("%s: unknown key %s", path, strings.Join(keys, ", "))
			}
			return Config{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	if file.Profile != "" && prof == "" {
		prof = file.Profile
	}
	c, err := profile(prof)
	if err != nil {
		return Config{}, err
	}
	c.merge(file)
	return c, c.Validate()
}

// merge sets every field o sets.
func (c *Config) merge(o Config) {
	if o.Instances != 0 {
		c.Instances = o.Instances
	}
	if o.Seed != 0 {
		c.Seed = o.Seed
	}
	if o.TimeScale != 0 {
		c.TimeScale = o.TimeScale
	}
	if o.Workspaces != 0 {
		c.Workspaces = o.Workspaces
	}
	if o.FaultPhase != 0 {
		c.FaultPhase = o.FaultPhase
	}
	if o.QuietPhase != 0 {
		c.QuietPhase = o.QuietPhase
	}
	if o.Faults != nil {
		c.Faults = o.Faults
	}
	if o.StartTimeout != 0 {
		c.StartTimeout = o.StartTimeout
	}
	if o.HealthPath != "" {
		c.HealthPath = o.HealthPath
	}
	if o.Image != "" {
		c.Image = o.Image
	}
	if len(o.Users) > 0 {
		c.Users = o.Users
	}
	if o.Admin.Token != "" {
		c.Admin = o.Admin
	}
	if o.MaxRunningPerUser != 0 {
		c.MaxRunningPerUser = o.MaxRunningPerUser
	}
	if o.MaxRunningGlobal != 0 {
		c.MaxRunningGlobal = o.MaxRunningGlobal
	}
	c.Env = append(c.Env, o.Env...)
}

// Validate checks the configuration's ranges.
func (c *Config) Validate() error {
	var errs []error
	switch {
	case c.Instances < 1 || c.Instances > 5:
		errs = append(errs, fmt.Errorf("instances %d: want 1 to 5", c.Instances))
	case !(c.TimeScale >= 1 && c.TimeScale <= 1000):
		errs = append(errs, fmt.Errorf("time_scale %g: want 1 to 1000", c.TimeScale))
	case c.Workspaces < 1 || c.Workspaces > 200:
		errs = append(errs, fmt.Errorf("workspaces %d: want 1 to 200", c.Workspaces))
	case c.FaultPhase < Duration(10*time.Second) || c.QuietPhase < Duration(10*time.Second):
		errs = append(errs, errors.New("fault_phase and quiet_phase: at least 10s each"))
	case len(c.Users) < 1 || c.Admin.Token == "":
		errs = append(errs, errors.New("at least one user and an admin, each with a token"))
	case !strings.HasPrefix(c.HealthPath, "/"):
		errs = append(errs, fmt.Errorf("health_path %q: want a path", c.HealthPath))
	}
	for _, f := range c.Faults {
		if !slices.Contains(FaultKindNames(), f) {
			errs = append(errs, fmt.Errorf("unknown fault kind %q (known: %s)", f, strings.Join(FaultKindNames(), ", ")))
		}
	}
	seen := map[string]bool{}
	for _, u := range append(slices.Clone(c.Users), c.Admin) {
		if u.Name == "" || u.Token == "" || strings.ContainsAny(u.Token, ",= ") || strings.ContainsAny(u.Name, ",=: ") {
			errs = append(errs, fmt.Errorf("user %q: a name and a token, without spaces, commas, '=' (or ':' in names)", u.Name))
		}
		if seen[u.Token] {
			errs = append(errs, fmt.Errorf("token of %q used twice", u.Name))
		}
		seen[u.Token] = true
	}
	return errors.Join(errs...)
}

// TokensValue is the tokens in the form CONVERGE_TOKENS has:
// token=user,…,token=admin:admin.
func (c *Config) TokensValue() string {
	var parts []string
	for _, u := range c.Users {
		parts = append(parts, u.Token+"="+u.Name)
	}
	parts = append(parts, c.Admin.Token+"="+c.Admin.Name+":admin")
	return strings.Join(parts, ",")
}

// holdMargin is how much longer than the convergence bound a quiet phase
// that holds lasts (the quiet mark is recorded a moment after it began).
const holdMargin = time.Second

// convergeHold is how long the quiet phase lasts at least once every
// workspace is at rest: the convergence bound of C12 (wsjudge.
// ConvergeBound) on the implementation's clock, that is ConvergeBound/K
// of wall time, when it fits in the quiet phase, so that c12-convergence
// judges every workspace that stayed at rest that long; zero (the phase
// ends as soon as all are at rest) when it does not fit.
func (c *Config) convergeHold() time.Duration {
	hold := time.Duration(float64(wsjudge.ConvergeBound)/c.TimeScale) + holdMargin
	if hold > time.Duration(c.QuietPhase) {
		return 0
	}
	return hold
}

// Unreached maps each judged checker the configuration cannot exercise
// to why: c12-convergence when its bound, on the implementation's clock,
// does not fit in the quiet phase (at time_scale 1, 91 minutes).
func (c *Config) Unreached() map[string]string {
	m := map[string]string{}
	if c.convergeHold() == 0 {
		wall := time.Duration(float64(wsjudge.ConvergeBound) / c.TimeScale)
		need := math.Ceil(float64(wsjudge.ConvergeBound) / float64(time.Duration(c.QuietPhase)-holdMargin))
		m["c12-convergence"] = fmt.Sprintf("its bound (%s after faults stop) is %s of wall time at time_scale %g, beyond the quiet phase (%s); "+
			"an implementation that honours CONVERGE_TIME_SCALE reaches it with time_scale %g or more",
			wsjudge.ConvergeBound, wall.Round(time.Second), c.TimeScale, time.Duration(c.QuietPhase), need)
	}
	return m
}
