// Package server serves a model over HTTP with llama-server's API: the
// OpenAI routes (/v1/chat/completions, /v1/completions, /v1/models) and
// llama.cpp's own (/completion, /tokenize, /detokenize, /apply-template,
// /health, /props, /metrics, /slots), with llama-server's field names,
// server-sent events and error objects, plus a chat page at /.
//
// It is made for a small device: a fixed set of slots (one inference
// state each, one by default) serves one request at a time each, a
// bounded number of requests wait for one and the rest are refused with
// 503 and Retry-After; a generation stops within one token when its
// client goes away; a slot keeps the tokens its cache holds and a request
// whose prompt starts with them evaluates only the rest; a conversation
// longer than the context loses its oldest turns instead of failing.
// Requests never name files: the model and every path are the operator's.
package server
