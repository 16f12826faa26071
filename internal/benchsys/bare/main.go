// Command bare is the bare-client baseline of make bench-system's live
// part: what a plain program would do with each transport, and nothing
// else (it counts the records it receives), so that a tap's figure can be
// set beside its client's on the same machine in the same run.
//
//	bare nats URL SUBJECT          a nats.go core subscriber, default pending limits
//	bare js URL STREAM             a JetStream pull consumer from the first message, no acks
//	bare kafka BROKERS TOPIC GROUP a franz-go group consumer from the earliest offset
//	bare tail FILE                 a tail -F-like reader: lines appended to FILE
//
// Every 20 ms it prints "n GOT DROPPED SLOW FIRST LAST": the records
// received so far, what the client itself dropped (core NATS), its
// slow-consumer reports, and when (Unix ns) the first and the latest
// records arrived. It runs until it is signalled.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/twmb/franz-go/pkg/kgo"
)

var n, dropped, slow, first, last atomic.Int64

// got counts k records received now.
func got(k int64) {
	if k == 0 {
		return
	}
	n.Add(k)
	now := time.Now().UnixNano()
	first.CompareAndSwap(0, now)
	last.Store(now)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if len(os.Args) < 3 {
		fail(errors.New("usage: bare nats|js|kafka|tail ARGS"))
	}
	go report(ctx)
	var err error
	switch a := os.Args[2:]; os.Args[1] {
	case "nats":
		err = core(ctx, a[0], a[1])
	case "js":
		err = js(ctx, a[0], a[1])
	case "kafka":
		err = kafka(ctx, a[0], a[1], a[2])
	case "tail":
		err = tail(ctx, a[0])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil && ctx.Err() == nil {
		fail(err)
	}
	print()
}

func report(ctx context.Context) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			print()
		}
	}
}

func print() {
	fmt.Printf("n %d %d %d %d %d\n", n.Load(), dropped.Load(), slow.Load(), first.Load(), last.Load())
}

func core(ctx context.Context, url, subject string) error {
	var sub *nats.Subscription
	nc, err := nats.Connect(url, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrSlowConsumer) {
			slow.Add(1)
			if d, err := sub.Dropped(); err == nil {
				dropped.Store(int64(d))
			}
		}
	}))
	if err != nil {
		return err
	}
	defer nc.Close()
	sub, err = nc.Subscribe(subject, func(*nats.Msg) { got(1) })
	if err != nil {
		return err
	}
	if err := nc.Flush(); err != nil {
		return err
	}
	<-ctx.Done()
	if d, err := sub.Dropped(); err == nil {
		dropped.Store(int64(d))
	}
	return nil
}

func js(ctx context.Context, url, stream string) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	j, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	cons, err := j.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return err
	}
	cc, err := cons.Consume(func(jetstream.Msg) { got(1) })
	if err != nil {
		return err
	}
	<-ctx.Done()
	cc.Stop()
	return nil
}

func kafka(ctx context.Context, brokers, topic, group string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil && ctx.Err() == nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
		got(int64(fs.NumRecords()))
	}
	return nil
}

// tail follows a file the way tail -F does, without its output: it waits
// for the file to appear, reads what was appended, and polls for more.
func tail(ctx context.Context, path string) error {
	var f *os.File
	for f == nil {
		var err error
		if f, err = os.Open(path); err != nil {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	buf := make([]byte, 1<<20)
	for ctx.Err() == nil {
		k, err := r.Read(buf)
		got(int64(bytes.Count(buf[:k], []byte{'\n'})))
		if errors.Is(err, io.EOF) {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bare:", err)
	os.Exit(2)
}
