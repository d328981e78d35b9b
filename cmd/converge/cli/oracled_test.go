package cli

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts/oracle"
	oracled "github.com/wsconverge/converge/refimpl/oracle"
	"github.com/wsconverge/converge/refimpl/oracle/oracledtest"
	"github.com/wsconverge/converge/wire/keys"
)

var oracledKey = keys.PrivKeyFromSeed("cli-oracled-test")

func TestOracledInitAndKeys(t *testing.T) {
	home := t.TempDir()
	code, out, errOut := invoke(t, nil, "oracled", "init", "--home", home, "--chain-endpoint", "http://127.0.0.1:9", "--key-name", "prov")
	require.Equal(t, ExitOK, code, errOut)
	require.Contains(t, out, filepath.Join(home, "config.toml"))
	cfg, err := oracled.LoadConfig(home)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9", cfg.Chain.Endpoint)
	require.Equal(t, "prov", cfg.Key.Name)
	require.Equal(t, home, cfg.Key.KeyringDir)
	require.Equal(t, oracle.DefaultConfig(home).Worker, cfg.Worker)

	code, _, errOut = invoke(t, nil, "oracled", "init", "--home", home)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errOut, "already exists")

	hexKey := hex.EncodeToString(oracledKey.Bytes())
	code, out, errOut = invoke(t, nil, "oracled", "keys", "add", "prov", "--home", home, "--private-key", "0x"+hexKey)
	require.Equal(t, ExitOK, code, errOut)
	require.Equal(t, oracledKey.PubKey().Address()+"\n", out)
	code, out, _ = invoke(t, nil, "oracled", "keys", "show", "prov", "--home", home)
	require.Equal(t, ExitOK, code)
	require.Equal(t, oracledKey.PubKey().Address()+"\n", out)

	keyFile := filepath.Join(t.TempDir(), "key.hex")
	require.NoError(t, os.WriteFile(keyFile, []byte(hexKey+"\n"), 0o600))
	other := t.TempDir()
	code, out, errOut = invoke(t, nil, "oracled", "keys", "add", "k2", "--home", home, "--keyring-dir", other, "--private-key-file", keyFile)
	require.Equal(t, ExitOK, code, errOut)
	require.FileExists(t, filepath.Join(other, "keyring-test", "k2.json"))
	require.Equal(t, oracledKey.PubKey().Address()+"\n", out)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"keys", "add", "prov", "--home", home, "--private-key", hexKey}, "already exists"},
		{[]string{"keys", "add", "x", "--home", home}, "--private-key or --private-key-file is required"},
		{[]string{"keys", "add", "x", "--home", home, "--private-key", "zz"}, "not hex"},
		{[]string{"keys", "add", "--home", home, "--private-key", hexKey}, "want the key's NAME"},
		{[]string{"keys", "show", "nobody", "--home", home}, "key not found"},
		{[]string{"--home", home, "--log-level", "loud"}, "--log-level"},
	} {
		code, _, errOut := invoke(t, nil, append([]string{"oracled"}, tc.args...)...)
		require.Equal(t, ExitUsage, code, tc.args)
		require.Contains(t, errOut, tc.want, tc.args)
	}
}

// A bad configuration is exit status 2 with one line naming the problem.
func TestOracledBadConfig(t *testing.T) {
	home := t.TempDir()
	code, _, errOut := invoke(t, nil, "oracled", "--home", home)
	require.Equal(t, oracled.ExitBadConfig, code)
	require.Contains(t, errOut, "config.toml")

	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte("[chain]\nid='x'\nendpoint='http://h:1'\n[key]\nname='k'\n[gas]\nprices='1'\n[wrker]\npool_size=2\n"), 0o600))
	code, _, errOut = invoke(t, nil, "oracled", "--home", home)
	require.Equal(t, oracled.ExitBadConfig, code)
	require.Contains(t, errOut, "unknown key wrker")
	require.Equal(t, 2, strings.Count(errOut, "\n"), "one line and the pointer to --help")
}

// The command stops gracefully on a real SIGTERM and exits 0.
func TestOracledStopsOnSIGTERM(t *testing.T) {
	chain := oracledtest.NewChain(oracle.DefaultChainID, time.Now())
	chain.AddAccount(oracledKey.PubKey().Address(), 1, 0)
	node := oracledtest.NewNode(t, chain)
	home := t.TempDir()
	code, _, errOut := invoke(t, nil, "oracled", "init", "--home", home, "--chain-endpoint", node.URL())
	require.Equal(t, ExitOK, code, errOut)
	code, _, errOut = invoke(t, nil, "oracled", "keys", "add", oracle.DefaultKeyName, "--home", home, "--private-key", hex.EncodeToString(oracledKey.Bytes()))
	require.Equal(t, ExitOK, code, errOut)

	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), []string{"oracled", "--home", home}, &out, &errb, WithProgram("converge"))
	}()
	require.Eventually(t, func() bool { return node.LiveSubscriptions() == 3 }, 20*time.Second, 5*time.Millisecond)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case code := <-done:
		require.Equal(t, ExitOK, code, errb.String())
	case <-time.After(oracle.ShutdownBound(oracle.DefaultTimeoutSec * time.Second)):
		t.Fatal("no exit within T_sd")
	}
	logs, err := filepath.Glob(filepath.Join(home, "logs", "oracled.*.log"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
}
