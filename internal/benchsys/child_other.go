//go:build !linux

package main

import "os/exec"

// child is a process of benchsys (the live part reads /proc: it measures
// on Linux only, but builds everywhere).
func child(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }
