package engine

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/wsconverge/converge/judge"
)

// JUnit test reports for CI systems (the de-facto format of Jenkins,
// GitLab and GitHub test reporters: testsuites > testsuite > testcase).

// JUnitSuites is a JUnit report.
type JUnitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr,omitempty"`
	Suites  []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one suite: a seed, a system, a scenario.
type JUnitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     float64     `xml:"time,attr"`
	Cases    []JUnitCase `xml:"testcase"`
	Out      string      `xml:"system-out,omitempty"`
}

// JUnitCase is one test case: a checker's verdict, say.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *JUnitFailure `xml:"failure,omitempty"`
	Skipped   *JUnitSkipped `xml:"skipped,omitempty"`
	Out       string        `xml:"system-out,omitempty"`
}

// JUnitFailure marks a failed case.
type JUnitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnitSkipped marks a case that did not run or proved nothing (a checker
// whose situation never arose).
type JUnitSkipped struct {
	Message string `xml:"message,attr"`
}

// Add appends c to the suite and counts it.
func (s *JUnitSuite) Add(c JUnitCase) {
	s.Tests++
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Skipped != nil:
		s.Skipped++
	}
	s.Cases = append(s.Cases, c)
}

// Write writes the report as XML.
func (r *JUnitSuites) Write(w io.Writer) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// CheckerCase is checker's case in a run judged by rep, in either world:
// failed when rep holds a violation of it (the message is the first; the
// text is every one, each followed by its evidence: evidence(i) for rep's
// i-th violation, when it reports one; evidence may be nil). A checker with no violation gets a case
// with neither failure nor skip: the caller says what its situation's
// count makes of it.
func CheckerCase(checker, class string, rep *judge.Report, evidence func(i int) ([]string, bool)) JUnitCase {
	c := JUnitCase{Name: checker, Classname: class}
	if rep == nil {
		return c
	}
	var text []string
	for i, v := range rep.Violations {
		if v.Checker != checker {
			continue
		}
		if c.Failure == nil {
			c.Failure = &JUnitFailure{Message: v.String(), Type: v.Contract}
		}
		text = append(text, v.String())
		if evidence != nil {
			if ev, ok := evidence(i); ok {
				text = append(text, strings.Join(ev, "\n"))
			}
		}
	}
	if c.Failure != nil {
		c.Failure.Text = strings.Join(text, "\n\n")
	}
	return c
}
