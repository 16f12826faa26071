//go:build !amd64

package validate

// spinPause: a plain poll where there is no assembly for it.
func spinPause() {}
