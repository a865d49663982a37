package server

import (
	_ "embed"
	"net/http"
)

// chatPage is the chat page served at /: one file, no build step, no
// external URL; ES5 JavaScript for old browsers (Safari 12), large type,
// a focus order and 5 % margins for a TV and its remote.
//
//go:embed page/index.html
var chatPage []byte

// page serves GET / (the chat page).
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, &apiError{Code: http.StatusMethodNotAllowed, Type: "invalid_request_error", Message: r.Method + " /: use GET"})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(chatPage)
}
