// Package hfremote reads files on the Hugging Face Hub (or any HTTPS server)
// as an io.ReaderAt, paying for every request and byte as little as a careful
// client can, so that multi-GB models can be inspected and rebuilt from a
// laptop without downloading them.
//
// It knows HTTP and the Hub's conventions, and nothing about GGUF.
//
// What it does, and why:
//
//   - Sources are "hf://[datasets/|spaces/]owner/repo[@revision]/path" (the
//     form of huggingface_hub's file system), Hub "resolve" or "blob" URLs,
//     and any other http(s) URL. HF_ENDPOINT selects the Hub; HF_TOKEN,
//     HUGGING_FACE_HUB_TOKEN and the token file under HF_HOME authenticate
//     (see TokenFromEnv).
//   - Open resolves the file once: one HEAD request to the resolve URL that
//     does not follow the redirect to the CDN. It reads X-Repo-Commit,
//     X-Linked-Etag (the sha256 of an LFS file), X-Linked-Size and Location.
//     Every later request is pinned to that commit, so a push during a long
//     build cannot mix two versions of a file. Ranges go straight to the CDN
//     location; when the signed link expires (a 403, or its stated expiry
//     time) the file is resolved again at the pinned commit.
//   - The token is sent only to the Hub's own host, never to the CDN or to
//     any other host a redirect leads to.
//   - Each ReadAt is one range request: the caller (the GGUF decoder) already
//     sizes its reads, so this package adds no read-ahead of its own. A range
//     must come back as 206 with the Content-Range asked for and exactly that
//     many bytes; a short body is retried from where it stopped, never
//     accepted. A server that ignores Range and answers 200 with the whole
//     file is read only up to the end of the asked range, and only when that
//     is a small prefix (RangeIgnoredLimit); otherwise the read fails with
//     ErrRangeIgnored instead of silently downloading a whole model.
//   - Resets, stalls, 408, 429 and 5xx are retried with exponential backoff
//     and jitter, honouring Retry-After and the Hub's RateLimit header.
//     Permanent answers (401, gated repos, 404 with X-Error-Code) fail at once
//     with errors in plain words that name the repo and file, and so do
//     failures no wait can cure: a host name that does not exist, a refused
//     connection to a host that has never answered, a plain-HTTP or other
//     non-TLS server spoken to as https, a certificate that does not verify.
//   - File.Ranges fetches many ranges (tensor data) with bounded concurrency,
//     coalescing nearly adjacent ranges and delivering bytes in order.
//   - Counters of requests, bytes, retries and re-resolves are kept per file
//     and optionally summed across files (Stats).
//   - VerifyingReader checks a whole-file read against the sha256 the Hub
//     published.
//
// The subpackage hubtest is a loopback Hub with a CDN on a second host name
// and fault injection, used by the tests and by offline demos.
package hfremote
