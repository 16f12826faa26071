package kafkatap

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// The broker goes away and a new one comes up on the same port: Up follows,
// and the way back counts as a reconnect.
func TestUpFollowsBroker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	start := func() *kfake.Cluster {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(1, "eventmesh-stream"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1 := start()
	brokers := c1.ListenAddrs()
	col := &collector{}
	stats, stop := startTap(t, Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{"eventmesh-stream"}, HealthInterval: 50 * time.Millisecond}, col)
	waitFor(t, "up", stats.UpstreamUp.Load)
	c1.Close()
	waitFor(t, "down", func() bool { return !stats.UpstreamUp.Load() })
	c2 := start()
	t.Cleanup(c2.Close)
	waitFor(t, "up again", stats.UpstreamUp.Load)
	if n := stats.Reconnects.Load(); n != 1 {
		t.Errorf("Reconnects = %d, want 1", n)
	}
	stop()
}
