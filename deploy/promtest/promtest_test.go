package promtest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandVars(t *testing.T) {
	vars := map[string]string{"namespace": "prod", "tap": "a|b", "__rate_interval": "1m"}
	for in, want := range map[string]string{
		`rate(x{namespace=~"$namespace", tap=~"$tap"}[$__rate_interval])`: `rate(x{namespace=~"prod", tap=~"a|b"}[1m])`,
		`x{namespace=~"${namespace}", tap=~"[[tap]]"}`:                    `x{namespace=~"prod", tap=~"a|b"}`,
		`x{tap=~"${tap:regex}"}`:                                          `x{tap=~"a|b"}`,
		`x{other="$unknown"}`:                                             `x{other="$unknown"}`,
	} {
		if got := ExpandVars(in, vars); got != want {
			t.Errorf("ExpandVars(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestSelectors(t *testing.T) {
	sels, err := Selectors(`sum by (le) (rate(a_bucket{tap=~"$tap"}[5m])) / ignoring(x) group_left sum(b{namespace="n"}) or vector(0)`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Selector{
		{Metric: "a_bucket", Matchers: []Matcher{{"tap", "=~", "$tap"}}},
		{Metric: "b", Matchers: []Matcher{{"namespace", "=", "n"}}},
	}
	if diff := cmp.Diff(want, sels); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := MetricNames(`{__name__=~"e2atap_.+"}`); err == nil {
		t.Error("a selector without a literal name must be an error")
	}
	if _, err := Selectors(`rate(x[$__rate_interval])`); err == nil {
		t.Error("an unexpanded interval variable must not parse")
	}
}

func TestParseExposition(t *testing.T) {
	fams, err := ParseExposition(strings.NewReader(`# TYPE h histogram
h_bucket{tap="a",le="1"} 0
h_bucket{tap="a",le="+Inf"} 0
h_sum{tap="a"} 0
h_count{tap="a"} 0
# TYPE c counter
c_total{rule="r"} 1
`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range fams {
		names = append(names, n)
	}
	for _, n := range []string{"h_bucket", "h_sum", "h_count", "c_total"} {
		if fams[n] == nil {
			t.Errorf("%s missing from %v", n, names)
		}
	}
	if fams["h"] != nil {
		t.Error("a classic histogram has no series named h")
	}
	if !fams["h_bucket"].Labels["tap"] || fams["h_bucket"].Labels["le"] {
		t.Errorf("h labels %v: want tap, not le", fams["h_bucket"].Labels)
	}
}
