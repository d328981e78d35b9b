package failrec

import (
	"flag"
	"fmt"
	"strings"
	"testing"
)

// Recorder records a failure and the log instead of failing a test. Name
// is what it reports as its test's name.
type Recorder struct {
	TestName string
	failed   bool
	log      strings.Builder
}

func (r *Recorder) Helper()                      {}
func (r *Recorder) Name() string                 { return r.TestName }
func (r *Recorder) Logf(f string, args ...any)   { fmt.Fprintf(&r.log, f+"\n", args...) }
func (r *Recorder) Log(args ...any)              { fmt.Fprintln(&r.log, args...) }
func (r *Recorder) Skipf(f string, args ...any)  { panic("skip: " + fmt.Sprintf(f, args...)) }
func (r *Recorder) Skip(args ...any)             { panic(fmt.Sprint(args...)) }
func (r *Recorder) SkipNow()                     { panic("skip") }
func (r *Recorder) Errorf(f string, args ...any) { r.failed = true; r.Logf(f, args...) }
func (r *Recorder) Error(args ...any)            { r.failed = true; r.Log(args...) }
func (r *Recorder) Fatalf(f string, args ...any) { r.failed = true; r.Logf(f, args...) }
func (r *Recorder) Fatal(args ...any)            { r.failed = true; r.Log(args...) }
func (r *Recorder) FailNow()                     { r.failed = true }
func (r *Recorder) Fail()                        { r.failed = true }
func (r *Recorder) Failed() bool                 { return r.failed }
func (r *Recorder) String() string               { return r.log.String() }

// SetFlags sets command-line flags (rapid's: "rapid.seed", "rapid.checks",
// "rapid.nofailfile", "rapid.shrinktime") for one test and restores them
// when it ends.
func SetFlags(t testing.TB, flags map[string]string) {
	t.Helper()
	for name, v := range flags {
		f := flag.Lookup(name)
		if f == nil {
			t.Fatalf("no flag %q", name)
			return
		}
		old := f.Value.String()
		if err := flag.Set(name, v); err != nil {
			t.Fatalf("set %s: %v", name, err)
		}
		t.Cleanup(func() {
			if err := flag.Set(name, old); err != nil {
				t.Errorf("restore %s: %v", name, err)
			}
		})
	}
}
