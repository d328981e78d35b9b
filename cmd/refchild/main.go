// Command refchild serves the reference coordinator and API — or, with
// --mutant NAME, one of the catalogue's mutants of it — as a child
// process of the driver protocol:
//
//	converge sim --exec "go run ./sim/driver/refchild"
//	converge sim --exec "refchild --mutant no-cas-claim"
//
// It is the proof that the protocol loses nothing: run through it, the
// reference records, seed for seed, the history it records in process.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/wsconverge/converge/contracts/ports"
	wsref "github.com/wsconverge/converge/refimpl/workspace"
	wsmutants "github.com/wsconverge/converge/scenarios/mutants/workspace"
	"github.com/wsconverge/converge/sim/workspace/driver/client"
)

func main() {
	fs := flag.NewFlagSet("refchild", flag.ContinueOnError)
	mutant := fs.String("mutant", "", "serve the named mutant instead of the reference")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "refchild: unexpected argument %q\n", fs.Arg(0))
		os.Exit(2)
	}
	var system ports.System = wsref.NewSystem()
	if *mutant != "" {
		m, err := wsmutants.Lookup(*mutant)
		if err != nil {
			fmt.Fprintf(os.Stderr, "refchild: %v\n", err)
			os.Exit(2)
		}
		system = m.System
	}
	client.Main(system)
}
