package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/wsconverge/converge/contracts/oracle"
	oracled "github.com/wsconverge/converge/refimpl/oracle"
	"github.com/wsconverge/converge/wire/keyring"
)

// oracledCommand is `converge oracled`: the reference oracle daemon as a
// process, with its key and config subcommands.
func (c *config) oracledCommand() *cobra.Command {
	var home, logLevel string
	cmd := &cobra.Command{
		Use:   "oracled",
		Short: "run the reference oracle daemon against a CometBFT chain",
		Long: `Runs the reference oracle daemon (ORACLE-SPEC, seed 004): it watches the
chain for oracle request documents that name this provider, fetches each
request's value from its data source every round, and submits it in a
signed MsgSubmitOracleData.

The daemon reads DIR/config.toml (write a default one with 'converge
oracled init'), signs with the key key.name from the keyring in
key.keyring_dir (add it with 'converge oracled keys add'), and logs to
DIR/logs/oracled.<start time>.log and to stdout.

SIGINT or SIGTERM stops it gracefully within worker.timeout_sec + 10 s.
Exit status: 0 after a stop, 1 when the chain cannot be reached at start or
the WebSocket cannot be re-subscribed, 2 for a bad configuration or key
(before the chain is contacted).`,
		Example: `  converge oracled init --home ~/.oracled
  converge oracled keys add mykey --home ~/.oracled --private-key 4c0883a6…
  converge oracled --home ~/.oracled`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			level, err := parseLogLevel(logLevel)
			if err != nil {
				return usagef("--log-level: %v", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			code, err := oracled.Run(ctx, oracled.Options{Home: home, Stdout: c.stdout, LogLevel: level})
			if code == oracled.ExitOK {
				return nil
			}
			return &codeError{code: code, err: err}
		},
	}
	cmd.PersistentFlags().StringVar(&home, "home", oracled.DefaultHome(), "the daemon's home: config.toml, logs, and by default the keyring")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "least level logged: debug (adds the white-box trace points), info, warn, error")
	cmd.AddCommand(c.oracledInitCommand(&home), c.oracledKeysCommand(&home))
	return cmd
}

func parseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("want debug, info, warn or error, got %q", s)
	}
	return l, nil
}

func (c *config) oracledInitCommand(home *string) *cobra.Command {
	var endpoint, chainID, keyName string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "write a default config.toml into the daemon's home",
		Long: `Writes DIR/config.toml with every key at its default (ORACLE-SPEC 2.7),
or as given by the flags. An existing config.toml is never replaced.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := oracle.DefaultConfig(*home)
			cfg.Key.KeyringDir = "" // empty: the home, wherever it moves
			cfg.Chain.Endpoint, cfg.Chain.ID, cfg.Key.Name = endpoint, chainID, keyName
			if err := cfg.ApplyDefaults(*home).Validate(); err != nil {
				return usagef("%v", err)
			}
			p, err := oracled.WriteConfig(*home, cfg)
			if errors.Is(err, fs.ErrExist) {
				return usagef("%s already exists", p)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "wrote %s\n", p)
			return nil
		},
	}
	cmd.Flags().StringVar(&endpoint, "chain-endpoint", oracle.DefaultChainEndpoint, "the CometBFT RPC endpoint (chain.endpoint)")
	cmd.Flags().StringVar(&chainID, "chain-id", oracle.DefaultChainID, "the chain id (chain.id)")
	cmd.Flags().StringVar(&keyName, "key-name", oracle.DefaultKeyName, "the key to sign with (key.name)")
	return cmd
}

func (c *config) oracledKeysCommand(home *string) *cobra.Command {
	var keyringDir string
	keysCmd := &cobra.Command{
		Use:   "keys",
		Short: "manage the daemon's keyring",
		Long: `Manages the keyring: one file per key, KEYRING/keyring-test/NAME.json
(mode 0600), holding the eth_secp256k1 private key in hex and its guru
address. KEYRING is --keyring-dir, or key.keyring_dir of DIR/config.toml,
or DIR. Only the "test" backend exists (unencrypted keys).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	keysCmd.PersistentFlags().StringVar(&keyringDir, "keyring-dir", "", "the keyring directory (default: key.keyring_dir of config.toml, or --home)")

	var privHex, privFile string
	var overwrite bool
	add := &cobra.Command{
		Use:   "add NAME",
		Short: "add a key from its private key",
		Long: `Writes key NAME from an eth_secp256k1 private key (32 bytes in hex, with or
without 0x) given by --private-key or read from --private-key-file, and
prints its guru address.`,
		Args: exactArgs(1, "the key's NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := resolveKeyringDir(*home, keyringDir)
			if err != nil {
				return err
			}
			text := privHex
			switch {
			case privHex != "" && privFile != "":
				return usagef("give --private-key or --private-key-file, not both")
			case privFile != "":
				b, err := os.ReadFile(privFile)
				if err != nil {
					return usagef("--private-key-file: %v", err)
				}
				text = strings.TrimSpace(string(b))
			case privHex == "":
				return usagef("--private-key or --private-key-file is required")
			}
			k, err := keyring.ParsePrivateKey(text)
			if err != nil {
				return usagef("%v", err)
			}
			addr, err := keyring.Add(dir, args[0], k, overwrite)
			if err != nil {
				return usagef("%v", err)
			}
			fmt.Fprintf(c.stdout, "%s\n", addr)
			return nil
		},
	}
	add.Flags().StringVar(&privHex, "private-key", "", "the private key in hex")
	add.Flags().StringVar(&privFile, "private-key-file", "", "a file holding the private key in hex")
	add.Flags().BoolVar(&overwrite, "overwrite", false, "replace an existing key of that name")

	show := &cobra.Command{
		Use:   "show NAME",
		Short: "print a key's address",
		Args:  exactArgs(1, "the key's NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := resolveKeyringDir(*home, keyringDir)
			if err != nil {
				return err
			}
			k, err := keyring.Load(dir, args[0])
			if err != nil {
				return usagef("%v", err)
			}
			fmt.Fprintf(c.stdout, "%s\n", k.PubKey().Address())
			return nil
		},
	}
	keysCmd.AddCommand(add, show)
	return keysCmd
}

// resolveKeyringDir is --keyring-dir, else key.keyring_dir of the home's
// config.toml (with its backend checked), else the home.
func resolveKeyringDir(home, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	cfg, err := oracled.LoadConfig(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return home, nil
	case err != nil:
		return "", usagef("%v (or give --keyring-dir)", err)
	}
	if err := keyring.CheckBackend(cfg.Key.KeyringBackend); err != nil {
		return "", usagef("config: key.keyring_backend: %v", err)
	}
	return cfg.Key.KeyringDir, nil
}
