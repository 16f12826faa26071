package validate

import (
	"reflect"
	"testing"

	"github.com/e2atap/e2atap/e2a"
)

// TestRecordInfoReset: reset leaves the info the composite literal it
// replaced would, whatever the info held before: every field, also one
// added later, is set non-zero first (a field reset forgets would carry a
// record's kind, stream or split secret over to the next record).
func TestRecordInfoReset(t *testing.T) {
	var ri RecordInfo
	v := reflect.ValueOf(&ri).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(1)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f.SetUint(1)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("field %s of kind %s: teach this test to set it", v.Type().Field(i).Name, f.Kind())
		}
		if f.IsZero() {
			t.Fatalf("field %s still zero", v.Type().Field(i).Name)
		}
	}
	in, r := &Input{}, &e2a.Record{}
	ri.reset(in, ProtoE2A, e2a.ClassResponse, r)
	want := RecordInfo{In: in, Protocol: ProtoE2A, Class: e2a.ClassResponse, JSON: r}
	if !reflect.DeepEqual(ri, want) || ri.In != in || ri.JSON != r {
		t.Errorf("after reset: %+v, want %+v", ri, want)
	}
}
