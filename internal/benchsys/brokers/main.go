// Command brokers runs the brokers of make bench-system's live part in a
// process of their own, so that their CPU is neither the tap's nor the
// load generator's: a nats-server with JetStream (file store under -dir)
// and a one-broker kfake cluster. It prints their addresses, one
// "name=value" a line, then "ready", and serves until its standard input
// closes or it is signalled.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: brokers STORE-DIR KAFKA-PARTITIONS")
		os.Exit(2)
	}
	var partitions int32
	if _, err := fmt.Sscan(os.Args[2], &partitions); err != nil {
		fail(err)
	}
	ns, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, HTTPHost: "127.0.0.1", HTTPPort: -1,
		JetStream: true, StoreDir: os.Args[1], NoLog: true, NoSigs: true,
		// Big enough for a 200 k-message burst of 920-byte records from
		// one publisher without the server cutting it as a slow consumer.
		MaxPending: 1 << 30, WriteDeadline: 10 * time.Second,
	})
	if err != nil {
		fail(err)
	}
	ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(20 * time.Second) {
		fail(fmt.Errorf("nats-server not ready"))
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "bench"))
	if err != nil {
		fail(err)
	}
	defer kc.Close()
	fmt.Printf("nats=%s\nmonitor=http://%s\nkafka=%s\nready\n", ns.ClientURL(), ns.MonitorAddr(), kc.ListenAddrs()[0])

	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-done:
	case <-sig:
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "brokers:", err)
	os.Exit(2)
}
