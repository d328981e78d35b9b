package cli

import (
	"fmt"
	"io"
)

// progress is the one-line status of a long run, on stderr when stderr is
// a terminal (withProgress in tests). The line is redrawn in place, so a
// report line written to stdout, which is usually the same terminal, must
// clear it first or it would be printed after the status text.
type progress struct {
	w     io.Writer // nil: no progress
	shown bool
}

// show replaces the status line.
func (p *progress) show(format string, args ...any) {
	if p.w == nil {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K"+format, args...)
	p.shown = true
}

// clear removes the status line, if one is shown.
func (p *progress) clear() {
	if p.w == nil || !p.shown {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
	p.shown = false
}

// showProgress shows how many seeds are done of the minimum, and past it
// that steered seeds are running toward unmet obligations.
func showProgress(p *progress, done, minimum, failed int) {
	if done <= minimum {
		p.show("[%d/%d] seeds done, %d failed …", done, minimum, failed)
		return
	}
	p.show("[%d/%d+%d] seeds done, %d failed, steering toward unmet obligations …", done, minimum, done-minimum, failed)
}
