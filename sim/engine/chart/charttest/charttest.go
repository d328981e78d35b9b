// Package charttest reads a timeline page back for tests: the rows of
// swimlanes, each lane's values, the marks and the violations, from the
// parsed HTML, as a reader's browser would see them.
package charttest

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// Render runs write into a buffer and parses the page; it returns the
// document and the raw text.
func Render(t *testing.T, write func(io.Writer) error) (*html.Node, string) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, write(&b))
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	require.NotContains(t, b.String(), "ZgotmplZ", "every value passed the template's filters")
	return doc, b.String()
}

// Attr is n's attribute key ("" if absent).
func Attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// HasClass reports whether n's class list holds c.
func HasClass(n *html.Node, c string) bool {
	for _, f := range strings.Fields(Attr(n, "class")) {
		if f == c {
			return true
		}
	}
	return false
}

// Find lists the elements under n for which match holds, in document
// order.
func Find(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

// Text is the text under n.
func Text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// Rows are the page's rows of class (chart's "instance" or "subject"),
// in order.
func Rows(doc *html.Node, class string) []*html.Node {
	return Find(doc, func(n *html.Node) bool { return n.Data == "g" && HasClass(n, class) })
}

// Values are the values a row's lane holds, in order.
func Values(row *html.Node, lane string) []string {
	var out []string
	for _, g := range Find(row, func(n *html.Node) bool { return n.Data == "g" && Attr(n, "data-lane") == lane }) {
		for _, r := range Find(g, func(n *html.Node) bool { return n.Data == "rect" }) {
			out = append(out, Attr(r, "data-value"))
		}
	}
	return out
}

// Rects are the rects of class under n.
func Rects(n *html.Node, class string) []*html.Node {
	return Find(n, func(n *html.Node) bool { return n.Data == "rect" && HasClass(n, class) })
}
