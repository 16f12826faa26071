//go:build !linux

package logdir

// The descriptor-limit test (fdlimit_test.go) runs on Linux only; its
// child entry point exists everywhere, for TestMain.
const fdChildEnv = "LOGDIR_FD_CHILD"

func fdChild(string) int { return 2 }
