package main

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/e2atap/e2atap/redact"
)

// Problem is one problem of a configuration, with where it is: the line of
// the file (0 when it is not in the file) or the environment variable the
// value came from.
type Problem struct {
	Line int
	// Env names the environment variable the bad value came from.
	Env string
	// Msg starts with the key path ("streams.join_window: ...").
	Msg string
	// Warning: worth saying, but the configuration can run.
	Warning bool
	// syntax: the file is not YAML, nothing else of it can be judged.
	syntax bool
}

func (p Problem) String() string {
	switch {
	case p.Line > 0:
		return fmt.Sprintf("line %d: %s", p.Line, p.Msg)
	case p.Env != "":
		return fmt.Sprintf("%s (from %s)", p.Msg, p.Env)
	}
	return p.Msg
}

// Problems is every problem found in a configuration. As an error it lists
// them one a line, in the order of the file.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// errors returns the problems that are not warnings (nil if none).
func (ps Problems) errors() Problems {
	var out Problems
	for _, p := range ps {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}

// sorted orders ps by line, those without a line last, and keeps the
// order of the checks within a line.
func (ps Problems) sorted() Problems {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].Line, ps[j].Line
		return a > 0 && (b == 0 || a < b)
	})
	return ps
}

// err is ps as an error, nil when there is no problem.
func (ps Problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// configSource remembers where each value of a Config came from, for the
// messages of Validate: the line of each key path, and the environment
// variable of a value applyEnv set.
type configSource struct {
	lines map[string]int    // "streams.join_window", "taps[1]", "taps[1].url" → line
	env   map[string]string // "taps[1].url" → E2ATAP_TAP_MESH_URL
}

// where returns the line of path, or of its closest parent in the file,
// and the variable that set it, if any.
func (s *configSource) where(path string) (line int, env string) {
	if s == nil {
		return 0, ""
	}
	if v, ok := s.env[path]; ok {
		return 0, v
	}
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := s.lines[p]; ok {
			return l, ""
		}
	}
	return 0, ""
}

func (s *configSource) setEnv(path, name string) {
	if s.env == nil {
		s.env = map[string]string{}
	}
	s.env[path] = name
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// configDecoder decodes a yaml.Node tree into a Config by walking it
// beside the Go value, so that one bad key or value is one problem and the
// rest of the file is still decoded. Keys are matched by the yaml tags of
// the structs; a value that is not a mapping or sequence is decoded by
// yaml itself into its field (its type may have an UnmarshalYAML).
type configDecoder struct {
	probs Problems
	lines map[string]int
	// set: the key paths given a value that is not null (a null keeps the
	// default: ParseConfig resolves a default left so).
	set map[string]bool
	// inAlias: the anchors being decoded, for an alias inside its own
	// anchor; steps bounds the work aliases can multiply.
	inAlias map[*yaml.Node]bool
	steps   int
}

// maxDecodeSteps bounds the nodes visited, aliases expanded: a
// configuration has a few hundred; a "billion laughs" file has no end.
const maxDecodeSteps = 1_000_000

func newConfigDecoder() *configDecoder {
	return &configDecoder{lines: map[string]int{}, set: map[string]bool{}, inAlias: map[*yaml.Node]bool{}}
}

// resolve follows an alias to its anchor's node, and says false (with a
// problem) if that anchor is being decoded already (it contains itself) or
// the work is beyond maxDecodeSteps. done is to be called after decoding.
func (d *configDecoder) resolve(n *yaml.Node, path string) (_ *yaml.Node, done func(), ok bool) {
	d.steps++
	if d.steps == maxDecodeSteps {
		d.add(n.Line, "%s: the aliases expand to more than %d values", show(path), maxDecodeSteps)
	}
	if d.steps >= maxDecodeSteps {
		return nil, nil, false
	}
	var held []*yaml.Node
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		if d.inAlias[n.Alias] {
			d.add(n.Line, "%s: alias *%s is inside its own anchor", show(path), n.Value)
			for _, h := range held {
				delete(d.inAlias, h)
			}
			return nil, nil, false
		}
		d.inAlias[n.Alias] = true
		held = append(held, n.Alias)
		n = n.Alias
	}
	return n, func() {
		for _, h := range held {
			delete(d.inAlias, h)
		}
	}, true
}

func (d *configDecoder) add(line int, format string, a ...any) {
	d.probs = append(d.probs, Problem{Line: line, Msg: fmt.Sprintf(format, a...)})
}

// yamlLine finds the line in a yaml syntax error ("yaml: line 3: ...").
// Compiled when first used, not at every command's start.
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

func (d *configDecoder) document(b []byte, cfg *Config) {
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return // an empty file: the defaults
		}
		msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 0
		if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		d.probs = append(d.probs, Problem{Line: line, Msg: "not valid YAML: " + msg, syntax: true})
		return
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		d.add(next.Line, "a second YAML document: a configuration is one document (remove the ---)")
	}
	if len(doc.Content) == 0 {
		return
	}
	d.value(doc.Content[0], reflect.ValueOf(cfg).Elem(), "")
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	unmarshaler  = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	tapType      = reflect.TypeOf(TapConfig{})
)

// value decodes n into v; path is the key path of v ("" for the top).
func (d *configDecoder) value(n *yaml.Node, v reflect.Value, path string) {
	n, done, ok := d.resolve(n, path)
	if !ok {
		return
	}
	defer done()
	if _, ok := d.lines[path]; !ok && path != "" {
		d.lines[path] = n.Line
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		switch v.Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
			v.SetZero()
		}
		return // "key:" with no value keeps the default
	}
	d.set[path] = true
	t := v.Type()
	if reflect.PointerTo(t).Implements(unmarshaler) {
		d.leaf(n, v, path)
		return
	}
	switch {
	case t.Kind() == reflect.Struct:
		d.mapping(n, v, path)
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.add(n.Line, "%s: want a mapping of keys to values, not %s", show(path), kindNameAt(path, n))
			return
		}
		m := reflect.MakeMap(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			kv := reflect.New(t.Key()).Elem()
			if err := k.Decode(kv.Addr().Interface()); err != nil {
				d.add(k.Line, "%s: key `%s`: %s", show(path), k.Value, want(t.Key()))
				continue
			}
			ev := reflect.New(t.Elem()).Elem()
			before := len(d.probs)
			d.value(val, ev, path+"."+k.Value)
			if len(d.probs) == before {
				m.SetMapIndex(kv, ev)
			}
		}
		v.Set(m)
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		if n.Kind != yaml.SequenceNode {
			d.add(n.Line, "%s: want a list ([a, b] or lines of \"- item\"), not %s", show(path), kindNameAt(path, n))
			return
		}
		s := reflect.MakeSlice(t, 0, len(n.Content))
		for _, e := range n.Content {
			if isNull(e) && t.Elem().Kind() != reflect.Pointer && t.Elem().Kind() != reflect.Interface {
				continue // as yaml does: "- " alone is no entry
			}
			s = reflect.Append(s, reflect.New(t.Elem()).Elem())
			d.value(e, s.Index(s.Len()-1), fmt.Sprintf("%s[%d]", path, s.Len()-1))
		}
		v.Set(s)
	default:
		d.leaf(n, v, path)
	}
}

// isNull: a null scalar, or an alias of one.
func isNull(n *yaml.Node) bool {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// leaf lets yaml decode a scalar (or a type with its own UnmarshalYAML);
// the value is set only if it decodes.
func (d *configDecoder) leaf(n *yaml.Node, v reflect.Value, path string) {
	nv := reflect.New(v.Type())
	nv.Elem().Set(v)
	if err := n.Decode(nv.Interface()); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) || n.Kind != yaml.ScalarNode {
			if v.Type().Kind() == reflect.Slice { // []byte: only fingerprint_key
				d.add(n.Line, "%s: a key is not set in the file (it would be in a ConfigMap): set E2ATAP_FINGERPRINT_KEY (value not shown)", show(path))
			} else if n.Kind == yaml.ScalarNode {
				d.add(n.Line, "%s: %s is not %s", show(path), shownValue(path, n), want(v.Type()))
			} else {
				d.add(n.Line, "%s: want %s, not %s", show(path), want(v.Type()), kindNameAt(path, n))
			}
		} else {
			d.add(n.Line, "%s: %v", show(path), err)
		}
		return
	}
	v.Set(nv.Elem())
}

// mapping decodes a mapping node into the struct v, key by key.
func (d *configDecoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, "%s: want a mapping of keys (key: value), not %s", show(path), kindNameAt(path, n))
		return
	}
	fields := yamlFields(v.Type())
	allowed := func(string) bool { return true }
	var names []string
	typ := ""
	if v.Type() == tapType {
		allowed, names, typ = d.tapKeyCheck(n, path)
	} else {
		for name := range fields {
			names = append(names, name)
		}
		sort.Strings(names)
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := k.Value
		if k.Tag == "!!merge" { // "<<: *defaults": the keys of the anchor(s), then these
			d.merge(val, v, path)
			continue
		}
		if l, dup := seen[key]; dup {
			d.add(k.Line, "%s: key %q is set twice (first on line %d)", show(path), key, l)
			continue
		}
		seen[key] = k.Line
		idx, ok := fields[key]
		if !ok {
			d.unknownKey(k, path, names, typ)
			continue
		}
		if !allowed(key) {
			continue
		}
		sub := key
		if path != "" {
			sub = path + "." + key
		}
		d.lines[sub] = k.Line
		d.value(val, v.FieldByIndex(idx), sub)
	}
	if v.Type() == tapType {
		v.Addr().Interface().(*TapConfig).line = n.Line
	}
}

// merge decodes the mapping (or list of mappings) of a "<<" key into v.
func (d *configDecoder) merge(val *yaml.Node, v reflect.Value, path string) {
	val, done, ok := d.resolve(val, path)
	if !ok {
		return
	}
	defer done()
	if val.Kind != yaml.SequenceNode {
		d.mapping(val, v, path)
		return
	}
	for _, m := range val.Content {
		if m, done, ok := d.resolve(m, path); ok {
			d.mapping(m, v, path)
			done()
		}
	}
}

// tapKeyCheck reports the keys of a tap that its type does not take, and
// returns which keys to decode, the keys to suggest for a typo, and the
// type if it is known. An unknown type is Validate's to name.
func (d *configDecoder) tapKeyCheck(n *yaml.Node, path string) (allowed func(string) bool, names []string, typ string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "type" {
			typ = n.Content[i+1].Value
		}
	}
	keys, known := tapKeys[typ]
	if !known {
		names = []string{"name", "type"}
		for _, t := range []string{"ws", "logdir", "nats", "kafka"} {
			for _, k := range tapKeys[t] {
				if !contains(names, k) {
					names = append(names, k)
				}
			}
		}
		return func(string) bool { return true }, names, ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Value == "name" || k.Value == "type" || !isTapKey(k.Value) || contains(keys, k.Value) {
			continue
		}
		d.add(k.Line, "%s: key %q is not a setting of a %s tap (it takes %s)", show(path), k.Value, typ, strings.Join(keys, ", "))
	}
	allowed = func(key string) bool { return key == "name" || key == "type" || contains(keys, key) }
	return allowed, append([]string{"name", "type"}, keys...), typ
}

// unknownKey reports key k, which is none of names, with the name it
// likely meant or the sections that take it.
func (d *configDecoder) unknownKey(k *yaml.Node, path string, names []string, tapType string) {
	where := show(path)
	if tapType != "" {
		where = fmt.Sprintf("%s (a %s tap)", path, tapType)
	}
	msg := fmt.Sprintf("%s: unknown key %q", where, k.Value)
	if s := closest(k.Value, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	} else if elsewhere := keyPlaces(k.Value); len(elsewhere) > 0 {
		msg += fmt.Sprintf(" (it is a key of %s)", strings.Join(elsewhere, ", "))
	} else {
		msg += fmt.Sprintf(" (it takes %s)", strings.Join(names, ", "))
	}
	d.add(k.Line, "%s", msg)
}

// show names a key path as a user writes it.
func show(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

// kindNameAt is kindName for the value at path: a scalar under a key
// that holds or names a secret (secretPath) is not quoted.
func kindNameAt(path string, n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return shownValue(path, n)
	}
	return kindName(n)
}

// shownValue is a scalar as a configuration error quotes it: "`value`",
// or, under a key that holds or names a secret (secretPath), "a string
// (not shown)": a password written inline where a mapping or a file's
// path goes ("auth: hunter2-Zq9", "sasl: …", "tls: <key material>") was
// printed by the error about it, which the redactor, seeing no shape in
// a bare password, let through.
func shownValue(path string, n *yaml.Node) string {
	if secretPath(path) {
		return "a string (not shown)"
	}
	return fmt.Sprintf("`%s`", n.Value)
}

// secretPath reports a configuration path in a block of credentials (a
// tap's auth, sasl or tls) or whose last key is credential-named
// (redact.ClassifyKey: password, token, fingerprint_key…).
func secretPath(path string) bool {
	for _, part := range strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
		switch part {
		case "auth", "sasl", "tls":
			return true
		}
	}
	last := path[strings.LastIndexByte(path, '.')+1:]
	return redact.ClassifyKey(last).Credential()
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("`%s`", n.Value)
}

// want says what a value of type t looks like.
func want(t reflect.Type) string {
	if t == durationType {
		return "a duration (like 30s, 10m or 1h30m)"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer of at least 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return "a " + t.String()
}

// yamlFields maps the yaml keys of struct t to their field index paths
// (an ",inline" struct's keys are its parent's).
func yamlFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(","+opts+",", ",inline,") && f.Type.Kind() == reflect.Struct {
			for k, idx := range yamlFields(f.Type) {
				out[k] = append([]int{i}, idx...)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = []int{i}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, a := range list {
		if a == s {
			return true
		}
	}
	return false
}

func isTapKey(k string) bool {
	for _, ks := range tapKeys {
		if contains(ks, k) {
			return true
		}
	}
	return false
}

// keyPlaces lists the sections of the configuration that take key k, for
// a key put at the wrong level ("join_window" at the top).
func keyPlaces(k string) []string {
	var out []string
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for name, i := range yamlFields(t) {
			sub := name
			if path != "" {
				sub = path + "." + name
			}
			if name == k {
				out = append(out, show(path))
			}
			ft := t.FieldByIndex(i).Type
			if ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != durationType && !reflect.PointerTo(ft).Implements(unmarshaler) {
				walk(ft, sub)
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	sort.Strings(out)
	return out
}

// closest returns the name nearest to s, if it is near enough to be a
// typo (a small edit distance for its length), else "".
func closest(s string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		dist := editDistance(strings.ToLower(s), strings.ToLower(n))
		if best == "" || dist < bestD || (dist == bestD && n < best) {
			best, bestD = n, dist
		}
	}
	limit := 1
	if len(s) >= 5 {
		limit = 2
	}
	if len(s) >= 10 {
		limit = 3
	}
	if best != "" && bestD <= limit {
		return best
	}
	// A shortened key ("budget" for "budget_bytes"), if only one fits.
	var fits []string
	for _, n := range names {
		if len(s) >= 4 && strings.HasPrefix(strings.ToLower(n), strings.ToLower(s)) {
			fits = append(fits, n)
		}
	}
	if len(fits) == 1 {
		return fits[0]
	}
	return ""
}

// editDistance is the Damerau-Levenshtein distance (optimal string
// alignment) of a and b: one transposition counts as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
