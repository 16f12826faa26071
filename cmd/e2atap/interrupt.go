package main

import (
	"context"
	"errors"
	"io"
)

// errInterrupted: validate's input was cut by SIGINT or SIGTERM.
var errInterrupted = errors.New("interrupted")

// interruptible is a reader that stops at once when ctx is done, even
// while the read below it blocks: a pipe whose writer is alive and quiet
// (tail -f app.log | e2atap validate -) never returns from read(2), and a
// signal has to end validate anyway. The read below runs on a goroutine
// of its own into the reader's buffer, one at a time; a read still
// blocked when ctx ends is left behind (it ends with the process: validate
// returns and exits), and what it reads is never used.
type interruptible struct {
	ctx     context.Context
	r       io.Reader
	buf     []byte
	rest    []byte // read, not yet returned
	err     error  // the read below's error, returned once rest is empty
	pending bool
	done    chan readResult
}

type readResult struct {
	n   int
	err error
}

func newInterruptible(ctx context.Context, r io.Reader) *interruptible {
	return &interruptible{ctx: ctx, r: r, buf: make([]byte, 256<<10), done: make(chan readResult, 1)}
}

func (r *interruptible) Read(p []byte) (int, error) {
	if r.ctx.Err() != nil {
		return 0, errInterrupted
	}
	if len(r.rest) == 0 && r.err == nil {
		if !r.pending {
			r.pending = true
			go func() {
				n, err := r.r.Read(r.buf)
				r.done <- readResult{n, err}
			}()
		}
		select {
		case <-r.ctx.Done():
			return 0, errInterrupted
		case res := <-r.done:
			r.pending = false
			r.rest, r.err = r.buf[:res.n], res.err
		}
	}
	if len(r.rest) > 0 {
		n := copy(p, r.rest)
		r.rest = r.rest[n:]
		return n, nil
	}
	return 0, r.err
}
