//go:build !linux

package sink

import (
	"errors"
	"os"
)

func createTemp(dir, base string) (*os.File, bool, error) {
	f, err := createTempNamed(dir, base)
	return f, false, err
}

func linkTemp(*os.File, string) error { return errors.New("unnamed temporaries are Linux-only") }

func startWriteback(*os.File, int64, int64) {}
