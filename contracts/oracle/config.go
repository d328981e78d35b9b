package oracle

import (
	"fmt"
	"math"
	"net/url"
	"time"
)

// Config is the daemon's configuration, `<home>/config.toml` (ORACLE-SPEC
// 2.7). The toml tags name the keys; parsing the file is the loader's job. A
// loader decodes the file into a zero Config, calls ApplyDefaults and then
// Validate, so that a required key missing from the file is reported by name
// while every other missing key takes its default.
type Config struct {
	Chain  ChainConfig  `toml:"chain"`
	Key    KeyConfig    `toml:"key"`
	Gas    GasConfig    `toml:"gas"`
	Retry  RetryConfig  `toml:"retry"`
	Worker WorkerConfig `toml:"worker"`
}

// ChainConfig is the [chain] table.
type ChainConfig struct {
	ID       string `toml:"id"`       // required; goes into the SignDoc
	Endpoint string `toml:"endpoint"` // required; the WebSocket is /websocket on the same host
}

// KeyConfig is the [key] table.
type KeyConfig struct {
	Name           string `toml:"name"`            // required
	KeyringDir     string `toml:"keyring_dir"`     // empty → home
	KeyringBackend string `toml:"keyring_backend"` // test, file or os
}

// GasConfig is the [gas] table.
type GasConfig struct {
	Limit      uint64  `toml:"limit"`      // 0 → default
	Adjustment float64 `toml:"adjustment"` // ≤ 0 → default; multiplier after code 11
	Prices     string  `toml:"prices"`     // required; a number, the denom agxn is implied
}

// RetryConfig is the [retry] table: the WebSocket re-subscription (D18).
type RetryConfig struct {
	MaxAttempts int `toml:"max_attempts"`  // ≤ 0 → default
	MaxDelaySec int `toml:"max_delay_sec"` // ≤ 0 → default
}

// WorkerConfig is the [worker] table.
type WorkerConfig struct {
	PoolSize    int `toml:"pool_size"`    // ≤ 0 → default
	ChannelSize int `toml:"channel_size"` // ≤ 0 → default
	TimeoutSec  int `toml:"timeout_sec"`  // ≤ 0 → default
}

// The defaults of ORACLE-SPEC 2.7.
const (
	DefaultChainEndpoint  = "http://localhost:26657"
	DefaultKeyName        = "mykey"
	DefaultKeyringBackend = "test"
	DefaultGasLimit       = uint64(70000)
	DefaultGasAdjustment  = 1.5
	DefaultGasPrices      = "630000000000"
	DefaultMaxAttempts    = 4
	DefaultMaxDelaySec    = 10
	DefaultPoolSize       = 4
	DefaultChannelSize    = 1024
	DefaultTimeoutSec     = 30
)

// DefaultConfig is the configuration a fresh home gets: every key at its
// default, the keyring in home.
func DefaultConfig(home string) Config {
	c := Config{
		Chain: ChainConfig{ID: DefaultChainID, Endpoint: DefaultChainEndpoint},
		Key:   KeyConfig{Name: DefaultKeyName},
		Gas:   GasConfig{Prices: DefaultGasPrices},
	}
	return c.ApplyDefaults(home)
}

// ApplyDefaults returns c with every optional key that is unset (zero or
// negative, or an empty keyring setting) at its default. The required keys
// chain.id, chain.endpoint, key.name and gas.prices are left alone, so that
// Validate can name them when they are missing.
func (c Config) ApplyDefaults(home string) Config {
	if c.Key.KeyringDir == "" {
		c.Key.KeyringDir = home
	}
	if c.Key.KeyringBackend == "" {
		c.Key.KeyringBackend = DefaultKeyringBackend
	}
	if c.Gas.Limit == 0 {
		c.Gas.Limit = DefaultGasLimit
	}
	if c.Gas.Adjustment <= 0 {
		c.Gas.Adjustment = DefaultGasAdjustment
	}
	if c.Retry.MaxAttempts <= 0 {
		c.Retry.MaxAttempts = DefaultMaxAttempts
	}
	if c.Retry.MaxDelaySec <= 0 {
		c.Retry.MaxDelaySec = DefaultMaxDelaySec
	}
	if c.Worker.PoolSize <= 0 {
		c.Worker.PoolSize = DefaultPoolSize
	}
	if c.Worker.ChannelSize <= 0 {
		c.Worker.ChannelSize = DefaultChannelSize
	}
	if c.Worker.TimeoutSec <= 0 {
		c.Worker.TimeoutSec = DefaultTimeoutSec
	}
	return c
}

// ConfigError names the configuration key that is missing or wrong.
type ConfigError struct {
	Key    string // e.g. "gas.prices"
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("config: %s: %s", e.Key, e.Reason)
}

// Validate checks c after ApplyDefaults and returns a *ConfigError naming the
// first offending key, in file order.
func (c Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return &ConfigError{Key: key, Reason: fmt.Sprintf(format, args...)}
	}
	if c.Chain.ID == "" {
		return bad("chain.id", "required")
	}
	if c.Chain.Endpoint == "" {
		return bad("chain.endpoint", "required")
	}
	if _, err := WebSocketURL(c.Chain.Endpoint); err != nil {
		return bad("chain.endpoint", "%v", err)
	}
	if c.Key.Name == "" {
		return bad("key.name", "required")
	}
	switch c.Key.KeyringBackend {
	case "test", "file", "os":
	default:
		return bad("key.keyring_backend", "want one of test, file, os, got %q", c.Key.KeyringBackend)
	}
	if c.Gas.Limit == 0 {
		return bad("gas.limit", "must be positive")
	}
	if math.IsNaN(c.Gas.Adjustment) || math.IsInf(c.Gas.Adjustment, 0) || c.Gas.Adjustment <= 0 {
		return bad("gas.adjustment", "must be a positive finite number, got %v", c.Gas.Adjustment)
	}
	if c.Gas.Prices == "" {
		return bad("gas.prices", "required")
	}
	if _, err := ParseGasPrice(c.Gas.Prices); err != nil {
		return bad("gas.prices", "%v", err)
	}
	for _, f := range []struct {
		key string
		v   int
	}{
		{"retry.max_attempts", c.Retry.MaxAttempts},
		{"retry.max_delay_sec", c.Retry.MaxDelaySec},
		{"worker.pool_size", c.Worker.PoolSize},
		{"worker.channel_size", c.Worker.ChannelSize},
		{"worker.timeout_sec", c.Worker.TimeoutSec},
	} {
		if f.v <= 0 {
			return bad(f.key, "must be positive, got %d", f.v)
		}
	}
	return nil
}

// WorkerTimeout is worker.timeout_sec as a duration.
func (c Config) WorkerTimeout() time.Duration {
	return time.Duration(c.Worker.TimeoutSec) * time.Second
}

// MaxDelay is retry.max_delay_sec as a duration.
func (c Config) MaxDelay() time.Duration {
	return time.Duration(c.Retry.MaxDelaySec) * time.Second
}

// WebSocketURL is the CometBFT WebSocket endpoint on the same host as the RPC
// endpoint: http and tcp become ws, https becomes wss, and the path is
// /websocket. The endpoint must be an absolute http, https or tcp URL with a
// host.
func WebSocketURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("not a URL: %w", err)
	}
	switch u.Scheme {
	case "http", "tcp":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("want an http, https or tcp URL, got %q", endpoint)
	}
	if u.Host == "" {
		return "", fmt.Errorf("no host in %q", endpoint)
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "/websocket", "", "", ""
	return u.String(), nil
}
