package archive

import (
	"flag"
	"os"
	"testing"
)

// fuzzMinimizeLimit caps the minimization of each new input the fuzzer
// finds, unless -fuzzminimizetime is given. FuzzExtract's inputs are tar
// streams (512-byte blocks, a KiB at least) and Go's minimizer tries
// removing every run of bytes — quadratic in the input — so with the
// default minute per input, fuzzing stalls for most of each minute in which
// coverage grows. 2,000 calls take a fraction of a second.
const fuzzMinimizeLimit = "2000x"

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		if err := flag.Set("test.fuzzminimizetime", fuzzMinimizeLimit); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
