//go:build !linux

package controller

import "errors"

// releaseFilePages is Linux's (filepages_linux.go); elsewhere the pages
// stay until the system reclaims them.
func releaseFilePages() error {
	return errors.New("releasing an executable's pages is implemented for Linux only")
}
