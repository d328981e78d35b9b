package contracts

import (
	"slices"
	"strings"
)

// AdminQuery selects workspaces for an administrator's listing (GET
// /api/v1/admin/workspaces): every field that is set must match. Without
// a display filter DELETED workspaces are left out (they are history, not
// something to act on); display=DELETED asks for them.
type AdminQuery struct {
	Health  HealthStatus
	Display DisplayState
}

// Admin query parameters.
const (
	AdminParamHealth  = "health"
	AdminParamDisplay = "display"
)

// ParseAdminQuery validates the query parameters of an admin listing:
// health (OK or ERROR) and display (a display state), each at most once;
// any other parameter, a repeated one or an unknown value is a 400 naming
// it (never echoing the value).
func ParseAdminQuery(params map[string][]string) (AdminQuery, *APIError) {
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	slices.Sort(names) // report the first bad parameter deterministically
	var q AdminQuery
	for _, name := range names {
		vals := params[name]
		if len(vals) != 1 {
			return AdminQuery{}, apiErr(400, APIBadRequest, "query parameter "+quoteName(name)+" given more than once")
		}
		v := vals[0]
		switch name {
		case AdminParamHealth:
			h := HealthStatus(v)
			if !h.Valid() {
				return AdminQuery{}, apiErr(400, APIBadRequest, "health must be OK or ERROR")
			}
			q.Health = h
		case AdminParamDisplay:
			d := DisplayState(v)
			if !slices.Contains(AllDisplay, d) {
				return AdminQuery{}, apiErr(400, APIBadRequest, "display must be one of "+displayList())
			}
			q.Display = d
		default:
			return AdminQuery{}, apiErr(400, APIBadRequest, "unknown query parameter "+quoteName(name)+": want health or display")
		}
	}
	return q, nil
}

// Match reports whether w is selected by q.
func (q AdminQuery) Match(w *Workspace) bool {
	d := Display(w)
	switch {
	case q.Health != "" && w.HealthStatus != q.Health:
		return false
	case q.Display != "":
		return d == q.Display
	}
	return d != DisplayDeleted
}

func displayList() string {
	names := make([]string, len(AllDisplay))
	for i, d := range AllDisplay {
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
