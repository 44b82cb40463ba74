//go:build !linux

package disktier

import (
	"errors"
	"os"
)

// openDirect reports that direct I/O is not used on this system.
func openDirect(string) (*os.File, error) {
	return nil, errors.ErrUnsupported
}
