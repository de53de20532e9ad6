package redact

import "reflect"

// Strings runs every string v holds (through pointers, structs, slices, arrays and map values,
// exported fields) through r's known values and shapes (Known), in place. A report redacted this
// way cannot grow a field that its writer forgets to redact. gitleaks' provider formats are left
// to the writer's pass over the bytes it prints (cmdutil's Print, the bundle's archive): doctor
// redacts its report while its snapshot of the fleet is still in memory, and gitleaks' rules
// (some 19 MiB) are better loaded once that is gone. v must be a pointer.
func (r *Redactor) Strings(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return
	}
	r.walk(rv.Elem(), 0)
}

func (r *Redactor) walk(v reflect.Value, depth int) {
	if depth > 32 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if s := v.String(); s != "" {
				if red := r.Known(s); red != s {
					v.SetString(red)
				}
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			e := v.Elem()
			if v.Kind() == reflect.Interface && e.Kind() == reflect.String {
				if s := e.String(); v.CanSet() {
					if red := r.Known(s); red != s {
						v.Set(reflect.ValueOf(red).Convert(e.Type()))
					}
				}
				return
			}
			r.walk(e, depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				r.walk(v.Field(i), depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			if v.CanSet() && v.Len() > 0 {
				if red := r.Known(string(v.Bytes())); red != string(v.Bytes()) {
					v.SetBytes([]byte(red))
				}
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			r.walk(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		iter := v.MapRange()
		type kv struct{ k, v reflect.Value }
		var set []kv
		for iter.Next() {
			val := iter.Value()
			cp := reflect.New(val.Type()).Elem()
			cp.Set(val)
			r.walk(cp, depth+1)
			if !reflect.DeepEqual(cp.Interface(), val.Interface()) {
				set = append(set, kv{iter.Key(), cp})
			}
		}
		for _, e := range set {
			v.SetMapIndex(e.k, e.v)
		}
	}
}
