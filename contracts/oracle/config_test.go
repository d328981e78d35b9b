package oracle

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDefaultConfigIsTheSpecTable(t *testing.T) {
	c := DefaultConfig("/home/op/.oracled")
	require.Equal(t, Config{
		Chain:  ChainConfig{ID: "guru_631-1", Endpoint: "http://localhost:26657"},
		Key:    KeyConfig{Name: "mykey", KeyringDir: "/home/op/.oracled", KeyringBackend: "test"},
		Gas:    GasConfig{Limit: 70000, Adjustment: 1.5, Prices: "630000000000"},
		Retry:  RetryConfig{MaxAttempts: 4, MaxDelaySec: 10},
		Worker: WorkerConfig{PoolSize: 4, ChannelSize: 1024, TimeoutSec: 30},
	}, c)
	require.NoError(t, c.Validate())
}

func TestApplyDefaults(t *testing.T) {
	home := "/h"
	cases := []struct {
		name string
		in   func(*Config)
		want func(*Config)
	}{
		{"key.keyring_dir empty → home", func(c *Config) { c.Key.KeyringDir = "" }, func(c *Config) { c.Key.KeyringDir = home }},
		{"key.keyring_dir set is kept", func(c *Config) { c.Key.KeyringDir = "/k" }, func(c *Config) { c.Key.KeyringDir = "/k" }},
		{"key.keyring_backend empty → test", func(c *Config) { c.Key.KeyringBackend = "" }, func(c *Config) { c.Key.KeyringBackend = "test" }},
		{"gas.limit 0 → 70000", func(c *Config) { c.Gas.Limit = 0 }, func(c *Config) { c.Gas.Limit = 70000 }},
		{"gas.limit set is kept", func(c *Config) { c.Gas.Limit = 90000 }, func(c *Config) { c.Gas.Limit = 90000 }},
		{"gas.adjustment 0 → 1.5", func(c *Config) { c.Gas.Adjustment = 0 }, func(c *Config) { c.Gas.Adjustment = 1.5 }},
		{"gas.adjustment negative → 1.5", func(c *Config) { c.Gas.Adjustment = -2 }, func(c *Config) { c.Gas.Adjustment = 1.5 }},
		{"gas.adjustment set is kept", func(c *Config) { c.Gas.Adjustment = 1.2 }, func(c *Config) { c.Gas.Adjustment = 1.2 }},
		{"retry.max_attempts ≤ 0 → 4", func(c *Config) { c.Retry.MaxAttempts = -1 }, func(c *Config) { c.Retry.MaxAttempts = 4 }},
		{"retry.max_delay_sec ≤ 0 → 10", func(c *Config) { c.Retry.MaxDelaySec = 0 }, func(c *Config) { c.Retry.MaxDelaySec = 10 }},
		{"worker.pool_size ≤ 0 → 4", func(c *Config) { c.Worker.PoolSize = 0 }, func(c *Config) { c.Worker.PoolSize = 4 }},
		{"worker.channel_size ≤ 0 → 1024", func(c *Config) { c.Worker.ChannelSize = -5 }, func(c *Config) { c.Worker.ChannelSize = 1024 }},
		{"worker.timeout_sec ≤ 0 → 30", func(c *Config) { c.Worker.TimeoutSec = 0 }, func(c *Config) { c.Worker.TimeoutSec = 30 }},
		{"worker.pool_size set is kept", func(c *Config) { c.Worker.PoolSize = 9 }, func(c *Config) { c.Worker.PoolSize = 9 }},
		// Required keys have defaults for a fresh file but are never filled in
		// for a file that lacks them: Validate names them instead.
		{"chain.id is not defaulted", func(c *Config) { c.Chain.ID = "" }, func(c *Config) { c.Chain.ID = "" }},
		{"chain.endpoint is not defaulted", func(c *Config) { c.Chain.Endpoint = "" }, func(c *Config) { c.Chain.Endpoint = "" }},
		{"key.name is not defaulted", func(c *Config) { c.Key.Name = "" }, func(c *Config) { c.Key.Name = "" }},
		{"gas.prices is not defaulted", func(c *Config) { c.Gas.Prices = "" }, func(c *Config) { c.Gas.Prices = "" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := DefaultConfig(home)
			tc.in(&in)
			want := DefaultConfig(home)
			tc.want(&want)
			require.Equal(t, want, in.ApplyDefaults(home))
		})
	}
}

func TestValidateNamesTheKey(t *testing.T) {
	cases := []struct {
		name string
		mut  func(*Config)
		key  string
	}{
		{"chain.id missing", func(c *Config) { c.Chain.ID = "" }, "chain.id"},
		{"chain.endpoint missing", func(c *Config) { c.Chain.Endpoint = "" }, "chain.endpoint"},
		{"chain.endpoint not a URL", func(c *Config) { c.Chain.Endpoint = "localhost:26657" }, "chain.endpoint"},
		{"chain.endpoint without host", func(c *Config) { c.Chain.Endpoint = "http:///x" }, "chain.endpoint"},
		{"chain.endpoint unsupported scheme", func(c *Config) { c.Chain.Endpoint = "ftp://h:1" }, "chain.endpoint"},
		{"key.name missing", func(c *Config) { c.Key.Name = "" }, "key.name"},
		{"key.keyring_backend unknown", func(c *Config) { c.Key.KeyringBackend = "memory" }, "key.keyring_backend"},
		{"gas.adjustment NaN", func(c *Config) { c.Gas.Adjustment = math.NaN() }, "gas.adjustment"},
		{"gas.adjustment +Inf", func(c *Config) { c.Gas.Adjustment = math.Inf(1) }, "gas.adjustment"},
		{"gas.prices missing", func(c *Config) { c.Gas.Prices = "" }, "gas.prices"},
		{"gas.prices with denom", func(c *Config) { c.Gas.Prices = "630000000000agxn" }, "gas.prices"},
		{"gas.prices negative", func(c *Config) { c.Gas.Prices = "-1" }, "gas.prices"},
		{"gas.prices exponent", func(c *Config) { c.Gas.Prices = "6.3e11" }, "gas.prices"},
		{"gas.prices trailing dot", func(c *Config) { c.Gas.Prices = "5." }, "gas.prices"},
		{"gas.prices leading dot", func(c *Config) { c.Gas.Prices = ".5" }, "gas.prices"},
		{"gas.limit zero without defaults", func(c *Config) { c.Gas.Limit = 0 }, "gas.limit"},
		{"retry.max_attempts zero without defaults", func(c *Config) { c.Retry.MaxAttempts = 0 }, "retry.max_attempts"},
		{"retry.max_delay_sec zero without defaults", func(c *Config) { c.Retry.MaxDelaySec = 0 }, "retry.max_delay_sec"},
		{"worker.pool_size zero without defaults", func(c *Config) { c.Worker.PoolSize = 0 }, "worker.pool_size"},
		{"worker.channel_size zero without defaults", func(c *Config) { c.Worker.ChannelSize = 0 }, "worker.channel_size"},
		{"worker.timeout_sec zero without defaults", func(c *Config) { c.Worker.TimeoutSec = 0 }, "worker.timeout_sec"},
		{"the first offending key in file order wins", func(c *Config) { c.Gas.Prices = ""; c.Chain.ID = "" }, "chain.id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig("/h")
			tc.mut(&c)
			err := c.Validate()
			var ce *ConfigError
			require.True(t, errors.As(err, &ce), "want a ConfigError, got %v", err)
			require.Equal(t, tc.key, ce.Key)
			require.Contains(t, err.Error(), tc.key)
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	for _, mut := range []func(*Config){
		func(c *Config) { c.Key.KeyringBackend = "file" },
		func(c *Config) { c.Key.KeyringBackend = "os" },
		func(c *Config) { c.Chain.Endpoint = "https://rpc.example:443" },
		func(c *Config) { c.Chain.Endpoint = "tcp://127.0.0.1:26657" },
		func(c *Config) { c.Gas.Prices = "0.25" },
		func(c *Config) { c.Gas.Prices = "0" },
	} {
		c := DefaultConfig("/h")
		mut(&c)
		require.NoError(t, c.Validate())
	}
}

func TestWebSocketURL(t *testing.T) {
	cases := map[string]string{
		"http://localhost:26657":       "ws://localhost:26657/websocket",
		"https://rpc.example":          "wss://rpc.example/websocket",
		"tcp://127.0.0.1:26657":        "ws://127.0.0.1:26657/websocket",
		"http://127.0.0.1:9/some/path": "ws://127.0.0.1:9/websocket",
	}
	for in, want := range cases {
		got, err := WebSocketURL(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
}

func TestConfigDurations(t *testing.T) {
	c := DefaultConfig("/h")
	require.Equal(t, sec(30), c.WorkerTimeout())
	require.Equal(t, sec(10), c.MaxDelay())
	require.Equal(t, sec(40), ShutdownBound(c.WorkerTimeout()))
}
