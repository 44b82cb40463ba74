package config

import (
	"strconv"
	"sync/atomic"
)

// Int is the value of an integer or size setting, String of a string or
// enum setting, Bool of a yes/no setting, by name, whether or not the
// setting has a field of its own. The zero Config (one that never went
// through Load) answers with the table's defaults. An unknown name or a
// name of another kind is a programming error: they panic.
func (c Config) Int(name string) int64 { return c.value(name).(int64) }

// String: see Int.
func (c Config) String(name string) string { return c.value(name).(string) }

// Bool: see Int.
func (c Config) Bool(name string) bool { return c.value(name).(bool) }

// value is the setting's value as int64, string or bool.
func (c Config) value(name string) any {
	row := lookup(name)
	var p any
	switch {
	case row.field != nil:
		p = row.field(&c)
	case c.byName[name] != nil:
		p = c.byName[name]
	default:
		var d Config
		if err := row.decode(row.Default, &d); err != nil {
			panic("config: default of " + name + ": " + err.Error())
		}
		p = d.byName[name]
	}
	switch v := p.(type) {
	case *int:
		return int64(*v)
	case *int64:
		return *v
	case *string:
		return *v
	case *bool:
		return *v
	}
	panic("config: setting " + name + " is not an integer, string or boolean")
}

// lookup returns the row of a configurable setting.
func lookup(name string) *Setting {
	for i := range settings {
		if settings[i].Name == name && settings[i].Configurable() {
			return &settings[i]
		}
	}
	panic("config: no setting " + name)
}

// ReadByName reports whether the program reads the setting by name
// (Config.Int, Live.Int, ...) rather than through a Config field: true
// for every row without a field, which CONFIG GET and SET then handle
// without any code of the setting's own.
func (s Setting) ReadByName() bool { return s.field == nil && s.Configurable() }

// Live is a running server's settings: those it started with, plus CONFIG
// SET's changes. Reads take no lock (a copied map behind an atomic
// pointer); Set copies. Only the settings read by name live here; the
// others are wired into their owners at start.
type Live struct {
	vals atomic.Pointer[map[string]any]
}

// NewLive holds c's values of the settings read by name.
func NewLive(c Config) *Live {
	vals := make(map[string]any)
	for _, s := range settings {
		if s.ReadByName() && (s.Kind == KindInt || s.Kind == KindSize || s.Kind == KindString || s.Kind == KindEnum || s.Kind == KindBool) {
			vals[s.Name] = c.value(s.Name)
		}
	}
	l := &Live{}
	l.vals.Store(&vals)
	return l
}

// Int is the current value of an integer or size setting read by name.
func (l *Live) Int(name string) int64 { return l.get(name).(int64) }

// String is the current value of a string or enum setting read by name.
func (l *Live) String(name string) string { return l.get(name).(string) }

// Bool is the current value of a yes/no setting read by name.
func (l *Live) Bool(name string) bool { return l.get(name).(bool) }

// Text is the current value as CONFIG GET writes it: decimal, yes or no,
// or the string.
func (l *Live) Text(name string) string {
	switch v := l.get(name).(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		if v {
			return "yes"
		}
		return "no"
	default:
		return v.(string)
	}
}

// Set changes a setting read by name to v, which must be of the kind's Go
// type (int64, string or bool), already validated (CONFIG SET parses it
// against the row's bounds).
func (l *Live) Set(name string, v any) {
	for {
		old := l.vals.Load()
		next := make(map[string]any, len(*old))
		for k, x := range *old {
			next[k] = x
		}
		cur, known := (*old)[name]
		if !known {
			panic("config: no setting read by name " + name)
		}
		switch cur.(type) {
		case int64:
			next[name] = v.(int64)
		case bool:
			next[name] = v.(bool)
		default:
			next[name] = v.(string)
		}
		if l.vals.CompareAndSwap(old, &next) {
			return
		}
	}
}

func (l *Live) get(name string) any {
	v, ok := (*l.vals.Load())[name]
	if !ok {
		panic("config: no setting read by name " + name)
	}
	return v
}
