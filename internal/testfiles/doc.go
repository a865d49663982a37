// Package testfiles opens GGUF files for tests and serves them from the
// loopback Hub, so that tests of the local and remote paths read the same
// bytes the same way. Files are closed when the test ends.
package testfiles
