package main

import (
	"os/exec"
	"syscall"
)

// child is a process that ends with benchsys, even when benchsys fails
// and exits at once: no tap, client or broker is left running.
func child(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	return cmd
}
