package hfremote

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinel errors for conditions callers test with errors.Is. The errors
// returned wrap them in an *Error whose message says, in plain words, which
// repo and file and what to do.
var (
	// ErrNotFound: the repo, revision or file does not exist (or is private).
	// ErrRepoNotFound, ErrRevisionNotFound and ErrEntryNotFound wrap it, so
	// errors.Is(err, ErrNotFound) holds for all three.
	ErrNotFound = errors.New("not found")
	// ErrRepoNotFound: the Hub answered X-Error-Code RepoNotFound.
	ErrRepoNotFound = fmt.Errorf("repository %w", ErrNotFound)
	// ErrRevisionNotFound: the Hub answered X-Error-Code RevisionNotFound.
	ErrRevisionNotFound = fmt.Errorf("revision %w", ErrNotFound)
	// ErrEntryNotFound: the Hub answered X-Error-Code EntryNotFound.
	ErrEntryNotFound = fmt.Errorf("file %w", ErrNotFound)
	// ErrGated: the repo is gated and the request had no token, or a token
	// whose user has not accepted the repo's terms.
	ErrGated = errors.New("repo is gated")
	// ErrUnauthorized: the server rejected the credentials (401).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden: the server refused access (403) for another reason.
	ErrForbidden = errors.New("access denied")
	// ErrRangeIgnored: the server answered a range request with the whole
	// file, and reading up to the asked range would cost too much.
	ErrRangeIgnored = errors.New("server ignored the Range header")
	// ErrChanged: the remote file is not the one resolved (its size or
	// identity changed), so bytes from before and after cannot be mixed.
	ErrChanged = errors.New("remote file changed")
	// ErrChecksumMismatch: a whole-file read does not match the sha256 (or
	// git hash) the Hub published.
	ErrChecksumMismatch = errors.New("checksum mismatch")
	// ErrRateLimited: the server kept answering 429, or asked to wait longer
	// than RetryPolicy.MaxWait.
	ErrRateLimited = errors.New("rate limited")
	// ErrHTTP: an HTTP status this package does not retry or explain
	// further; Error.Status has it.
	ErrHTTP = errors.New("unexpected HTTP status")
)

// Error is a failure of a remote read, naming the source.
type Error struct {
	// Source is the source as given to Open (hf://... or the URL).
	Source string
	// Status is the HTTP status that caused the error, 0 if none.
	Status int
	// Code is the Hub's X-Error-Code header, if any.
	Code string
	// Msg says in plain words what happened and, when known, what to do.
	Msg string
	// Err is one of the sentinel errors above, or a transport error.
	Err error
}

// Error gives the source and the message.
func (e *Error) Error() string { return e.Source + ": " + e.Msg }

// Unwrap gives the sentinel, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }

// invalidCredentials is the Hub's X-Error-Message for a bad token.
const invalidCredentials = "Invalid credentials in Authorization header"

// statusError explains an HTTP error answer that is not retried. fromHub
// says whether the answer came from the Hub (whose X-Error-Code headers name
// the missing piece) rather than a CDN or plain server; hadToken whether the
// request carried a token.
func (f *File) statusError(resp *http.Response, fromHub, hadToken bool) *Error {
	e := &Error{Source: f.name, Status: resp.StatusCode, Code: resp.Header.Get("X-Error-Code")}
	xmsg := resp.Header.Get("X-Error-Message")
	loc := f.loc
	if fromHub && loc.IsHub() {
		switch {
		case e.Code == "GatedRepo" && !hadToken:
			e.Err = ErrGated
			e.Msg = fmt.Sprintf("repo %s is gated: accept its terms at %s and set HF_TOKEN (or --token)", loc.Repo, loc.RepoURL())
		case e.Code == "GatedRepo":
			e.Err = ErrGated
			e.Msg = fmt.Sprintf("repo %s is gated and your token has no access: accept its terms at %s with the token's account", loc.Repo, loc.RepoURL())
		case e.Code == "RepoNotFound" || (resp.StatusCode == http.StatusUnauthorized && e.Code == "" && xmsg != invalidCredentials):
			// Like huggingface_hub: an anonymous 401 on a repo URL means
			// "not found or private", never "bad credentials".
			e.Err = ErrRepoNotFound
			e.Msg = fmt.Sprintf("repository %s not found", loc.Repo)
			if !hadToken {
				e.Msg += " (if it is private, set HF_TOKEN)"
			}
		case e.Code == "RevisionNotFound":
			e.Err = ErrRevisionNotFound
			e.Msg = fmt.Sprintf("revision %q not found in %s", loc.Revision, loc.Repo)
		case e.Code == "EntryNotFound":
			e.Err = ErrEntryNotFound
			e.Msg = fmt.Sprintf("file %q not found in %s at revision %s", loc.Path, loc.Repo, f.revision())
		}
		if e.Err != nil {
			return e
		}
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		e.Err = ErrUnauthorized
		e.Msg = "the server rejected the credentials (401)"
		if fromHub {
			e.Msg = "the Hub rejected the token (401): check HF_TOKEN or --token"
		}
	case http.StatusForbidden:
		e.Err = ErrForbidden
		e.Msg = "access denied (403)"
	case http.StatusNotFound, http.StatusGone:
		e.Err = ErrNotFound
		e.Msg = fmt.Sprintf("not found (%d)", resp.StatusCode)
	case http.StatusRequestedRangeNotSatisfiable:
		e.Err = ErrChanged
		e.Msg = fmt.Sprintf("the server says the asked range is outside the file (416); the file is not the %d-byte file resolved", f.size)
	default:
		e.Err = ErrHTTP
		e.Msg = fmt.Sprintf("unexpected HTTP status %s", resp.Status)
	}
	if xmsg != "" && xmsg != invalidCredentials {
		e.Msg += ": " + strings.TrimSpace(xmsg)
	}
	return e
}

// revision is the revision to name in messages: the pinned commit once
// known, else what the user asked for.
func (f *File) revision() string {
	if f.commit != "" {
		return f.loc.Revision + " (" + f.commit + ")"
	}
	return f.loc.Revision
}
