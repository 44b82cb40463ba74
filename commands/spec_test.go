package commands

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvserver/kvserver/acl"
	"github.com/kvserver/kvserver/resp"
)

// TestSpecRowsMatchRedis checks every row of the table that Redis also has
// against what Redis 7.0.15 reports in COMMAND INFO (the generated
// descriptions): arity, flags, key positions, ACL categories and key
// specs. The rows are the only source of these facts at run time, so a
// row that is wrong here is wrong on the wire.
func TestSpecRowsMatchRedis(t *testing.T) {
	table := NewTable(Specs())
	checked := 0
	Walk(table.All(), func(spec *Spec) {
		d := redisCommandDocs()[spec.Name]
		if d == nil {
			return
		}
		checked++
		if spec.Arity != d.Arity {
			t.Errorf("%s: arity %d, Redis %d", spec.Name, spec.Arity, d.Arity)
		}
		if got := spec.Flags.Names(); !slices.Equal(got, d.Flags) {
			t.Errorf("%s: flags %v, Redis %v", spec.Name, got, d.Flags)
		}
		if first, last, step := spec.LegacyKeyRange(); first != d.FirstKey || last != d.LastKey || step != d.Step {
			t.Errorf("%s: keys %d %d %d, Redis %d %d %d", spec.Name, first, last, step, d.FirstKey, d.LastKey, d.Step)
		}
		if got, want := simpleSet(spec.Categories()), d.ACLCategories; !sameValue(got, want) {
			t.Errorf("%s: ACL categories %v, Redis %v", spec.Name, spec.Categories(), want)
		}
		if got, want := keySpecsValue(spec.KeySpecs), d.KeySpecs; !sameValue(got, want) {
			t.Errorf("%s: key specs\n got %+v\nwant %+v", spec.Name, got, want)
		}
	})
	if checked < 20 {
		t.Errorf("only %d rows have Redis data; regenerate commanddocs_gen.go", checked)
	}
	for name := range kvserverCommandDocs {
		if _, dup := redisCommandDocs()[name]; dup {
			t.Errorf("%s is described both by hand and by Redis %s", name, redisDocsVersion)
		}
	}
}

// TestEveryHandlerHasACompleteSpec fails when a handler exists without a
// complete row: every cmd* function of the package is named in some row's
// Handler (directly or through an adaptor such as clusterOnly), and every
// row has a name of the right shape, an arity, ACL categories that exist,
// and a handler or subcommands.
func TestEveryHandlerHasACompleteSpec(t *testing.T) {
	Walk(Specs(), func(spec *Spec) { checkRow(t, spec) })
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	inRows := map[string]bool{}
	var handlers []*ast.FuncDecl
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			if key, isIdent := kv.Key.(*ast.Ident); isIdent && key.Name == "Handler" {
				ast.Inspect(kv.Value, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok {
						inRows[id.Name] = true
					}
					return true
				})
			}
			return true
		})
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "cmd") {
				handlers = append(handlers, fd)
			}
		}
	}
	for _, fd := range handlers {
		if !inRows[fd.Name.Name] {
			t.Errorf("%s: handler %s is no row's Handler; add its Spec row", fset.Position(fd.Pos()), fd.Name.Name)
		}
	}
	if len(handlers) < 80 {
		t.Errorf("only %d handlers found", len(handlers))
	}
}

// checkRow reports what a row lacks.
func checkRow(t *testing.T, spec *Spec) {
	t.Helper()
	if spec.Name == "" || spec.Name != strings.ToLower(spec.Name) {
		t.Errorf("row %q: the name must be lower case and set", spec.Name)
	}
	if spec.Arity == 0 {
		t.Errorf("%s: no arity", spec.Name)
	}
	if spec.ACL == "" {
		t.Errorf("%s: no ACL categories", spec.Name)
	}
	for _, cat := range strings.Fields(spec.ACL) {
		if !strings.HasPrefix(cat, "@") || !slices.Contains(acl.Categories(), cat[1:]) {
			t.Errorf("%s: unknown ACL category %q", spec.Name, cat)
		}
	}
	if (spec.Handler == nil) == (len(spec.Subcommands) == 0) && spec.Name != "command" {
		t.Errorf("%s: a row has a handler or subcommands", spec.Name)
	}
	for _, sub := range spec.Subcommands {
		if !strings.HasPrefix(sub.Name, spec.Name+"|") {
			t.Errorf("%s: subcommand %q must be named %s|<name>", spec.Name, sub.Name, spec.Name)
		}
	}
	for _, ks := range spec.KeySpecs {
		// Redis's not_key specs (shard channels) carry no access flag.
		if ks.Flags&(KeyRO|KeyRW|KeyOW|KeyRM|KeyNotKey) == 0 {
			t.Errorf("%s: a key spec needs one of RO, RW, OW, RM", spec.Name)
		}
		if ks.Begin.Index == 0 && ks.Begin.Keyword == "" && !ks.Begin.Unknown {
			t.Errorf("%s: a key spec needs a begin search", spec.Name)
		}
		if ks.ReadsValue && ks.Flags&(KeyRO|KeyRW) == 0 {
			t.Errorf("%s: a key whose value is read must be RO or RW", spec.Name)
		}
	}
	if spec.Flags&(FlagWrite|FlagReadonly) != 0 && len(spec.KeySpecs) == 0 && spec.GetKeys == nil && !keyless[spec.Name] {
		t.Errorf("%s: reads or writes data but has no key specs", spec.Name)
	}
}

// keyless are the data commands without key arguments.
var keyless = map[string]bool{
	"keys": true, "scan": true, "randomkey": true, "dbsize": true, "lolwut": true,
	"flushdb": true, "flushall": true, "swapdb": true,
	// They write the function libraries, not keys.
	"function|load": true, "function|restore": true, "function|flush": true, "function|delete": true,
}

// TestKeySpecsFindRedisKeys runs key finding over commands of several
// shapes, including Redis key-spec shapes no row uses yet (keyword begin,
// keynum find), as Redis's getKeysFromCommandWithSpecs finds them.
func TestKeySpecsFindRedisKeys(t *testing.T) {
	tests := []struct {
		name string
		ks   []KeySpec
		args string
		want []int
	}{
		{"one key", []KeySpec{OneKey(1, KeyRO)}, "get k", []int{1}},
		{"mset pairs", []KeySpec{{Flags: KeyOW, Begin: Index(1), Find: Range(-1, 2, 0)}}, "mset a 1 b 2", []int{1, 3}},
		{"mset odd", []KeySpec{{Flags: KeyOW, Begin: Index(1), Find: Range(-1, 2, 0)}}, "mset a 1 b", []int{1, 3}},
		{"two specs", []KeySpec{OneKey(1, KeyRW), OneKey(2, KeyOW)}, "rename a b", []int{1, 2}},
		{"eval keynum", []KeySpec{{Flags: KeyRW, Begin: Index(2), Find: KeyNum(0, 1, 1)}}, "eval s 2 a b c", []int{3, 4}},
		{"eval bad numkeys", []KeySpec{{Flags: KeyRW, Begin: Index(2), Find: KeyNum(0, 1, 1)}}, "eval s x a", nil},
		{"xread streams", []KeySpec{{Flags: KeyRO, Begin: Keyword("STREAMS", 1), Find: Range(-1, 1, 2)}}, "xread count 2 streams a b 0 0", []int{4, 5}},
		{"keyword absent", []KeySpec{{Flags: KeyRO, Begin: Keyword("STREAMS", 1), Find: Range(-1, 1, 2)}}, "xread count 2", nil},
		{"keyword from end", []KeySpec{{Flags: KeyRO, Begin: Keyword("STORE", -2), Find: Range(0, 1, 0)}}, "sort k store d", []int{3}},
	}
	for _, tt := range tests {
		spec := &Spec{Name: "x", KeySpecs: tt.ks}
		var args [][]byte
		for _, a := range strings.Fields(tt.args) {
			args = append(args, []byte(a))
		}
		if got := spec.Keys(args); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Keys(%q) = %v, want %v", tt.name, tt.args, got, tt.want)
		}
	}
}

// TestLegacyRangeAndMovableKeysFollowRedis derives COMMAND INFO's first,
// last and step and the movablekeys flag like Redis does.
func TestLegacyRangeAndMovableKeysFollowRedis(t *testing.T) {
	tests := []struct {
		name              string
		ks                []KeySpec
		first, last, step int
		movable           bool
	}{
		{"none", nil, 0, 0, 0, false},
		{"get", []KeySpec{OneKey(1, KeyRO)}, 1, 1, 1, false},
		{"mset", []KeySpec{{Flags: KeyOW, Begin: Index(1), Find: Range(-1, 2, 0)}}, 1, -1, 2, false},
		{"rename", []KeySpec{OneKey(1, KeyRW), OneKey(2, KeyOW)}, 1, 2, 1, false},
		{"eval", []KeySpec{{Flags: KeyRW, Begin: Index(2), Find: KeyNum(0, 1, 1)}}, 0, 0, 0, true},
		{"smove", []KeySpec{OneKey(1, KeyRW), OneKey(2, KeyRW), OneKey(4, KeyRW)}, 1, 2, 1, true},
	}
	for _, tt := range tests {
		first, last, step, movable := deriveKeyRange(tt.ks)
		if first != tt.first || last != tt.last || step != tt.step || movable != tt.movable {
			t.Errorf("%s: %d %d %d movable %v, want %d %d %d %v", tt.name, first, last, step, movable, tt.first, tt.last, tt.step, tt.movable)
		}
	}
}

// sameValue compares two replies, an empty aggregate equal to a nil one.
func sameValue(a, b resp.Value) bool {
	if a.Kind != b.Kind || a.Str != b.Str || a.Int != b.Int || len(a.Elems) != len(b.Elems) {
		return false
	}
	for i := range a.Elems {
		if !sameValue(a.Elems[i], b.Elems[i]) {
			return false
		}
	}
	return true
}

// TestValueKeysFollowTheKeySpecs checks ValueKeys, with and without its
// allocation-free path, against the keys of the ReadsValue key specs.
func TestValueKeysFollowTheKeySpecs(t *testing.T) {
	table := NewTable(Specs())
	tests := []struct {
		cmd  string
		want string
	}{
		{"get k", "k"},
		{"mget a b c", "a b c"},
		{"rename a b", "a"},
		{"copy a b db 1", "a"},
		{"set k v", ""},
		{"append k v", "k"},
		{"del a b", ""},
	}
	for _, tt := range tests {
		args := bytesFields(tt.cmd)
		spec := table.Lookup(args[0])
		var got []string
		for _, k := range spec.ValueKeys(args) {
			got = append(got, string(k))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("ValueKeys(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
		slow := *spec
		slow.valueRun = nil
		var viaSpecs []string
		for _, k := range slow.ValueKeys(args) {
			viaSpecs = append(viaSpecs, string(k))
		}
		if !slices.Equal(got, viaSpecs) {
			t.Errorf("ValueKeys(%q): fast path %q, key specs %q", tt.cmd, got, viaSpecs)
		}
	}
	get := table.Lookup([]byte("get"))
	args := bytesFields("get k")
	if n := testing.AllocsPerRun(100, func() { get.ValueKeys(args) }); n != 0 {
		t.Errorf("ValueKeys(GET) allocates %v times", n)
	}
}

func bytesFields(s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(f))
	}
	return out
}
