package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// The drain (ws taps' drain_timeout): at SIGTERM or SIGINT the relay does
// not cut the Gateway's connections at once. For up to the longest
// drain_timeout of the ws taps, every tap goes on as before (the relayed
// connections carry their streams to their end, new ones are still
// accepted: the kubelet may route a few more before it takes the pod out
// of its Service), /readyz says 503 "draining", and the stop proper starts
// when the last connection is closed by its peers, when the time is up, or
// at a second SIGTERM or SIGINT. What is left is then closed with 1001 as
// without a drain. The drain is part of shutdown_timeout: it leaves at
// least a quarter of it (and a second) to the rest of the stop.

// drainPoll is how often the drain looks at the open connections.
const drainPoll = 50 * time.Millisecond

// drainBound is how long the drain may take: the longest drain_timeout
// of the ws taps running, within what shutdown_timeout leaves.
func (s *sidecar) drainBound() time.Duration {
	var d time.Duration
	for _, t := range s.tapList() {
		if t.typ == "ws" {
			d = max(d, time.Duration(t.drainTimeout.Load()))
		}
	}
	stop := s.stopBound()
	return max(0, min(d, stop-max(time.Second, stop/4)))
}

// openConns is how many connections the ws taps relay now.
func (s *sidecar) openConns() int64 {
	var n int64
	for _, t := range s.tapList() {
		if t.typ == "ws" {
			n += t.stats.Conns.Load()
		}
	}
	return n
}

// drain waits, after the stop was asked for, while ws connections are
// open (see above); it returns at once without a drain_timeout or an open
// connection. ctx ends it too (the run is over).
func (s *sidecar) drain(ctx context.Context) {
	bound := s.drainBound()
	open := s.openConns()
	if bound <= 0 || open == 0 {
		return
	}
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	s.draining.Store(true)
	start := time.Now()
	s.logger.Info("draining: relaying the open ws connections until their peers close them (a second SIGTERM ends the drain)",
		"connections", open, "drain_timeout", bound.String())
	t := time.NewTimer(bound)
	defer t.Stop()
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if s.openConns() == 0 {
				s.logger.Info("drained: every ws connection was closed by its peers", "connections", open, "took", time.Since(start).Round(time.Millisecond).String())
				return
			}
			continue
		case <-t.C:
			s.logger.Info("drain_timeout reached: closing the ws connections left with 1001", "connections_left", s.openConns(), "of", open)
		case <-again:
			s.logger.Info("drain ended by a second signal: closing the ws connections left with 1001", "connections_left", s.openConns(), "of", open)
		case <-ctx.Done():
		}
		return
	}
}
