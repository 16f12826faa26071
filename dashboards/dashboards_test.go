package dashboards

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/e2atap/e2atap/deploy/promtest"
)

// exposition is the golden exposition of exporters/metrics: the contract of
// which metric names and labels exist.
const exposition = "../exporters/metrics/testdata/exposition.prom"

// Minimal Grafana types: only the fields the checks need. Grafana's model
// has hundreds of optional fields, so unknown fields are allowed and the
// required ones are checked explicitly.
type dashboard struct {
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Panels        []panel
	Templating    struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type gridPos struct{ H, W, X, Y int }

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	GridPos    *gridPos    `json:"gridPos"`
	Targets    []target    `json:"targets"`
	Panels     []panel     `json:"panels"` // collapsed rows
}

type target struct {
	RefID      string      `json:"refId"`
	Expr       string      `json:"expr"`
	Datasource *datasource `json:"datasource"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Datasource *datasource     `json:"datasource"`
}

// queryString reads a variable's query in either of Grafana's forms: a
// plain string or {"query": "..."}.
func (v variable) queryString() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(v.Query, &o)
	return o.Query
}

const dsVar = "${datasource}"

// Variables a query may use, and the values they get when parsed here:
// Grafana's interval variables must become durations to parse; $namespace
// and $tap stay literal inside their label matchers.
var parseVars = map[string]string{"__rate_interval": "5m", "__interval": "1m", "__range": "1h"}

func loadDashboards(t *testing.T) map[string]dashboard {
	t.Helper()
	names, err := fs.Glob(FS, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"e2atap-overview.json", "e2atap-tap.json"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("embedded dashboards = %v, want %v", names, want)
	}
	out := map[string]dashboard{}
	for _, n := range names {
		b, err := FS.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out[n] = d
	}
	return out
}

// flatten returns every non-row panel, those inside collapsed rows too.
func flatten(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		if p.Type == "row" {
			out = append(out, flatten(p.Panels)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

func TestDashboardStructure(t *testing.T) {
	uids := map[string]string{}
	for name, d := range loadDashboards(t) {
		t.Run(name, func(t *testing.T) {
			if d.Title == "" || d.UID == "" {
				t.Errorf("title %q, uid %q: both required", d.Title, d.UID)
			}
			if len(d.UID) > 40 {
				t.Errorf("uid %q: Grafana allows at most 40 characters", d.UID)
			}
			if other, dup := uids[d.UID]; dup {
				t.Errorf("uid %q also used by %s", d.UID, other)
			}
			uids[d.UID] = name
			if d.SchemaVersion < 39 {
				t.Errorf("schemaVersion %d, want >= 39", d.SchemaVersion)
			}
			checkVariables(t, d.Templating.List)

			ids := map[int]string{}
			var boxes []panel
			var walk func([]panel)
			walk = func(ps []panel) {
				for _, p := range ps {
					if p.ID == 0 {
						t.Errorf("panel %q: no id", p.Title)
					}
					if prev, dup := ids[p.ID]; dup {
						t.Errorf("panel id %d used by %q and %q", p.ID, prev, p.Title)
					}
					ids[p.ID] = p.Title
					if p.GridPos == nil || p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
						t.Errorf("panel %q: bad gridPos %+v", p.Title, p.GridPos)
					} else {
						boxes = append(boxes, p)
					}
					walk(p.Panels)
				}
			}
			walk(d.Panels)
			for i, a := range boxes {
				for _, b := range boxes[i+1:] {
					if overlap(*a.GridPos, *b.GridPos) {
						t.Errorf("panels %q and %q overlap", a.Title, b.Title)
					}
				}
			}

			panels := flatten(d.Panels)
			if len(panels) < 8 {
				t.Errorf("%d panels: a dashboard this thin is probably broken", len(panels))
			}
			for _, p := range panels {
				if p.Title == "" {
					t.Errorf("panel %d: no title", p.ID)
				}
				if p.Datasource == nil || p.Datasource.UID != dsVar || p.Datasource.Type != "prometheus" {
					t.Errorf("panel %q: datasource %+v, want {prometheus %s}", p.Title, p.Datasource, dsVar)
				}
				if len(p.Targets) == 0 {
					t.Errorf("panel %q: no targets", p.Title)
				}
				refs := map[string]bool{}
				for _, tg := range p.Targets {
					if strings.TrimSpace(tg.Expr) == "" {
						t.Errorf("panel %q target %s: empty expr", p.Title, tg.RefID)
					}
					if tg.RefID == "" || refs[tg.RefID] {
						t.Errorf("panel %q: refId %q missing or repeated", p.Title, tg.RefID)
					}
					refs[tg.RefID] = true
					if tg.Datasource != nil && tg.Datasource.UID != dsVar {
						t.Errorf("panel %q target %s: datasource %+v", p.Title, tg.RefID, tg.Datasource)
					}
				}
			}
		})
	}
}

func overlap(a, b gridPos) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

func checkVariables(t *testing.T, vars []variable) {
	t.Helper()
	byName := map[string]variable{}
	for _, v := range vars {
		byName[v.Name] = v
	}
	ds, ok := byName["datasource"]
	if !ok || ds.Type != "datasource" || ds.queryString() != "prometheus" {
		t.Errorf("variable datasource: %+v, want type datasource with query prometheus", ds)
	}
	want := map[string]string{
		"namespace": `label_values(e2atap_build_info, namespace)`,
		"tap":       `label_values(e2atap_tap_up{namespace=~"$namespace"}, tap)`,
	}
	for name, q := range want {
		v, ok := byName[name]
		if !ok {
			t.Errorf("variable %s missing", name)
			continue
		}
		if v.Type != "query" || v.queryString() != q {
			t.Errorf("variable %s: type %q query %q, want query %q", name, v.Type, v.queryString(), q)
		}
		if v.Datasource == nil || v.Datasource.UID != dsVar {
			t.Errorf("variable %s: datasource %+v, want %s", name, v.Datasource, dsVar)
		}
	}
}

// TestQueriesUseExportedMetrics parses every panel query with the PromQL
// parser and requires that each metric it reads is exported by
// exporters/metrics, and that each selector filters by $namespace and, when
// the metric has a tap label, by $tap.
func TestQueriesUseExportedMetrics(t *testing.T) {
	fams, err := promtest.ReadExposition(exposition)
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range loadDashboards(t) {
		used := map[string]bool{}
		for _, p := range flatten(d.Panels) {
			for _, tg := range p.Targets {
				where := fmt.Sprintf("%s: panel %q %s", name, p.Title, tg.RefID)
				for _, v := range promtest.VarNames(tg.Expr) {
					if _, ok := parseVars[v]; !ok && v != "namespace" && v != "tap" {
						t.Errorf("%s: unknown variable $%s", where, v)
					}
				}
				sels, err := promtest.Selectors(promtest.ExpandVars(tg.Expr, parseVars))
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				if len(sels) == 0 {
					t.Errorf("%s: reads no metric", where)
				}
				for _, s := range sels {
					fam, ok := fams[s.Metric]
					if !ok {
						t.Errorf("%s: metric %q is not exported by exporters/metrics", where, s.Metric)
						continue
					}
					used[fam.Name] = true
					if !s.Has("namespace", "=~", "$namespace") {
						t.Errorf("%s: %s is not filtered by namespace=~\"$namespace\"", where, s.Metric)
					}
					if fam.Labels["tap"] && !s.Has("tap", "=~", "$tap") {
						t.Errorf("%s: %s has a tap label but is not filtered by tap=~\"$tap\"", where, s.Metric)
					}
					for _, m := range s.Matchers {
						if m.Label != "namespace" && m.Label != "tap" && !fam.Labels[m.Label] {
							t.Errorf("%s: %s has no label %q", where, s.Metric, m.Label)
						}
					}
				}
			}
		}
		if name == "e2atap-overview.json" {
			// The overview shows every family the sidecar exports.
			var missing []string
			for _, f := range fams {
				if !used[f.Name] {
					missing = append(missing, f.Name)
				}
			}
			sort.Strings(missing)
			missing = dedupe(missing)
			if len(missing) > 0 {
				t.Errorf("overview shows no panel for %v", missing)
			}
		}
	}
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || s[i-1] != x {
			out = append(out, x)
		}
	}
	return out
}

func TestProvisioning(t *testing.T) {
	read := func(name string) map[string]any {
		b, err := FS.ReadFile(path.Join("provisioning", name))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.UnmarshalStrict(b, &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v, _ := m["apiVersion"].(float64); v != 1 {
			t.Errorf("%s: apiVersion %v, want 1", name, m["apiVersion"])
		}
		return m
	}
	var provs struct {
		Providers []struct {
			Name    string
			Type    string
			Options struct{ Path string }
		}
	}
	remarshal(t, read("dashboards.yaml"), &provs)
	if len(provs.Providers) != 1 || provs.Providers[0].Type != "file" || provs.Providers[0].Options.Path == "" {
		t.Errorf("dashboards.yaml: want one file provider with a path, got %+v", provs.Providers)
	}
	var dss struct {
		Datasources []struct {
			Type     string
			URL      string
			JSONData struct {
				TimeInterval string `json:"timeInterval"`
			} `json:"jsonData"`
		}
	}
	remarshal(t, read("datasources.yaml"), &dss)
	if len(dss.Datasources) != 1 || dss.Datasources[0].Type != "prometheus" || dss.Datasources[0].URL == "" {
		t.Errorf("datasources.yaml: want one prometheus data source with a URL, got %+v", dss.Datasources)
	}
}

func remarshal(t *testing.T, in any, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}
