package promtest

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
)

// Matcher is one label matcher of a selector, e.g. tap=~"$tap".
type Matcher struct {
	Label string
	Op    string // =, !=, =~, !~
	Value string
}

// Selector is one vector selector of a PromQL expression.
type Selector struct {
	Metric   string
	Matchers []Matcher // without the __name__ matcher
}

// Has reports whether the selector has a matcher label op value.
func (s Selector) Has(label, op, value string) bool {
	for _, m := range s.Matchers {
		if m.Label == label && m.Op == op && m.Value == value {
			return true
		}
	}
	return false
}

// Label returns the matchers on label.
func (s Selector) Label(label string) []Matcher {
	var out []Matcher
	for _, m := range s.Matchers {
		if m.Label == label {
			out = append(out, m)
		}
	}
	return out
}

var promqlParser = parser.NewParser(parser.Options{})

// Selectors parses expr (after ExpandVars, if it holds Grafana variables)
// and returns its vector selectors in order of appearance.
func Selectors(expr string) ([]Selector, error) {
	e, err := promqlParser.ParseExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", expr, err)
	}
	var out []Selector
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		s := Selector{Metric: vs.Name}
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel {
				if s.Metric == "" && m.Type.String() == "=" {
					s.Metric = m.Value
				}
				continue
			}
			s.Matchers = append(s.Matchers, Matcher{Label: m.Name, Op: m.Type.String(), Value: m.Value})
		}
		out = append(out, s)
		return nil
	})
	return out, nil
}

// MetricNames returns the distinct metric names expr selects, sorted. A
// selector without a literal name (only {__name__=~...}) is an error: the
// tests must be able to say which metric a query reads.
func MetricNames(expr string) ([]string, error) {
	sels, err := Selectors(expr)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, s := range sels {
		if s.Metric == "" {
			return nil, fmt.Errorf("%q: a selector without a metric name", expr)
		}
		set[s.Metric] = true
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// grafanaVar matches the three Grafana variable syntaxes: $name, ${name}
// (optionally ${name:format}) and [[name]].
var grafanaVar = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(?::[A-Za-z0-9_]+)?\}|\[\[([A-Za-z0-9_]+)\]\]|\$([A-Za-z0-9_]+)`)

// ExpandVars substitutes Grafana template variables in expr from vars. A
// variable that vars does not name is left as it is (and the expression
// will then usually fail to parse, which is what a test wants to see).
func ExpandVars(expr string, vars map[string]string) string {
	return grafanaVar.ReplaceAllStringFunc(expr, func(m string) string {
		sub := grafanaVar.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		if v, ok := vars[name]; ok {
			return v
		}
		return m
	})
}

// VarNames returns the Grafana variables expr uses, e.g. "namespace",
// "__rate_interval".
func VarNames(expr string) []string {
	var out []string
	for _, sub := range grafanaVar.FindAllStringSubmatch(expr, -1) {
		out = append(out, sub[1]+sub[2]+sub[3])
	}
	return out
}

// Family is one metric family of an exposition.
type Family struct {
	Name   string
	Type   string          // counter, gauge, histogram, summary, untyped
	Labels map[string]bool // label names of its samples (le and quantile excluded)
}

// ReadExposition reads a text-format exposition and returns every series
// name it defines, histogram and summary families expanded into the names
// PromQL sees (_bucket, _sum, _count), each mapped to its family.
func ReadExposition(path string) (map[string]*Family, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseExposition(f)
}

// ParseExposition is ReadExposition on a reader.
func ParseExposition(r io.Reader) (map[string]*Family, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse exposition: %w", err)
	}
	out := map[string]*Family{}
	for name, mf := range fams {
		fam := &Family{Name: name, Type: strings.ToLower(mf.GetType().String()), Labels: map[string]bool{}}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				fam.Labels[lp.GetName()] = true
			}
		}
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			out[name+"_bucket"] = fam
			out[name+"_sum"] = fam
			out[name+"_count"] = fam
		case dto.MetricType_SUMMARY:
			out[name] = fam
			out[name+"_sum"] = fam
			out[name+"_count"] = fam
		default:
			out[name] = fam
		}
	}
	return out, nil
}
