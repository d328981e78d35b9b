package httpapi

import (
	"net/http"
	"net/url"

	"github.com/wsconverge/converge/contracts"
	"github.com/wsconverge/converge/contracts/ports"
)

func (h *handler) create(w http.ResponseWriter, r *http.Request, p principal) {
	var req ports.CreateRequest
	if fe := decodeBody(w, r, &req); fe != nil {
		writeFieldError(w, fe)
		return
	}
	ws, err := h.cfg.API.Create(r.Context(), p.user, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Location", apiPrefix+"/workspaces/"+ws.ID)
	writeJSON(w, http.StatusCreated, viewOf(&ws))
}

func (h *handler) list(w http.ResponseWriter, r *http.Request, p principal) {
	rows, err := h.cfg.API.List(r.Context(), p.user)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := listView{Workspaces: make([]workspaceView, 0, len(rows))}
	for i := range rows {
		out.Workspaces = append(out.Workspaces, viewOf(&rows[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handler) get(w http.ResponseWriter, r *http.Request, p principal, id string) {
	ws, err := h.cfg.API.Get(r.Context(), p.user, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewOf(&ws))
}

func (h *handler) patch(w http.ResponseWriter, r *http.Request, p principal, id string) {
	var req ports.PatchRequest
	if fe := decodeBody(w, r, &req); fe != nil {
		writeFieldError(w, fe)
		return
	}
	ws, err := h.cfg.API.Patch(r.Context(), p.user, id, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewOf(&ws))
}

// accepted is the 202 body of DELETE.
type accepted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

func (h *handler) delete(w http.ResponseWriter, r *http.Request, p principal, id string) {
	if err := h.cfg.API.Delete(r.Context(), p.user, id); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, accepted{ID: id, Deleted: true})
}

// recovered is the 200 body of :recover.
type recovered struct {
	ID        string `json:"id"`
	Recovered bool   `json:"recovered"`
}

// recoverWorkspace is the administrator's reset. The role is checked before
// anything is read, so a non-admin learns nothing about the id.
func (h *handler) recoverWorkspace(w http.ResponseWriter, r *http.Request, p principal, id string) {
	if !p.admin {
		writeError(w, apiError(http.StatusForbidden, contracts.APIForbidden, "recovery needs the admin role"))
		return
	}
	if err := h.cfg.API.Recover(r.Context(), p.user, id); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, recovered{ID: id, Recovered: true})
}

// adminList is GET /api/v1/admin/workspaces: every user's workspaces
// selected by the query (health, display), for an administrator looking for
// what to recover. The role is checked first, then the query, before
// anything is read.
func (h *handler) adminList(w http.ResponseWriter, r *http.Request, p principal) {
	if !p.admin {
		writeError(w, apiError(http.StatusForbidden, contracts.APIForbidden, "the admin listing needs the admin role"))
		return
	}
	lister, ok := h.cfg.API.(ports.AdminAPI)
	if !ok {
		writeError(w, apiError(http.StatusNotFound, contracts.APINotFound, "this API has no admin listing"))
		return
	}
	params, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, apiError(http.StatusBadRequest, contracts.APIBadRequest, "malformed query string"))
		return
	}
	q, e := parseAdminQuery(params)
	if e != nil {
		writeError(w, e)
		return
	}
	rows, err := lister.AdminList(r.Context(), p.user, q)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := adminListView{Workspaces: make([]adminView, 0, len(rows))}
	for i := range rows {
		out.Workspaces = append(out.Workspaces, adminViewOf(&rows[i]))
	}
	writeJSON(w, http.StatusOK, out)
}
