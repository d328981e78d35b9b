package dockerprov

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// Defaults of Config.
const (
	DefaultLabelPrefix     = "org.wsconverge."
	DefaultManagedValue    = "true"
	DefaultStorageJobImage = "converge/storage-job:dev"
	DefaultAgentPort       = 8080
	DefaultHealthPath      = "/healthz"
	DefaultPublishIP       = "127.0.0.1"
	DefaultUser            = "1000:1000"
	DefaultStartupTimeout  = 300 * time.Second // SPEC 5.1
	DefaultHealthTimeout   = 30 * time.Second  // SPEC 5.1
	DefaultJobTimeout      = 1800 * time.Second
	DefaultPollInterval    = 200 * time.Millisecond
)

// EnvStorageJobImage names the storage-job image when Config leaves it
// empty (images/env.sh exports it).
const EnvStorageJobImage = "CONVERGE_STORAGE_JOB_IMAGE"

// HostGateway is the extra-hosts entry that makes host.docker.internal
// resolve to the host from inside a bridge-networked container (Docker
// 20.10+): put it in Config.JobExtraHosts and use host.docker.internal in
// S3.Endpoint to reach a service published on the host's interfaces.
const HostGateway = "host.docker.internal:host-gateway"

// S3 is the archive bucket as the storage job sees it from inside its
// container.
type S3 struct {
	// Endpoint is host:port (or http(s)://host:port) reachable from the
	// job container's network (see Config.JobNetwork).
	Endpoint  string
	AccessKey string
	SecretKey string
	Bucket    string
	// Secure selects TLS.
	Secure bool
}

// Config configures a Provider. Zero fields take the defaults above.
//
// Reaching S3 from the storage job. The job runs in its own container, so
// S3.Endpoint is the address as seen from inside it. Three set-ups work:
//
//   - JobNetwork "host": the job shares the host's network namespace and
//     uses the same endpoint as the host (127.0.0.1:port works). The tests
//     use this: it needs nothing from the MinIO container.
//   - JobNetwork a user-defined network that the S3 service also joins:
//     the endpoint is the service's network alias (alias:9000).
//   - JobNetwork "" (the default bridge) with JobExtraHosts [HostGateway]:
//     the endpoint is host.docker.internal:port, for a service published on
//     the host's non-loopback interfaces.
type Config struct {
	// DockerHost is the daemon address (unix:///var/run/docker.sock,
	// tcp://host:2375); empty means DOCKER_HOST, else the platform default.
	DockerHost string
	// ClientOptions are extra moby client options applied last (tests add
	// a response hook to count requests).
	ClientOptions []client.Opt

	// ImageOverride, when set, replaces Start's image_ref (tests).
	ImageOverride string
	// StorageJobImage is the storage job's image; empty means
	// $CONVERGE_STORAGE_JOB_IMAGE, else DefaultStorageJobImage. The file
	// helpers (WriteFile, ReadFiles) create their never-started containers
	// from it too.
	StorageJobImage string
	// PullMissingImages lets Start and the jobs pull an image that is not
	// present locally. Off by default: with no registry a missing image is
	// IMAGE_PULL_FAILED at once.
	PullMissingImages bool

	// S3 is the archive bucket, as seen from inside job containers.
	S3 S3
	// JobNetwork is the network mode of storage-job containers: "" (the
	// default bridge), "host", or a user-defined network name.
	JobNetwork string
	// JobExtraHosts are extra /etc/hosts entries of storage-job
	// containers ("name:ip", or "name:host-gateway").
	JobExtraHosts []string
	// WorkspaceNetwork is the network mode of workspace containers: ""
	// (the default bridge) or a user-defined network name. Not "host": the
	// agent port is published per container.
	WorkspaceNetwork string

	// LabelPrefix prefixes every label the provider sets and reads
	// (DefaultLabelPrefix).
	LabelPrefix string
	// ManagedValue is the value of the {prefix}managed label. Every list,
	// and Cleanup, sees only objects carrying this value, so tests running
	// side by side on one daemon can each use their own.
	ManagedValue string

	// AgentPort is the workspace agent's container port (tcp). Start
	// publishes it and waits for HealthPath when the image exposes it.
	AgentPort int
	// HealthPath is the agent's health endpoint; "-" disables the check.
	HealthPath string
	// PublishIP is the host address agent ports are published on; the
	// health check dials it (127.0.0.1 when it is unspecified, 0.0.0.0).
	PublishIP string

	// User runs the storage job (uid:gid, SPEC 5.3); WriteFile gives the
	// files and directories it creates this owner.
	User string
	// RestoreMaxBytes and RestoreMaxEntries are the restore quota handed to
	// the storage job (RESTORE_MAX_BYTES, RESTORE_MAX_ENTRIES); 0 leaves
	// the job's defaults. A restore over it fails with DISK_FULL.
	RestoreMaxBytes   int64
	RestoreMaxEntries int64

	// StartupTimeout bounds Start from the first call to a running
	// container; HealthTimeout bounds the health check after it; JobTimeout
	// bounds a storage job. PollInterval paces the waits.
	StartupTimeout time.Duration
	HealthTimeout  time.Duration
	JobTimeout     time.Duration
	PollInterval   time.Duration

	// Logger receives the provider's logs (slog.Default() when nil).
	Logger *slog.Logger
}

// withDefaults fills the zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.StorageJobImage == "" {
		c.StorageJobImage = os.Getenv(EnvStorageJobImage)
	}
	if c.StorageJobImage == "" {
		c.StorageJobImage = DefaultStorageJobImage
	}
	if c.LabelPrefix == "" {
		c.LabelPrefix = DefaultLabelPrefix
	}
	if c.ManagedValue == "" {
		c.ManagedValue = DefaultManagedValue
	}
	if c.AgentPort == 0 {
		c.AgentPort = DefaultAgentPort
	}
	if c.HealthPath == "" {
		c.HealthPath = DefaultHealthPath
	}
	if c.PublishIP == "" {
		c.PublishIP = DefaultPublishIP
	}
	if c.User == "" {
		c.User = DefaultUser
	}
	if c.StartupTimeout == 0 {
		c.StartupTimeout = DefaultStartupTimeout
	}
	if c.HealthTimeout == 0 {
		c.HealthTimeout = DefaultHealthTimeout
	}
	if c.JobTimeout == 0 {
		c.JobTimeout = DefaultJobTimeout
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}

	var errs []error
	if c.AgentPort < 1 || c.AgentPort > 65535 {
		errs = append(errs, fmt.Errorf("AgentPort %d is not a port", c.AgentPort))
	}
	if c.HealthPath != "-" && !strings.HasPrefix(c.HealthPath, "/") {
		errs = append(errs, fmt.Errorf("HealthPath %q must start with / (or be - to disable)", c.HealthPath))
	}
	if _, err := netip.ParseAddr(c.PublishIP); err != nil {
		errs = append(errs, fmt.Errorf("PublishIP: %w", err))
	}
	if _, _, err := parseUser(c.User); err != nil {
		errs = append(errs, err)
	}
	if c.WorkspaceNetwork == "host" {
		errs = append(errs, errors.New(`WorkspaceNetwork "host" cannot publish one agent port per workspace`))
	}
	if c.RestoreMaxBytes < 0 || c.RestoreMaxEntries < 0 {
		errs = append(errs, fmt.Errorf("the restore quota (%d bytes, %d entries) is negative", c.RestoreMaxBytes, c.RestoreMaxEntries))
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{
		{"StartupTimeout", c.StartupTimeout}, {"HealthTimeout", c.HealthTimeout},
		{"JobTimeout", c.JobTimeout}, {"PollInterval", c.PollInterval},
	} {
		if d.d < 0 {
			errs = append(errs, fmt.Errorf("%s %v is negative", d.name, d.d))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("dockerprov config: %w", err)
	}
	return c, nil
}

// parseUser splits "uid:gid" into numbers.
func parseUser(u string) (uid, gid int, err error) {
	a, b, ok := strings.Cut(u, ":")
	uid, errU := strconv.Atoi(a)
	gid, errG := strconv.Atoi(b)
	if !ok || errU != nil || errG != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("User %q is not numeric uid:gid", u) //nolint:staticcheck // ST1005: "User" is the Docker option's name
	}
	return uid, gid, nil
}

// healthHost is the address the health check dials.
func (c Config) healthHost() string {
	a := netip.MustParseAddr(c.PublishIP)
	if a.IsUnspecified() {
		if a.Is6() {
			return "::1"
		}
		return "127.0.0.1"
	}
	return a.String()
}
