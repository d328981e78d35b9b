package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func validEnv() map[string]string {
	return map[string]string{
		"JOB_MODE":      "archive",
		"ARCHIVE_URL":   "s3://workspaces/archives/ws-1/op-7/home.tar.zst",
		"S3_ENDPOINT":   "minio:9000",
		"S3_ACCESS_KEY": "ak",
		"S3_SECRET_KEY": "sk",
	}
}

func with(env map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "<unset>" {
			delete(out, kv[i])
			continue
		}
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestParseConfigDefaults(t *testing.T) {
	cfg, err := parseConfig(nil, validEnv())
	require.NoError(t, err)
	require.Equal(t, config{
		Mode:       modeArchive,
		Bucket:     "workspaces",
		Key:        "archives/ws-1/op-7/home.tar.zst",
		Endpoint:   "minio:9000",
		AccessKey:  "ak",
		SecretKey:  "sk",
		DataDir:    "/data",
		TmpDir:     "/tmp",
		MaxBytes:   defaultMaxBytes,
		MaxEntries: defaultMaxEntries,
	}, cfg)
	require.Equal(t, "archives/ws-1/op-7/home.tar.zst.meta", cfg.metaKey())
	require.Equal(t, "s3://workspaces/archives/ws-1/op-7/home.tar.zst", cfg.archiveURL())
}

func TestParseConfigOverrides(t *testing.T) {
	cfg, err := parseConfig([]string{"restore"}, with(validEnv(),
		"JOB_MODE", "<unset>", "S3_SECURE", "true", "DATA_DIR", "/vol/", "TMPDIR", "/scratch"))
	require.NoError(t, err)
	require.Equal(t, modeRestore, cfg.Mode)
	require.True(t, cfg.Secure)
	require.Equal(t, "/vol", cfg.DataDir)
	require.Equal(t, "/scratch", cfg.TmpDir)

	cfg, err = parseConfig(nil, with(validEnv(), "RESTORE_MAX_BYTES", "1048576", "RESTORE_MAX_ENTRIES", " 10 "))
	require.NoError(t, err)
	require.Equal(t, int64(1<<20), cfg.MaxBytes)
	require.Equal(t, int64(10), cfg.MaxEntries)

	cfg, err = parseConfig([]string{"archive"}, with(validEnv(), "S3_ENDPOINT", "https://s3.example.com"))
	require.NoError(t, err)
	require.Equal(t, modeArchive, cfg.Mode, "argument and JOB_MODE agree")
	require.Equal(t, "s3.example.com", cfg.Endpoint)
	require.True(t, cfg.Secure, "the https scheme implies TLS")

	cfg, err = parseConfig(nil, with(validEnv(), "S3_ENDPOINT", "http://10.0.0.1:9000/", "S3_SECURE", "false"))
	require.NoError(t, err)
	require.Equal(t, "10.0.0.1:9000", cfg.Endpoint)
	require.False(t, cfg.Secure)
}

func TestParseConfigErrorsNameTheVariable(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no mode", nil, with(validEnv(), "JOB_MODE", "<unset>"), "JOB_MODE: missing"},
		{"bad mode", nil, with(validEnv(), "JOB_MODE", "backup"), "JOB_MODE"},
		{"bad argument", []string{"backup"}, with(validEnv(), "JOB_MODE", "<unset>"), "argument"},
		{"contradiction", []string{"restore"}, validEnv(), "JOB_MODE"},
		{"two arguments", []string{"archive", "restore"}, validEnv(), "arguments"},
		{"no url", nil, with(validEnv(), "ARCHIVE_URL", "<unset>"), "ARCHIVE_URL: missing"},
		{"http url", nil, with(validEnv(), "ARCHIVE_URL", "http://b/k.tar.zst"), "ARCHIVE_URL"},
		{"no key", nil, with(validEnv(), "ARCHIVE_URL", "s3://bucket"), "ARCHIVE_URL"},
		{"dir key", nil, with(validEnv(), "ARCHIVE_URL", "s3://bucket/archives/"), "ARCHIVE_URL"},
		{"dotdot key", nil, with(validEnv(), "ARCHIVE_URL", "s3://bucket/a/../b.tar.zst"), "ARCHIVE_URL"},
		{"meta key", nil, with(validEnv(), "ARCHIVE_URL", "s3://bucket/a/home.tar.zst.meta"), "ARCHIVE_URL"},
		{"bad bucket", nil, with(validEnv(), "ARCHIVE_URL", "s3://My_Bucket/k.tar.zst"), "ARCHIVE_URL"},
		{"short bucket", nil, with(validEnv(), "ARCHIVE_URL", "s3://ab/k.tar.zst"), "ARCHIVE_URL"},
		{"query", nil, with(validEnv(), "ARCHIVE_URL", "s3://bucket/k.tar.zst?versionId=1"), "ARCHIVE_URL"},
		{"no endpoint", nil, with(validEnv(), "S3_ENDPOINT", " "), "S3_ENDPOINT: missing"},
		{"endpoint path", nil, with(validEnv(), "S3_ENDPOINT", "http://minio:9000/x"), "S3_ENDPOINT"},
		{"endpoint scheme", nil, with(validEnv(), "S3_ENDPOINT", "ftp://minio:9000"), "S3_ENDPOINT"},
		{"scheme contradicts", nil, with(validEnv(), "S3_ENDPOINT", "http://minio:9000", "S3_SECURE", "true"), "S3_ENDPOINT"},
		{"bad secure", nil, with(validEnv(), "S3_SECURE", "maybe"), "S3_SECURE"},
		{"no access key", nil, with(validEnv(), "S3_ACCESS_KEY", "<unset>"), "S3_ACCESS_KEY: missing"},
		{"no secret key", nil, with(validEnv(), "S3_SECRET_KEY", ""), "S3_SECRET_KEY: missing"},
		{"relative data dir", nil, with(validEnv(), "DATA_DIR", "data"), "DATA_DIR"},
		{"relative tmpdir", nil, with(validEnv(), "TMPDIR", "tmp"), "TMPDIR"},
		{"zero quota", nil, with(validEnv(), "RESTORE_MAX_BYTES", "0"), "RESTORE_MAX_BYTES"},
		{"quota with a unit", nil, with(validEnv(), "RESTORE_MAX_BYTES", "10GiB"), "RESTORE_MAX_BYTES"},
		{"negative entries", nil, with(validEnv(), "RESTORE_MAX_ENTRIES", "-1"), "RESTORE_MAX_ENTRIES"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(tc.args, tc.env)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestParseConfigReportsEveryProblem(t *testing.T) {
	_, err := parseConfig(nil, map[string]string{"S3_SECURE": "x"})
	require.Error(t, err)
	for _, name := range []string{"JOB_MODE", "ARCHIVE_URL", "S3_ENDPOINT", "S3_ACCESS_KEY", "S3_SECRET_KEY", "S3_SECURE"} {
		require.ErrorContains(t, err, name)
	}
}

func TestSecretsStayOutOfErrors(t *testing.T) {
	_, err := parseConfig(nil, with(validEnv(), "S3_SECRET_KEY", "hunter2-secret", "JOB_MODE", "bogus"))
	require.Error(t, err)
	require.NotContains(t, err.Error(), "hunter2-secret")
}

func TestEnviron(t *testing.T) {
	require.Equal(t, map[string]string{"A": "1", "B": "x=y", "C": ""}, environ([]string{"A=1", "B=x=y", "C=", "junk"}))
}

func TestDefaultRetryBudget(t *testing.T) {
	require.Len(t, defaultRetry.delays, 3, "three retries")
	var total time.Duration
	for _, d := range defaultRetry.delays {
		total += d
	}
	require.GreaterOrEqual(t, total, 30*time.Second)
	require.LessOrEqual(t, total, 60*time.Second)
}
