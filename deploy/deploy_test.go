package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/e2atap/e2atap/deploy/promtest"
)

const (
	alertsFile     = "prometheus/e2atap-alerts.yaml"
	alertsTestFile = "prometheus/e2atap-alerts.test.yaml"
	promRuleFile   = "kubernetes/base/prometheusrule.yaml"
	exposition     = "../exporters/metrics/testdata/exposition.prom"
	runbook        = "../docs/runbook.md"
	runbookURL     = "https://github.com/e2atap/e2atap/blob/main/docs/runbook.md"
	metricsPort    = 9464
)

// requiredAlerts are the alerts the operators' contract names.
var requiredAlerts = []string{
	"E2AtapProtocolErrors", "E2AtapMissingFinals", "E2AtapFailureRate", "E2AtapTapDrops",
	"E2AtapTapDown", "E2AtapDecodeErrors", "E2AtapSidecarDown",
	"E2AtapTapErrors", "E2AtapUpstreamDown", "E2AtapSecretInLog",
	"E2AtapConfigReloadFailed", "E2AtapNoSidecarUp", "E2AtapEnginePanics",
}

// defectAlerts fire only on a defect of e2atap (a panic it survived),
// which the end-to-end run cannot plant in the real binary: there their
// expression is checked without its "> 0".
var defectAlerts = map[string]bool{"E2AtapEnginePanics": true}

// prometheusMetrics are series Prometheus makes itself; alerts may use them.
var prometheusMetrics = map[string]bool{"up": true}

// sidecarMetrics are the metrics cmd/e2atap registers itself (not in the
// exporter's golden exposition), with their labels. The end-to-end test
// proves they are served: every alert expression must return data there.
var sidecarMetrics = map[string]map[string]bool{
	"e2atap_config_last_reload_successful":                {},
	"e2atap_config_last_reload_success_timestamp_seconds": {},
	"e2atap_config_info":                                  {"hash": true},
}

// byClause matches an aggregation's grouping labels: "by (a, b)".
var byClause = regexp.MustCompile(`\bby\s*\(([^)]*)\)`)

// ruleFile is a Prometheus rule file; unknown keys are errors.
type ruleFile struct {
	Groups []ruleGroup `json:"groups"`
}

type ruleGroup struct {
	Name     string `json:"name"`
	Interval string `json:"interval,omitempty"`
	Rules    []rule `json:"rules"`
}

type rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// decodeStrict converts YAML to JSON and decodes it with unknown fields
// disallowed, which is what the API server's strict field validation does.
func decodeStrict(data []byte, v any) error {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the document")
	}
	return nil
}

func readRules(t *testing.T) ruleFile {
	t.Helper()
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := decodeStrict(b, &rf); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	return rf
}

func alerts(rf ruleFile) []rule {
	var out []rule
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

func TestPromtool(t *testing.T) {
	promtool := promtest.RequireBinary(t, "promtool", "prometheus")
	for _, args := range [][]string{
		{"check", "rules", filepath.Base(alertsFile)},
		{"test", "rules", filepath.Base(alertsTestFile)},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = filepath.Dir(alertsFile)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestAlertUnitTestsCoverEveryAlert requires, for every alert, a promtool
// case where it fires and one (a near miss) where it must stay silent.
func TestAlertUnitTestsCoverEveryAlert(t *testing.T) {
	b, err := os.ReadFile(alertsTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var tf struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string           `json:"alertname"`
				ExpAlerts []map[string]any `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(b, &tf); err != nil {
		t.Fatal(err)
	}
	fires, silent := map[string]int{}, map[string]int{}
	for _, tc := range tf.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname]++
			} else {
				silent[a.Alertname]++
			}
		}
	}
	for _, r := range alerts(readRules(t)) {
		if fires[r.Alert] == 0 {
			t.Errorf("%s: no promtool case where it fires", r.Alert)
		}
		if silent[r.Alert] == 0 {
			t.Errorf("%s: no promtool near miss (exp_alerts: [])", r.Alert)
		}
	}
}

func TestAlertRules(t *testing.T) {
	rf := readRules(t)
	fams, err := promtest.ReadExposition(exposition)
	if err != nil {
		t.Fatal(err)
	}
	anchors := runbookAnchors(t)
	seen := map[string]bool{}
	for _, r := range alerts(rf) {
		if seen[r.Alert] {
			t.Errorf("%s defined twice", r.Alert)
		}
		seen[r.Alert] = true
		switch r.Labels["severity"] {
		case "critical", "warning", "info":
		default:
			t.Errorf("%s: severity label %q, want critical, warning or info", r.Alert, r.Labels["severity"])
		}
		for _, k := range []string{"summary", "description", "runbook_url"} {
			if r.Annotations[k] == "" {
				t.Errorf("%s: annotation %s missing", r.Alert, k)
			}
		}
		anchor := strings.ToLower(r.Alert)
		if want := runbookURL + "#" + anchor; r.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		if !anchors[anchor] {
			t.Errorf("%s: docs/runbook.md has no section #%s", r.Alert, anchor)
		}
		sels, err := promtest.Selectors(r.Expr)
		if err != nil {
			t.Errorf("%s: %v", r.Alert, err)
			continue
		}
		tapLabelled, sidecarMetric := false, false
		for _, s := range sels {
			if prometheusMetrics[s.Metric] {
				continue
			}
			labels := sidecarMetrics[s.Metric]
			if labels != nil {
				sidecarMetric = true
			} else if fam, ok := fams[s.Metric]; ok {
				labels = fam.Labels
			} else {
				t.Errorf("%s: metric %q is not exported by exporters/metrics nor registered by cmd/e2atap", r.Alert, s.Metric)
				continue
			}
			tapLabelled = tapLabelled || labels["tap"]
			for _, m := range s.Matchers {
				if !labels[m.Label] {
					t.Errorf("%s: %s has no label %q", r.Alert, s.Metric, m.Label)
				}
			}
		}
		// Per pod: an alert on a sidecar's own series never aggregates its
		// pods away (one replica's tap down among three must alert), and
		// says which pod.
		if tapLabelled || sidecarMetric {
			for _, m := range byClause.FindAllStringSubmatch(r.Expr, -1) {
				if !slices.Contains(strings.Fields(strings.ReplaceAll(m[1], ",", " ")), "pod") {
					t.Errorf("%s: %q aggregates the pods away: keep pod", r.Alert, m[0])
				}
			}
			if strings.Contains(r.Expr, " without") {
				t.Errorf("%s: use by (..., pod, ...), not without", r.Alert)
			}
			if !strings.Contains(r.Annotations["summary"], "{{ $labels.pod }}") {
				t.Errorf("%s: summary does not name {{ $labels.pod }}", r.Alert)
			}
		}
		// Critical pages a person: only for what needs one now.
		if r.Labels["severity"] == "critical" && !pages[r.Alert] {
			t.Errorf("%s: critical, but it is not one of the alerts that page (%v): make it a warning, or say why it pages", r.Alert, pages)
		}
		// Alerts about a tap say which one. (E2AtapSidecarDown is about a
		// scrape target: up has no tap label.)
		if tapLabelled && !strings.Contains(r.Annotations["summary"]+r.Annotations["description"], "{{ $labels.tap }}") {
			t.Errorf("%s: annotations do not name {{ $labels.tap }}", r.Alert)
		}
	}
	for _, name := range requiredAlerts {
		if !seen[name] {
			t.Errorf("alert %s missing", name)
		}
	}
	// The decode alert watches exactly the decode rules of RULES.md.
	for _, r := range alerts(rf) {
		if r.Alert == "E2AtapDecodeErrors" && !(strings.Contains(r.Expr, "e2a.decode") && strings.Contains(r.Expr, "frame.decode")) {
			t.Errorf("E2AtapDecodeErrors: expr %q does not watch e2a.decode and frame.decode", r.Expr)
		}
		if r.Alert == "E2AtapSidecarDown" && !strings.Contains(r.Expr, `job="e2atap"`) {
			t.Errorf("E2AtapSidecarDown: expr %q does not watch job e2atap", r.Expr)
		}
	}
}

// runbookAnchors returns the GitHub anchors of the runbook's headings, and
// checks that each alert's section says how to investigate.
func runbookAnchors(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(runbook)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	sections := map[string]string{}
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			title := strings.TrimSpace(strings.TrimLeft(line, "#"))
			cur = githubAnchor(title)
			anchors[cur] = true
			continue
		}
		sections[cur] += line + "\n"
	}
	for _, a := range requiredAlerts {
		body := sections[strings.ToLower(a)]
		for _, want := range []string{"e2atap validate", "dashboard", "Meaning", "Impact", "Investigate", "Fix"} {
			if !strings.Contains(body, want) {
				t.Errorf("runbook section %s does not mention %q", a, want)
			}
		}
	}
	return anchors
}

// pages are the alerts that page (severity critical): no e2atap sidecar of a
// namespace answers, so the agents behind its ws taps may be unreachable.
// Everything else is a warning: a bug to fix, a tap or configuration to
// repair, while the traffic flows.
var pages = map[string]bool{"E2AtapNoSidecarUp": true}

var anchorDrop = regexp.MustCompile(`[^a-z0-9 _-]`)

// githubAnchor is GitHub's heading slug: lower case, punctuation dropped,
// spaces to hyphens.
func githubAnchor(title string) string {
	s := anchorDrop.ReplaceAllString(strings.ToLower(title), "")
	return strings.ReplaceAll(s, " ", "-")
}

// TestPrometheusRuleMatchesPlainFile keeps the PrometheusRule's groups
// identical to the plain rule file.
func TestPrometheusRuleMatchesPlainFile(t *testing.T) {
	b, err := os.ReadFile(promRuleFile)
	if err != nil {
		t.Fatal(err)
	}
	var pr monitoringv1.PrometheusRule
	if err := decodeStrict(b, &pr); err != nil {
		t.Fatalf("%s: %v", promRuleFile, err)
	}
	var wrapped struct {
		Spec ruleFile `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &wrapped); err != nil {
		t.Fatal(err)
	}
	plain := readRules(t)
	if diff := cmp.Diff(plain.Groups, wrapped.Spec.Groups); diff != "" {
		t.Errorf("%s differs from %s (-plain +PrometheusRule):\n%s", promRuleFile, alertsFile, diff)
	}
	// And through the operator's own types, so that what the operator
	// reads is the same too.
	if len(pr.Spec.Groups) != len(plain.Groups) {
		t.Fatalf("PrometheusRule has %d groups, plain file %d", len(pr.Spec.Groups), len(plain.Groups))
	}
	for i, g := range pr.Spec.Groups {
		pg := plain.Groups[i]
		if g.Name != pg.Name || len(g.Rules) != len(pg.Rules) {
			t.Errorf("group %d: %s/%d rules vs %s/%d", i, g.Name, len(g.Rules), pg.Name, len(pg.Rules))
			continue
		}
		for j, r := range g.Rules {
			p := pg.Rules[j]
			var forS string
			if r.For != nil {
				forS = string(*r.For)
			}
			if r.Alert != p.Alert || r.Expr.String() != p.Expr || forS != p.For ||
				!cmp.Equal(r.Labels, p.Labels) || !cmp.Equal(r.Annotations, p.Annotations) {
				t.Errorf("group %s rule %d (%s) differs through the operator types", g.Name, j, r.Alert)
			}
		}
	}
}

// object is one decoded manifest.
type object struct {
	file string
	kind string
	name string
	obj  any
}

type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Resources  []string
	Labels     []struct {
		Pairs            map[string]string `json:"pairs"`
		IncludeSelectors bool              `json:"includeSelectors"`
	} `json:"labels,omitempty"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images,omitempty"`
	Patches []struct {
		Path string `json:"path"`
	} `json:"patches,omitempty"`
}

// splitYAML splits a multi-document YAML file; empty documents are dropped.
func splitYAML(b []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		if strings.TrimSpace(stripComments(cur.String())) != "" {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
		}
		cur.Reset()
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.TrimRight(line, "\r\n") == "---" {
			flush()
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return docs
}

func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// loadManifests decodes every YAML document under dir strictly into its
// real type.
func loadManifests(t *testing.T, dir string) []object {
	t.Helper()
	var objs []object
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, doc := range splitYAML(b) {
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Errorf("%s#%d: %v", path, i, err)
				continue
			}
			var obj any
			switch head.APIVersion + " " + head.Kind {
			case "apps/v1 Deployment":
				obj = &appsv1.Deployment{}
			case "v1 ConfigMap":
				obj = &corev1.ConfigMap{}
			case "v1 Service":
				obj = &corev1.Service{}
			case "v1 Secret":
				obj = &corev1.Secret{}
			case "monitoring.coreos.com/v1 PodMonitor":
				obj = &monitoringv1.PodMonitor{}
			case "monitoring.coreos.com/v1 PrometheusRule":
				obj = &monitoringv1.PrometheusRule{}
			case "kustomize.config.k8s.io/v1beta1 Kustomization":
				obj = &kustomization{}
			default:
				t.Errorf("%s#%d: no strict type for %s %s: add one to the test", path, i, head.APIVersion, head.Kind)
				continue
			}
			if err := decodeStrict(doc, obj); err != nil {
				t.Errorf("%s#%d (%s): %v", path, i, head.Kind, err)
				continue
			}
			objs = append(objs, object{file: path, kind: head.Kind, name: head.Metadata.Name, obj: obj})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func find[T any](t *testing.T, objs []object, kind, name string) T {
	t.Helper()
	for _, o := range objs {
		if o.kind == kind && (name == "" || o.name == name) {
			return o.obj.(T)
		}
	}
	t.Fatalf("no %s %q", kind, name)
	var zero T
	return zero
}

func TestManifestsDecodeStrictly(t *testing.T) {
	objs := loadManifests(t, "kubernetes")
	if len(objs) < 10 {
		t.Errorf("decoded %d objects, expected the base (6 files), the overlay (3) and its example Secret", len(objs))
	}
}

func TestSidecarDeployment(t *testing.T) {
	objs := loadManifests(t, "kubernetes/base")
	dep := find[*appsv1.Deployment](t, objs, "Deployment", "")
	spec := dep.Spec.Template.Spec

	var side *corev1.Container
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == "e2atap" {
			side = &spec.InitContainers[i]
		}
	}
	if side == nil {
		t.Fatal("no e2atap entry in initContainers: it must be a native sidecar")
	}
	for _, c := range spec.Containers {
		if c.Name == "e2atap" {
			t.Error("e2atap is also a regular container")
		}
	}
	if len(spec.Containers) == 0 {
		t.Fatal("no agent container")
	}
	agent := spec.Containers[0]
	if side.RestartPolicy == nil || *side.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("e2atap restartPolicy %v, want Always (native sidecar)", side.RestartPolicy)
	}
	if want := []string{"run", "--config", "/etc/e2atap/e2atap.yaml"}; !slices.Equal(side.Args, want) && !slices.Equal(side.Command, want) {
		t.Errorf("e2atap args %q, want %q", side.Args, want)
	}

	var metrics *corev1.ContainerPort
	ports := map[string]int32{}
	for i, p := range side.Ports {
		ports[p.Name] = p.ContainerPort
		if p.Name == "metrics" {
			metrics = &side.Ports[i]
		}
	}
	if metrics == nil || metrics.ContainerPort != metricsPort {
		t.Errorf("metrics port %+v, want containerPort %d named metrics", metrics, metricsPort)
	}
	probe := func(name string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe: want an httpGet probe on %s", name, path)
			return
		}
		port := p.HTTPGet.Port
		ok := port.StrVal == "metrics" || port.IntVal == metricsPort
		if p.HTTPGet.Path != path || !ok {
			t.Errorf("%s probe: %s on %s, want %s on the metrics port", name, p.HTTPGet.Path, port.String(), path)
		}
	}
	probe("liveness", side.LivenessProbe, "/healthz")
	probe("readiness", side.ReadinessProbe, "/readyz")
	// The agent waits for the tap's listener (startup on /readyz), and a
	// liveness failure (a restart, every relayed connection cut) needs a
	// process that has not answered for at least 30s.
	probe("startup", side.StartupProbe, "/readyz")
	if p := side.LivenessProbe; p != nil {
		if budget := p.PeriodSeconds * p.FailureThreshold; budget < 30 || p.TimeoutSeconds < 2 {
			t.Errorf("liveness probe restarts after %ds (timeout %ds): want at least 30s and a 2s timeout", budget, p.TimeoutSeconds)
		}
	}
	// GOMEMLIMIT at the container limit leaves the collector no room; e2atap
	// sets 90% of the cgroup limit itself when it is not set.
	for _, e := range side.Env {
		if e.Name == "GOMEMLIMIT" && e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil && e.ValueFrom.ResourceFieldRef.Resource == "limits.memory" {
			t.Error("GOMEMLIMIT is the full memory limit: leave it unset (e2atap sets 90% of the cgroup limit) or set it lower")
		}
	}

	psc := spec.SecurityContext
	for _, c := range []corev1.Container{*side, agent} {
		sc := c.SecurityContext
		if sc == nil {
			t.Errorf("%s: no securityContext", c.Name)
			continue
		}
		nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) || (psc != nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot)
		if !nonRoot {
			t.Errorf("%s: runAsNonRoot not set", c.Name)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: readOnlyRootFilesystem not true", c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: allowPrivilegeEscalation not false", c.Name)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			t.Errorf("%s: capabilities do not drop ALL", c.Name)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s: resources %+v: want cpu and memory requests and a memory limit", c.Name, c.Resources)
		}
	}
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Error("pod securityContext: want a non-zero runAsUser (the image's nonroot uid)")
	}

	// The shared log volume: an emptyDir mounted in both containers.
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	mounts := func(c corev1.Container) map[string]corev1.VolumeMount {
		m := map[string]corev1.VolumeMount{}
		for _, vm := range c.VolumeMounts {
			if _, ok := vols[vm.Name]; !ok {
				t.Errorf("%s mounts undefined volume %s", c.Name, vm.Name)
			}
			m[vm.Name] = vm
		}
		return m
	}
	sideMounts, agentMounts := mounts(*side), mounts(agent)
	var shared []string
	for name := range sideMounts {
		if _, ok := agentMounts[name]; ok && vols[name].EmptyDir != nil {
			shared = append(shared, name)
		}
	}
	if len(shared) != 1 {
		t.Fatalf("emptyDir volumes mounted in both containers: %v, want exactly one (the agent's logs)", shared)
	}
	logMount := sideMounts[shared[0]].MountPath

	// The configuration: the ConfigMap mounted where the args point.
	cfgMount, ok := findMount(side, "/etc/e2atap")
	if !ok || vols[cfgMount.Name].ConfigMap == nil {
		t.Fatal("no ConfigMap volume mounted at /etc/e2atap")
	}
	cm := find[*corev1.ConfigMap](t, objs, "ConfigMap", vols[cfgMount.Name].ConfigMap.Name)
	cfg := checkConfig(t, cm.Data["e2atap.yaml"])

	// Configuration and pod agree.
	if !strings.HasSuffix(cfg.Listen, fmt.Sprintf(":%d", metricsPort)) || strings.HasPrefix(cfg.Listen, "127.") {
		t.Errorf("listen %q: want a pod-reachable address on port %d", cfg.Listen, metricsPort)
	}
	var wsTap, logTap bool
	for _, tp := range cfg.Taps {
		switch tp.Type {
		case "ws":
			wsTap = true
			if p, ok := ports["e2a-ws"]; !ok || !strings.HasSuffix(tp.Listen, fmt.Sprintf(":%d", p)) {
				t.Errorf("ws tap %s listens on %q; the container port e2a-ws is %d", tp.Name, tp.Listen, p)
			}
			if !strings.HasPrefix(tp.Upstream, "ws://127.0.0.1:") {
				t.Errorf("ws tap %s upstream %q: want the agent's port on 127.0.0.1", tp.Name, tp.Upstream)
			}
		case "logdir":
			logTap = true
			for _, p := range tp.Paths {
				if !strings.HasPrefix(p, logMount+"/") {
					t.Errorf("logdir tap %s path %q is not on the shared log volume %s", tp.Name, p, logMount)
				}
			}
			if tp.Positions != "" {
				if _, ok := findMountUnder(side, tp.Positions); !ok {
					t.Errorf("positions %q is on the read-only root filesystem", tp.Positions)
				}
			}
		}
	}
	if !wsTap || !logTap {
		t.Errorf("want a ws tap and a logdir tap, got %+v", cfg.Taps)
	}
	for name, o := range map[string]*pathOutput{"findings": cfg.Outputs.Findings, "log": cfg.Outputs.Log} {
		if o != nil && o.Path != "-" && o.Path != "" {
			if m, ok := findMountUnder(side, o.Path); !ok || m.ReadOnly {
				t.Errorf("outputs.%s path %q is not on a writable volume", name, o.Path)
			}
		}
	}

	// The Service sends clients to the tap, by port number: the port is on
	// a native sidecar (an init container), and Kubernetes before 1.32 does
	// not resolve a named targetPort there (kubernetes/kubernetes#127958),
	// which leaves the Service without endpoints.
	svc := find[*corev1.Service](t, objs, "Service", "")
	for _, p := range svc.Spec.Ports {
		if p.TargetPort.StrVal != "" {
			t.Errorf("Service port %s targets the named port %q: use its number (%d), named ports of native sidecars need Kubernetes 1.32", p.Name, p.TargetPort.StrVal, ports[p.TargetPort.StrVal])
			continue
		}
		if p.TargetPort.IntVal != ports["e2a-ws"] {
			t.Errorf("Service port %s targets %d, not the e2atap sidecar's e2a-ws port %d", p.Name, p.TargetPort.IntVal, ports["e2a-ws"])
		}
	}

	// The fingerprint key comes from a Secret, never from the ConfigMap.
	var keyRef *corev1.SecretKeySelector
	for _, e := range side.Env {
		if e.Name == "E2ATAP_FINGERPRINT_KEY" {
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Errorf("E2ATAP_FINGERPRINT_KEY %+v: want it from a Secret (secretKeyRef)", e)
				continue
			}
			keyRef = e.ValueFrom.SecretKeyRef
		}
	}
	if keyRef == nil {
		t.Error("the sidecar has no E2ATAP_FINGERPRINT_KEY from a Secret: fingerprints would not join across restarts")
	}
	if strings.Contains(cm.Data["e2atap.yaml"], "fingerprint_key") {
		t.Error("the ConfigMap holds fingerprint_key: the key is a secret, take it from a Secret (E2ATAP_FINGERPRINT_KEY)")
	}
	for _, e := range side.EnvFrom {
		if e.ConfigMapRef != nil {
			t.Errorf("envFrom a ConfigMap (%s): secrets could arrive from it", e.ConfigMapRef.Name)
		}
	}
	// The example Secret names the same Secret and key, and is not applied
	// with the overlay (a placeholder everyone knows is no key).
	if keyRef != nil {
		ex := loadManifests(t, "kubernetes/overlays/example")
		sec := find[*corev1.Secret](t, ex, "Secret", keyRef.Name)
		if v, ok := sec.StringData[keyRef.Key]; !ok || len(v) < 16 {
			t.Errorf("example Secret %s: key %q missing or under 16 bytes (e2atap refuses shorter keys)", sec.Name, keyRef.Key)
		}
		if k := find[*kustomization](t, ex, "Kustomization", ""); sec.Namespace != k.Namespace {
			t.Errorf("example Secret in namespace %q, the overlay deploys to %q", sec.Namespace, k.Namespace)
		}
	}
	if !selects(svc.Spec.Selector, dep.Spec.Template.Labels) {
		t.Error("Service selector does not select the pod")
	}

	// The PodMonitor scrapes the metrics port of these pods as job e2atap.
	pm := find[*monitoringv1.PodMonitor](t, objs, "PodMonitor", "")
	if !selects(pm.Spec.Selector.MatchLabels, dep.Spec.Template.Labels) {
		t.Error("PodMonitor selector does not select the pod")
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("PodMonitor endpoints: %d, want 1", len(pm.Spec.PodMetricsEndpoints))
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	if ep.Port == nil || *ep.Port != "metrics" {
		t.Errorf("PodMonitor port %v, want metrics", ep.Port)
	}
	jobSet := false
	for _, rc := range ep.RelabelConfigs {
		if rc.TargetLabel == "job" && rc.Replacement != nil && *rc.Replacement == "e2atap" {
			jobSet = true
		}
	}
	if !jobSet {
		t.Error(`PodMonitor does not set job="e2atap" (E2AtapSidecarDown watches that job)`)
	}
}

func findMount(c *corev1.Container, path string) (corev1.VolumeMount, bool) {
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == path {
			return vm, true
		}
	}
	return corev1.VolumeMount{}, false
}

func findMountUnder(c *corev1.Container, file string) (corev1.VolumeMount, bool) {
	for _, vm := range c.VolumeMounts {
		if strings.HasPrefix(file, strings.TrimSuffix(vm.MountPath, "/")+"/") {
			return vm, true
		}
	}
	return corev1.VolumeMount{}, false
}

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// config is the e2atap run configuration of DESIGN.md, decoded strictly:
// a key not in the design is an error here as it is in e2atap.
type config struct {
	Profile string `json:"profile"`
	Listen  string `json:"listen"`
	Streams *struct {
		Max         int    `json:"max"`
		IdleTimeout string `json:"idle_timeout"`
		JoinWindow  string `json:"join_window"`
	} `json:"streams,omitempty"`
	Taps []struct {
		Name      string   `json:"name"`
		Type      string   `json:"type"`
		Listen    string   `json:"listen,omitempty"`
		Upstream  string   `json:"upstream,omitempty"`
		Paths     []string `json:"paths,omitempty"`
		Positions string   `json:"positions,omitempty"`
		URL       string   `json:"url,omitempty"`
		Subjects  []string `json:"subjects,omitempty"`
		Brokers   []string `json:"brokers,omitempty"`
		Topics    []string `json:"topics,omitempty"`
		Group     string   `json:"group,omitempty"`
	} `json:"taps"`
	Outputs struct {
		Findings *pathOutput `json:"findings,omitempty"`
		Log      *pathOutput `json:"log,omitempty"`
	} `json:"outputs"`
}

type pathOutput struct {
	Path           string `json:"path"`
	Content        string `json:"content,omitempty"`
	MaxRecordBytes int    `json:"max_record_bytes,omitempty"`
	RotateBytes    int64  `json:"rotate_bytes,omitempty"`
}

func checkConfig(t *testing.T, text string) config {
	t.Helper()
	if text == "" {
		t.Fatal("ConfigMap has no e2atap.yaml")
	}
	var top map[string]any
	if err := yaml.Unmarshal([]byte(text), &top); err != nil {
		t.Fatalf("e2atap.yaml: %v", err)
	}
	for _, k := range []string{"profile", "listen", "taps", "outputs"} {
		if _, ok := top[k]; !ok {
			t.Errorf("e2atap.yaml: key %s missing", k)
		}
	}
	var cfg config
	if err := decodeStrict([]byte(text), &cfg); err != nil {
		t.Fatalf("e2atap.yaml does not have the DESIGN shape: %v", err)
	}
	if cfg.Profile != "spec" && cfg.Profile != "jiuwenswarm" {
		t.Errorf("profile %q", cfg.Profile)
	}
	names := map[string]bool{}
	for _, tp := range cfg.Taps {
		if tp.Name == "" || names[tp.Name] {
			t.Errorf("tap name %q empty or repeated", tp.Name)
		}
		names[tp.Name] = true
	}
	return cfg
}

// TestKustomizations reads the kustomization files: every manifest of a
// directory is listed, every listed file exists, and the overlay's patches
// name objects of the base.
func TestKustomizations(t *testing.T) {
	base := loadManifests(t, "kubernetes/base")
	dirs := []string{"kubernetes/base", "kubernetes/overlays/example"}
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var k kustomization
		if err := decodeStrict(b, &k); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		listed := map[string]bool{"kustomization.yaml": true}
		for _, r := range k.Resources {
			p := filepath.Join(dir, r)
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: resource %s: %v", dir, r, err)
			}
			listed[r] = true
		}
		for _, p := range k.Patches {
			pp := filepath.Join(dir, p.Path)
			listed[p.Path] = true
			pb, err := os.ReadFile(pp)
			if err != nil {
				t.Errorf("%s: patch %s: %v", dir, p.Path, err)
				continue
			}
			var head struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(pb, &head); err != nil {
				t.Errorf("%s: %v", pp, err)
			}
			found := false
			for _, o := range base {
				found = found || (o.kind == head.Kind && o.name == head.Metadata.Name)
			}
			if !found {
				t.Errorf("%s patches %s %q, which the base does not define", pp, head.Kind, head.Metadata.Name)
			}
		}
		for _, img := range k.Images {
			if !imageUsed(base, img.Name) {
				t.Errorf("%s: image %s is not used by the base", dir, img.Name)
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var unlisted []string
		for _, e := range entries {
			// *.example.yaml are templates to copy (a Secret with a
			// placeholder): never applied with the directory.
			if strings.HasSuffix(e.Name(), ".example.yaml") {
				if listed[e.Name()] {
					t.Errorf("%s: %s is listed in kustomization.yaml; examples with placeholders must not be applied", dir, e.Name())
				}
				continue
			}
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".yaml") && !listed[e.Name()] {
				unlisted = append(unlisted, e.Name())
			}
		}
		sort.Strings(unlisted)
		if len(unlisted) > 0 {
			t.Errorf("%s: files not in kustomization.yaml: %v", dir, unlisted)
		}
	}
}

func imageUsed(objs []object, name string) bool {
	for _, o := range objs {
		d, ok := o.obj.(*appsv1.Deployment)
		if !ok {
			continue
		}
		for _, c := range append(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers...) {
			if strings.SplitN(c.Image, ":", 2)[0] == name {
				return true
			}
		}
	}
	return false
}

// TestDockerfile checks the Dockerfile statically (no docker here).
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var froms []string
	var final []string // instructions of the last stage
	var buildStage []string
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\\\n", " "), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(strings.ToUpper(line), "FROM ") {
			froms = append(froms, line)
			buildStage = append(buildStage, final...)
			final = nil
		}
		final = append(final, line)
	}
	if len(froms) < 2 {
		t.Fatalf("want a multi-stage build, got FROM lines %q", froms)
	}
	if !strings.Contains(froms[0], "golang:") || !strings.Contains(froms[0], " AS ") {
		t.Errorf("first stage %q: want a named golang build stage", froms[0])
	}
	last := froms[len(froms)-1]
	if !strings.Contains(last, "distroless/static") && !strings.Contains(last, "scratch") {
		t.Errorf("final stage %q: want distroless/static or scratch", last)
	}
	build := strings.Join(buildStage, "\n")
	for _, want := range []string{"CGO_ENABLED=0", "go build", "./cmd/e2atap"} {
		if !strings.Contains(build, want) {
			t.Errorf("build stage lacks %q", want)
		}
	}
	want := map[string]string{
		"USER":       "",
		"EXPOSE":     "9464",
		"ENTRYPOINT": `["/e2atap"]`,
		"CMD":        `["run", "--config", "/etc/e2atap/e2atap.yaml"]`,
	}
	got := map[string]string{}
	for _, l := range final {
		if i := strings.IndexByte(l, ' '); i > 0 {
			got[strings.ToUpper(l[:i])] = strings.TrimSpace(l[i+1:])
		}
	}
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("final stage has no %s", k)
		case k == "USER":
			if u := strings.SplitN(g, ":", 2)[0]; u == "0" || u == "root" {
				t.Errorf("USER %s: want a non-root user", g)
			}
		case k == "ENTRYPOINT" || k == "CMD":
			var gv, wv []string
			if json.Unmarshal([]byte(g), &gv) != nil || json.Unmarshal([]byte(v), &wv) != nil || !slices.Equal(gv, wv) {
				t.Errorf("%s %s, want %s (exec form)", k, g, v)
			}
		case g != v:
			t.Errorf("%s %s, want %s", k, g, v)
		}
	}
}

// TestKustomizeBuild renders the example overlay with kubectl's own
// kustomize, as `kubectl apply -k` would, and checks what reaches the API
// server: the namespace, the numeric targetPort, the key from the Secret.
func TestKustomizeBuild(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH: the overlay is checked file by file only (TestKustomizations)")
	}
	out, err := exec.Command(kubectl, "kustomize", "kubernetes/overlays/example").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize kubernetes/overlays/example: %v\n%s", err, out)
	}
	kinds := map[string]int{}
	for _, doc := range splitYAML(out) {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatal(err)
		}
		kinds[head.Kind]++
		if head.Metadata.Namespace != "agents" {
			t.Errorf("%s in namespace %q, want agents", head.Kind, head.Metadata.Namespace)
		}
		switch head.Kind {
		case "Secret":
			t.Error("the overlay renders a Secret: the fingerprint key must be created beside it, not applied with a placeholder")
		case "Service":
			var svc corev1.Service
			if err := decodeStrict(doc, &svc); err != nil {
				t.Fatal(err)
			}
			if tp := svc.Spec.Ports[0].TargetPort; tp.StrVal != "" || tp.IntVal != 19092 {
				t.Errorf("rendered Service targets %s, want 19092", tp.String())
			}
		case "Deployment":
			var dep appsv1.Deployment
			if err := decodeStrict(doc, &dep); err != nil {
				t.Fatal(err)
			}
			if r := dep.Spec.Replicas; r == nil || *r != 3 {
				t.Errorf("rendered replicas %v, want the overlay's 3", r)
			}
			found := false
			for _, c := range dep.Spec.Template.Spec.InitContainers {
				for _, e := range c.Env {
					found = found || (e.Name == "E2ATAP_FINGERPRINT_KEY" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil)
				}
			}
			if !found {
				t.Error("rendered sidecar has no E2ATAP_FINGERPRINT_KEY from a Secret")
			}
		}
	}
	for _, k := range []string{"ConfigMap", "Deployment", "Service", "PodMonitor", "PrometheusRule"} {
		if kinds[k] != 1 {
			t.Errorf("rendered %d %s, want 1", kinds[k], k)
		}
	}
}
