//go:build !linux

package volume

import "errors"

// flushBuffers flushes nothing outside Linux.
func flushBuffers(string) error { return errors.New("block devices need Linux") }
