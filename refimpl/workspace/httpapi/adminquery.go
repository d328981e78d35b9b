package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/wsconverge/converge/contracts"
)

// Admin query parameters.
const (
	adminParamHealth  = "health"
	adminParamDisplay = "display"
)

// parseAdminQuery validates the query parameters of an admin listing:
// health (OK or ERROR) and display (a display state), each at most once;
// any other parameter, a repeated one or an unknown value is a 400 naming
// it (never echoing the value).
func parseAdminQuery(params map[string][]string) (contracts.AdminQuery, *contracts.APIError) {
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	slices.Sort(names) // report the first bad parameter deterministically
	var q contracts.AdminQuery
	for _, name := range names {
		vals := params[name]
		if len(vals) != 1 {
			return contracts.AdminQuery{}, badQuery("query parameter " + quoteName(name) + " given more than once")
		}
		v := vals[0]
		switch name {
		case adminParamHealth:
			h := contracts.HealthStatus(v)
			if !h.Valid() {
				return contracts.AdminQuery{}, badQuery("health must be OK or ERROR")
			}
			q.Health = h
		case adminParamDisplay:
			d := contracts.DisplayState(v)
			if !slices.Contains(contracts.AllDisplay, d) {
				return contracts.AdminQuery{}, badQuery("display must be one of " + displayList())
			}
			q.Display = d
		default:
			return contracts.AdminQuery{}, badQuery("unknown query parameter " + quoteName(name) + ": want health or display")
		}
	}
	return q, nil
}

// badQuery is the 400 of a malformed admin query.
func badQuery(msg string) *contracts.APIError {
	return apiError(http.StatusBadRequest, contracts.APIBadRequest, msg)
}

func displayList() string {
	names := make([]string, len(contracts.AllDisplay))
	for i, d := range contracts.AllDisplay {
		names[i] = string(d)
	}
	return strings.Join(names, ", ")
}

// quoteName renders a parameter name for an error message: quoted, and
// cut when it is long (a name is input too).
func quoteName(name string) string {
	const max = 40
	if len(name) > max || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "(a malformed name)"
	}
	return `"` + name + `"`
}
