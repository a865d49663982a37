// Package sink writes command outputs safely: a file is written as a
// temporary in the same directory (on Linux an unnamed O_TMPFILE, so even a
// SIGKILL or power cut leaves nothing behind), synced and moved into place
// only when complete, so a failed or interrupted run never leaves a half file
// under the final name and never touches its input, even when the output
// path is the input path. "-" writes to stdout.
package sink
