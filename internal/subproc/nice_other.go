//go:build !unix

package subproc

import "errors"

// raiseNice: no worker processes run here (see PlatformSupport).
func raiseNice(int) error {
	return errors.ErrUnsupported
}

// raiseNiceOf: no worker processes run here.
func raiseNiceOf(int, int) error {
	return errors.ErrUnsupported
}
