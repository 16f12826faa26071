package promtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Job is one scrape job of the test server.
type Job struct {
	Name        string
	Targets     []string          // host:port, on 127.0.0.1
	Labels      map[string]string // target labels added to every series, e.g. namespace
	MetricsPath string            // default /metrics
}

// Config of StartPrometheus. Zero intervals mean one second.
type Config struct {
	Jobs               []Job
	RuleFiles          []string // absolute or relative to the test's directory
	ScrapeInterval     time.Duration
	EvaluationInterval time.Duration
	// StartTimeout bounds the wait for /-/ready; default 20s.
	StartTimeout time.Duration
}

// Server is a running Prometheus.
type Server struct {
	// URL is the base URL, e.g. http://127.0.0.1:40123.
	URL    string
	Dir    string // the temporary directory with config and storage
	client *http.Client

	mu     sync.Mutex
	stderr bytes.Buffer
}

// StartPrometheus writes a configuration for cfg, starts the `prometheus`
// binary on a free port of 127.0.0.1 and waits until it is ready. The
// process is stopped (SIGTERM, then SIGKILL) in t.Cleanup. The test is
// skipped, or failed under E2ATAP_REQUIRE_PACKAGES=1, when the binary is
// missing.
func StartPrometheus(t testing.TB, cfg Config) *Server {
	t.Helper()
	bin := RequireBinary(t, "prometheus", "prometheus")
	if cfg.ScrapeInterval <= 0 {
		cfg.ScrapeInterval = time.Second
	}
	if cfg.EvaluationInterval <= 0 {
		cfg.EvaluationInterval = time.Second
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 20 * time.Second
	}
	dir := t.TempDir()
	conf, err := renderConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(confPath, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	// A free port can be taken between our probe and Prometheus's bind;
	// try a few times rather than flake.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := start(t, bin, dir, confPath, cfg.StartTimeout)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("prometheus did not start: %v", lastErr)
	return nil
}

func start(t testing.TB, bin, dir, confPath string, timeout time.Duration) (*Server, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://" + addr, Dir: dir, client: &http.Client{Timeout: 10 * time.Second}}
	storage := filepath.Join(dir, "data-"+strconv.Itoa(int(time.Now().UnixNano()%1e9)))
	cmd := exec.Command(bin,
		"--config.file="+confPath,
		"--storage.tsdb.path="+storage,
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Dir = dir
	cmd.Stdout = io.Discard
	cmd.Stderr = &lockedWriter{s: s}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		select {
		case err := <-exited:
			exited <- err // for stop
			return nil, fmt.Errorf("prometheus exited: %v; stderr:\n%s", err, s.Stderr())
		case <-ctx.Done():
			stop()
			return nil, fmt.Errorf("prometheus not ready after %s; stderr:\n%s", timeout, s.Stderr())
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := s.client.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Cleanup(func() {
					stop()
					s.client.CloseIdleConnections()
					if t.Failed() {
						t.Logf("prometheus stderr:\n%s", s.Stderr())
					}
				})
				return s, nil
			}
		}
	}
}

type lockedWriter struct{ s *Server }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.s.stderr.Len() < 1<<20 {
		w.s.stderr.Write(p)
	}
	return len(p), nil
}

// Stderr returns what the process logged so far (up to 1 MiB).
func (s *Server) Stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// FreeAddr returns a free 127.0.0.1:port. The port is released before
// return, so another process may take it; callers retry on a bind error.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// renderConfig writes prometheus.yml as JSON, which is valid YAML: no YAML
// library needed and no quoting surprises.
func renderConfig(cfg Config) ([]byte, error) {
	type staticConfig struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels,omitempty"`
	}
	type scrapeConfig struct {
		JobName       string         `json:"job_name"`
		MetricsPath   string         `json:"metrics_path,omitempty"`
		StaticConfigs []staticConfig `json:"static_configs"`
	}
	var scrapes []scrapeConfig
	for _, j := range cfg.Jobs {
		for _, tg := range j.Targets {
			host, _, err := net.SplitHostPort(tg)
			if err != nil {
				return nil, fmt.Errorf("job %s: target %q: %w", j.Name, tg, err)
			}
			if host != "127.0.0.1" {
				return nil, fmt.Errorf("job %s: target %q: tests only scrape 127.0.0.1", j.Name, tg)
			}
		}
		scrapes = append(scrapes, scrapeConfig{
			JobName: j.Name, MetricsPath: j.MetricsPath,
			StaticConfigs: []staticConfig{{Targets: j.Targets, Labels: j.Labels}},
		})
	}
	rules := make([]string, 0, len(cfg.RuleFiles))
	for _, r := range cfg.RuleFiles {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		rules = append(rules, abs)
	}
	return json.MarshalIndent(map[string]any{
		"global": map[string]string{
			"scrape_interval":     promDuration(cfg.ScrapeInterval),
			"scrape_timeout":      promDuration(cfg.ScrapeInterval),
			"evaluation_interval": promDuration(cfg.EvaluationInterval),
		},
		"rule_files":     rules,
		"scrape_configs": scrapes,
	}, "", "  ")
}

// promDuration formats d as a Prometheus duration (milliseconds are enough).
func promDuration(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// Sample is one series of a query result: its labels and its last value
// (instant vector, scalar) or every value (range vector), as strings in
// the API's format ("NaN", "+Inf" included).
type Sample struct {
	Metric map[string]string
	Values []string
}

// Result is a query's answer.
type Result struct {
	Type    string // vector, matrix, scalar, string
	Samples []Sample
}

// Query runs an instant query at the current time.
func (s *Server) Query(ctx context.Context, expr string) (Result, error) {
	var raw struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := s.get(ctx, "/api/v1/query", url.Values{"query": {expr}}, &raw); err != nil {
		return Result{}, fmt.Errorf("query %q: %w", expr, err)
	}
	res := Result{Type: raw.ResultType}
	switch raw.ResultType {
	case "vector":
		var v []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(raw.Result, &v); err != nil {
			return res, err
		}
		for _, x := range v {
			res.Samples = append(res.Samples, Sample{Metric: x.Metric, Values: []string{fmt.Sprint(x.Value[1])}})
		}
	case "matrix":
		var m []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		}
		if err := json.Unmarshal(raw.Result, &m); err != nil {
			return res, err
		}
		for _, x := range m {
			smp := Sample{Metric: x.Metric}
			for _, v := range x.Values {
				smp.Values = append(smp.Values, fmt.Sprint(v[1]))
			}
			res.Samples = append(res.Samples, smp)
		}
	case "scalar", "string":
		var v [2]any
		if err := json.Unmarshal(raw.Result, &v); err != nil {
			return res, err
		}
		res.Samples = []Sample{{Values: []string{fmt.Sprint(v[1])}}}
	default:
		return res, fmt.Errorf("query %q: unknown result type %q", expr, raw.ResultType)
	}
	return res, nil
}

// Target is one entry of /api/v1/targets.
type Target struct {
	Labels    map[string]string `json:"labels"`
	ScrapeURL string            `json:"scrapeUrl"`
	Health    string            `json:"health"` // up, down, unknown
	LastError string            `json:"lastError"`
}

// Targets returns the active targets.
func (s *Server) Targets(ctx context.Context) ([]Target, error) {
	var data struct {
		ActiveTargets []Target `json:"activeTargets"`
	}
	err := s.get(ctx, "/api/v1/targets", url.Values{"state": {"active"}}, &data)
	return data.ActiveTargets, err
}

// Alert is one entry of /api/v1/alerts.
type Alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"` // pending, firing
	Value       string            `json:"value"`
}

// Alerts returns the pending and firing alerts.
func (s *Server) Alerts(ctx context.Context) ([]Alert, error) {
	var data struct {
		Alerts []Alert `json:"alerts"`
	}
	err := s.get(ctx, "/api/v1/alerts", nil, &data)
	return data.Alerts, err
}

// RuleGroup is one group of /api/v1/rules, reduced to what tests check.
type RuleGroup struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Rules []struct {
		Name      string `json:"name"`
		Query     string `json:"query"`
		Health    string `json:"health"`
		LastError string `json:"lastError"`
		State     string `json:"state"`
		Type      string `json:"type"`
	} `json:"rules"`
}

// Rules returns the loaded rule groups.
func (s *Server) Rules(ctx context.Context) ([]RuleGroup, error) {
	var data struct {
		Groups []RuleGroup `json:"groups"`
	}
	err := s.get(ctx, "/api/v1/rules", nil, &data)
	return data.Groups, err
}

// WaitTargetsUp polls until every active target of job reports health up
// (at least one target).
func (s *Server) WaitTargetsUp(ctx context.Context, job string) error {
	return Poll(ctx, 200*time.Millisecond, func() (bool, error) {
		ts, err := s.Targets(ctx)
		if err != nil {
			return false, err
		}
		n := 0
		for _, tg := range ts {
			if tg.Labels["job"] != job {
				continue
			}
			if tg.Health != "up" {
				return false, fmt.Errorf("target %s: %s %s", tg.ScrapeURL, tg.Health, tg.LastError)
			}
			n++
		}
		if n == 0 {
			return false, fmt.Errorf("no target for job %q", job)
		}
		return true, nil
	})
}

// WaitTargetUp polls until the target whose instance label is instance
// (host:port) reports health up.
func (s *Server) WaitTargetUp(ctx context.Context, instance string) error {
	return Poll(ctx, 200*time.Millisecond, func() (bool, error) {
		ts, err := s.Targets(ctx)
		if err != nil {
			return false, err
		}
		for _, tg := range ts {
			if tg.Labels["instance"] == instance {
				if tg.Health == "up" {
					return true, nil
				}
				return false, fmt.Errorf("target %s: %s %s", tg.ScrapeURL, tg.Health, tg.LastError)
			}
		}
		return false, fmt.Errorf("no target %q", instance)
	})
}

// Poll calls cond every interval until it reports true or ctx ends; the
// error then names the last reason cond gave.
func Poll(ctx context.Context, interval time.Duration, cond func() (bool, error)) error {
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
			}
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// ErrAPI is returned (wrapped) when the API answers with status "error".
var ErrAPI = errors.New("prometheus API error")

func (s *Server) get(ctx context.Context, path string, q url.Values, data any) error {
	u := s.URL + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("%s: HTTP %d: %.200s", path, resp.StatusCode, body)
	}
	if env.Status != "success" {
		return fmt.Errorf("%w: %s: %s", ErrAPI, env.ErrorType, strings.TrimSpace(env.Error))
	}
	return json.Unmarshal(env.Data, data)
}
