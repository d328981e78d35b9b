package main

import (
	"context"
	"fmt"
	"os"

	oracled "github.com/wsconverge/converge/refimpl/oracle"
	oraclemutants "github.com/wsconverge/converge/scenarios/mutants/oracle"
	oraclesim "github.com/wsconverge/converge/sim/oracle"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "oraclerun:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string) error {
	o, err := oraclemutants.ParseRunArgs(args)
	if err != nil {
		return err
	}
	// Lean: the records no checker reads are hashed, not kept.
	o.System, o.Keep, o.Lean = oracled.NewSystem(), true, true
	res, err := oraclesim.Run(ctx, o)
	if err != nil {
		return err
	}
	return oraclemutants.WriteHistory(os.Stdout, res)
}
