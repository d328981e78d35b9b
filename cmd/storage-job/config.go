package main

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// mode is what the job does.
type mode string

const (
	modeArchive mode = "archive"
	modeRestore mode = "restore"
)

// config is the job's validated settings.
type config struct {
	Mode      mode
	Bucket    string
	Key       string // the archive object; its checksum is Key+".meta"
	Endpoint  string // host[:port]
	AccessKey string
	SecretKey string
	Secure    bool
	DataDir   string
	TmpDir    string
	// Restore quota: the most file bytes and entries a restore writes.
	MaxBytes   int64
	MaxEntries int64
}

// Default restore quota (RESTORE_MAX_BYTES, RESTORE_MAX_ENTRIES): far above
// a home volume, far below what a decompression bomb claims. A restore is
// also held to the free space of DATA_DIR's file system and to what the
// archive's .meta declares.
const (
	defaultMaxBytes   int64 = 256 << 30
	defaultMaxEntries int64 = 10_000_000
)

func (c config) metaKey() string    { return c.Key + ".meta" }
func (c config) archiveURL() string { return "s3://" + c.Bucket + "/" + c.Key }

// parseConfig reads the settings from the arguments and the environment.
// Every error names the variable at fault.
func parseConfig(args []string, env map[string]string) (config, error) {
	var cfg config
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	m, err := parseMode(args, env["JOB_MODE"])
	if err != nil {
		errs = append(errs, err)
	}
	cfg.Mode = m

	if raw, ok := nonEmpty(env, "ARCHIVE_URL"); !ok {
		fail("ARCHIVE_URL: missing (want s3://bucket/archives/{id}/{op_id}/home.tar.zst)")
	} else if cfg.Bucket, cfg.Key, err = parseArchiveURL(raw); err != nil {
		fail("ARCHIVE_URL: %w", err)
	}

	secure, secureSet := false, false
	if raw, ok := nonEmpty(env, "S3_SECURE"); ok {
		b, err := strconv.ParseBool(raw)
		if err != nil {
			fail("S3_SECURE: %q is not a boolean (true or false)", raw)
		}
		secure, secureSet = b, true
	}
	if raw, ok := nonEmpty(env, "S3_ENDPOINT"); !ok {
		fail("S3_ENDPOINT: missing (want host:port)")
	} else {
		host, schemeSecure, hasScheme, err := parseEndpoint(raw)
		switch {
		case err != nil:
			fail("S3_ENDPOINT: %w", err)
		case hasScheme && secureSet && schemeSecure != secure:
			fail("S3_ENDPOINT: scheme of %q contradicts S3_SECURE=%t", raw, secure)
		case hasScheme:
			secure = schemeSecure
		}
		cfg.Endpoint = host
	}
	cfg.Secure = secure

	var ok bool
	if cfg.AccessKey, ok = nonEmpty(env, "S3_ACCESS_KEY"); !ok {
		fail("S3_ACCESS_KEY: missing")
	}
	if cfg.SecretKey, ok = nonEmpty(env, "S3_SECRET_KEY"); !ok {
		fail("S3_SECRET_KEY: missing")
	}
	if cfg.DataDir, err = absDir(env, "DATA_DIR", "/data"); err != nil {
		errs = append(errs, err)
	}
	if cfg.TmpDir, err = absDir(env, "TMPDIR", "/tmp"); err != nil {
		errs = append(errs, err)
	}
	if cfg.MaxBytes, err = positive(env, "RESTORE_MAX_BYTES", defaultMaxBytes); err != nil {
		errs = append(errs, err)
	}
	if cfg.MaxEntries, err = positive(env, "RESTORE_MAX_ENTRIES", defaultMaxEntries); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("invalid settings: %w", err)
	}
	return cfg, nil
}

func nonEmpty(env map[string]string, name string) (string, bool) {
	v := strings.TrimSpace(env[name])
	return v, v != ""
}

// parseMode takes the mode from the only argument or JOB_MODE; both may be
// given when they agree.
func parseMode(args []string, fromEnv string) (mode, error) {
	if len(args) > 1 {
		return "", fmt.Errorf("arguments: want at most one (archive or restore), got %q", args)
	}
	fromEnv = strings.TrimSpace(fromEnv)
	var fromArg string
	if len(args) == 1 {
		fromArg = args[0]
	}
	check := func(where, v string) (mode, error) {
		switch m := mode(strings.ToLower(v)); m {
		case modeArchive, modeRestore:
			return m, nil
		}
		return "", fmt.Errorf("%s: %q is not a mode (archive or restore)", where, v)
	}
	switch {
	case fromArg == "" && fromEnv == "":
		return "", errors.New("JOB_MODE: missing (set JOB_MODE=archive|restore or pass archive|restore as the argument)")
	case fromArg == "":
		return check("JOB_MODE", fromEnv)
	case fromEnv == "":
		return check("argument", fromArg)
	}
	a, err := check("argument", fromArg)
	if err != nil {
		return "", err
	}
	e, err := check("JOB_MODE", fromEnv)
	if err != nil {
		return "", err
	}
	if a != e {
		return "", fmt.Errorf("JOB_MODE: %q contradicts the argument %q", fromEnv, fromArg)
	}
	return a, nil
}

// parseArchiveURL splits s3://bucket/key. The key is used as given; it must
// be a clean object path and must not be a checksum object itself.
func parseArchiveURL(raw string) (bucket, key string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	switch {
	case u.Scheme != "s3":
		return "", "", fmt.Errorf("%q: scheme must be s3", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Port() != "":
		return "", "", fmt.Errorf("%q: only s3://bucket/key is allowed (no user, port, query or fragment)", raw)
	}
	bucket = u.Host
	if err := checkBucket(bucket); err != nil {
		return "", "", fmt.Errorf("%q: %w", raw, err)
	}
	key = strings.TrimPrefix(u.Path, "/")
	switch {
	case key == "":
		return "", "", fmt.Errorf("%q: no object key after the bucket", raw)
	case strings.HasSuffix(key, "/"):
		return "", "", fmt.Errorf("%q: object key ends with /", raw)
	case path.Clean(key) != key || strings.HasPrefix(key, "../") || key == "..":
		return "", "", fmt.Errorf("%q: object key %q is not a clean path", raw, key)
	case strings.HasSuffix(key, ".meta"):
		return "", "", fmt.Errorf("%q: names a .meta object, not an archive", raw)
	}
	return bucket, key, nil
}

// checkBucket applies the S3 bucket naming rules.
func checkBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket %q must be 3 to 63 characters", b)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return fmt.Errorf("bucket %q may hold only lower-case letters, digits, '-' and '.'", b)
		}
	}
	if first, last := b[0], b[len(b)-1]; first == '-' || first == '.' || last == '-' || last == '.' {
		return fmt.Errorf("bucket %q must start and end with a letter or digit", b)
	}
	return nil
}

// parseEndpoint accepts host[:port] or http(s)://host[:port].
func parseEndpoint(raw string) (host string, secure, hasScheme bool, err error) {
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil {
			return "", false, false, fmt.Errorf("%q is not a URL: %w", raw, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return "", false, false, fmt.Errorf("%q: scheme must be http or https", raw)
		}
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
			return "", false, false, fmt.Errorf("%q: only scheme://host:port is allowed", raw)
		}
		raw, secure, hasScheme = u.Host, u.Scheme == "https", true
	}
	if raw == "" || strings.ContainsAny(raw, "/?#@ ") {
		return "", false, false, fmt.Errorf("%q is not host:port", raw)
	}
	return raw, secure, hasScheme, nil
}

func absDir(env map[string]string, name, def string) (string, error) {
	v, ok := nonEmpty(env, name)
	if !ok {
		return def, nil
	}
	if !filepath.IsAbs(v) {
		return "", fmt.Errorf("%s: %q is not an absolute path", name, v)
	}
	return filepath.Clean(v), nil
}

// positive reads a positive integer setting, def when unset.
func positive(env map[string]string, name string, def int64) (int64, error) {
	v, ok := nonEmpty(env, name)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive whole number", name, v)
	}
	return n, nil
}
