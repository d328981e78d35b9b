// Command refchild serves the reference coordinator and API — or, with
// --mutant NAME, one of the catalogue's mutants of it — as a child
// process of the driver protocol:
//
//	converge sim --exec "go run ./cmd/refchild"
//	converge sim --exec "refchild --mutant no-cas-claim"
//	converge sim --exec "refchild --protocol 1"
//
// It is the proof that the protocol loses nothing: run through it, the
// reference records, seed for seed, the history it records in process —
// under version 3, where the harness takes its quiet steps for it and sends
// rows as their changes, as under version 1 (--protocol 1), where every
// step crosses the pipe.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	wsref "github.com/wsconverge/converge/refimpl/workspace"
	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver/client"
	"github.com/wsconverge/converge/sim/workspace/driver/wire"
)

func main() {
	fs := flag.NewFlagSet("refchild", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	mutant := fs.String("mutant", "", "serve the named mutant instead of the reference")
	protocol := fs.Int("protocol", wire.Version, "the highest protocol version to speak (1 to 3)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Println("usage: refchild [--mutant NAME] [--protocol 1|2]\n\nServes the reference coordinator and API (or a mutant) as a child of the driver\nprotocol on standard input and output; run it with converge sim --exec.")
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "refchild: %v\n", err)
		os.Exit(2)
	}
	if *protocol < wire.MinVersion || *protocol > wire.Version {
		fmt.Fprintf(os.Stderr, "refchild: --protocol %d: want %d to %d\n", *protocol, wire.MinVersion, wire.Version)
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "refchild: unexpected argument %q\n", fs.Arg(0))
		os.Exit(2)
	}
	system := wsref.NewSystem()
	if *mutant != "" {
		m, err := wsmutants.Lookup(*mutant)
		if err != nil {
			fmt.Fprintf(os.Stderr, "refchild: %v\n", err)
			os.Exit(2)
		}
		system = m.System
	}
	client.Main(system, client.Protocol(*protocol))
}
