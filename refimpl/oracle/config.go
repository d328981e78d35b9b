package oracle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/wsconverge/converge/contracts/oracle"
)

// ConfigFile is the configuration's name inside home.
const ConfigFile = "config.toml"

// DefaultHome is ~/.oracled, or .oracled in the working directory when the
// home directory is unknown.
func DefaultHome() string {
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return ".oracled"
	}
	return filepath.Join(h, ".oracled")
}

// LoadConfig reads <home>/config.toml (ORACLE-SPEC 2.7): an unknown key is
// an error naming it, a missing optional key takes its default, and a
// missing or invalid required key is an error naming it (a
// *oracle.ConfigError).
func LoadConfig(home string) (oracle.Config, error) {
	p := filepath.Join(home, ConfigFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return oracle.Config{}, fmt.Errorf("config: %w", err)
	}
	var cfg oracle.Config
	dec := toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return oracle.Config{}, fmt.Errorf("config %s: %w", p, describeTOMLError(err))
	}
	cfg = cfg.ApplyDefaults(home)
	if err := cfg.Validate(); err != nil {
		return oracle.Config{}, fmt.Errorf("%s: %w", p, err)
	}
	return cfg, nil
}

// describeTOMLError names the unknown keys, or gives the line of a syntax
// or type error.
func describeTOMLError(err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		var names []string
		for _, e := range strict.Errors {
			names = append(names, strings.Join(e.Key(), "."))
		}
		return fmt.Errorf("unknown key %s", strings.Join(names, ", "))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		if k := de.Key(); len(k) > 0 {
			return fmt.Errorf("line %d, column %d: key %s: %s", row, col, strings.Join(k, "."), strings.TrimPrefix(de.Error(), "toml: "))
		}
		return fmt.Errorf("line %d, column %d: %s", row, col, strings.TrimPrefix(de.Error(), "toml: "))
	}
	return err
}

// WriteConfig writes cfg as <home>/config.toml and returns its path,
// refusing to replace an existing file (an error wrapping fs.ErrExist).
func WriteConfig(home string, cfg oracle.Config) (string, error) {
	p := filepath.Join(home, ConfigFile)
	b, err := toml.Marshal(cfg)
	if err != nil {
		return p, fmt.Errorf("config: %w", err)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return p, fmt.Errorf("config: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return p, fmt.Errorf("config: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return p, fmt.Errorf("config: %w", err)
	}
	if err := f.Close(); err != nil {
		return p, fmt.Errorf("config: %w", err)
	}
	return p, nil
}
