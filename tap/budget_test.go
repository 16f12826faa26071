package tap

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestBudgetTryAcquire(t *testing.T) {
	b := NewBudget(100)
	if !b.TryAcquire(60) || !b.TryAcquire(40) {
		t.Fatal("charges within the limit were refused")
	}
	if b.TryAcquire(1) {
		t.Fatal("a charge past the limit was accepted")
	}
	b.Release(50)
	if got := b.Used(); got != 50 {
		t.Fatalf("used %d after release, want 50", got)
	}
	if b.TryAcquire(101) {
		t.Fatal("a charge larger than the budget was accepted by TryAcquire")
	}
}

func TestBudgetNilIsUnlimited(t *testing.T) {
	var b *Budget = NewBudget(0)
	if b != nil {
		t.Fatal("NewBudget(0) should be unlimited (nil)")
	}
	if !b.TryAcquire(1<<40) || b.Acquire(context.Background(), 1<<40) != nil {
		t.Fatal("a nil budget refused a charge")
	}
	b.Release(5)
}

func TestBudgetAcquireWaitsForRelease(t *testing.T) {
	b := NewBudget(10)
	b.TryAcquire(10)
	done := make(chan error, 1)
	go func() { done <- b.Acquire(context.Background(), 5) }()
	select {
	case <-done:
		t.Fatal("Acquire did not wait on a full budget")
	case <-time.After(20 * time.Millisecond):
	}
	b.Release(10)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b.Used() != 5 {
		t.Fatalf("used %d, want 5", b.Used())
	}
}

func TestBudgetAcquireHugeGoesThroughAlone(t *testing.T) {
	b := NewBudget(10)
	if err := b.Acquire(context.Background(), 50); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := b.Acquire(ctx, 1); err == nil {
		t.Fatal("a charge went through while a huge one held the budget")
	}
	b.Release(50)
	if err := b.Acquire(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
}

func TestBudgetConcurrent(t *testing.T) {
	b := NewBudget(1000)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				if err := b.Acquire(context.Background(), 100); err != nil {
					t.Error(err)
					return
				}
				if u := b.Used(); u > 1000 {
					t.Errorf("used %d over the limit", u)
				}
				b.Release(100)
			}
		}()
	}
	wg.Wait()
	if b.Used() != 0 {
		t.Fatalf("used %d at the end, want 0", b.Used())
	}
}
