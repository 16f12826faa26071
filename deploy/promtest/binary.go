package promtest

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv is the environment variable that turns a missing tool from a
// skipped test into a failed one.
const RequireEnv = "E2ATAP_REQUIRE_PACKAGES"

// RequireBinary returns the path of the executable name. When it is not on
// PATH the test is skipped with a message naming the Debian package that
// provides it, or fails when E2ATAP_REQUIRE_PACKAGES=1.
func RequireBinary(t testing.TB, name, debianPackage string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := name + " not found on PATH (" + err.Error() + "); install the Debian package `" + debianPackage + "`"
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s (%s=1: required)", msg, RequireEnv)
	}
	t.Skip(msg)
	return ""
}
