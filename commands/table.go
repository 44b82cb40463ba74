package commands

import (
	"fmt"
	"strings"
)

// Table indexes a command table by name. Each server builds its own from
// Specs (NewTable copies the rows), so rename-command in one server
// touches nothing another sees.
type Table struct {
	byName map[string]*Spec
	all    []*Spec
	// original are the commands under their original names, renamed and
	// disabled ones included (ACL CAT and the ACL catalog list them all).
	original []*Spec
	// byID is every row, subcommands included, at its Spec.ID.
	byID []*Spec
}

// Specs returns the command table's rows, family by family. The slice and
// the rows are shared: build a Table to use them.
func Specs() []*Spec {
	var all []*Spec
	for _, family := range families {
		all = append(all, family...)
	}
	return all
}

// families are the command families' rows, in the order COMMAND lists
// them. A new family adds its slice here.
var families = [][]*Spec{
	stringCommands,
	bitmapCommands,
	hyperloglogCommands,
	keyspaceCommands,
	connectionCommands,
	aclCommands,
	infoCommands,
	configCommands,
	serverCommands,
	commandFamily,
	clusterCommands,
	kvcacheCommands,
	transactionCommands,
	hashCommands,
	listCommands,
	blockingCommands,
	setCommands,
	serializeCommands,
	migrateCommands,
	pubsubCommands,
	zsetCommands,
	streamCommands,
	scriptingCommands,
	geoCommands,
	monitorCommands,
	sortCommands,
}

// NewTable builds the lookup table from copies of specs, deriving what
// each row leaves implicit (Spec.finish).
func NewTable(specs []*Spec) *Table {
	t := &Table{byName: make(map[string]*Spec, len(specs))}
	for _, orig := range specs {
		spec := orig.clone()
		spec.finish()
		t.number(spec)
		t.byName[spec.Name] = spec
		t.all = append(t.all, spec)
	}
	t.original = t.all
	return t
}

// number gives spec and its subcommands the next IDs.
func (t *Table) number(spec *Spec) {
	spec.ID = len(t.byID)
	t.byID = append(t.byID, spec)
	for _, sub := range spec.Subcommands {
		t.number(sub)
	}
}

// NumIDs is the number of rows, subcommands included: every Spec.ID of the
// table is below it.
func (t *Table) NumIDs() int { return len(t.byID) }

// ByID returns the row of an ID, subcommands included.
func (t *Table) ByID(id int) *Spec { return t.byID[id] }

// Lookup finds a command by name, case-insensitively.
func (t *Table) Lookup(name []byte) *Spec {
	return lookupFold(t.byName, name)
}

// LookupFullName finds a command by its full name ("get", "client|list"),
// case-insensitively, like Redis's lookupCommandBySds.
func (t *Table) LookupFullName(name []byte) *Spec {
	parts := strings.Split(string(name), "|")
	if len(parts) > 2 {
		return nil
	}
	spec := t.Lookup([]byte(parts[0]))
	if spec == nil || len(parts) == 1 {
		return spec
	}
	if spec.subs == nil {
		return nil
	}
	return spec.Sub([]byte(parts[1]))
}

// All returns every top-level command, renamed ones under their original
// names, disabled ones left out.
func (t *Table) All() []*Spec { return t.all }

// Original returns every top-level command as built, before renames.
func (t *Table) Original() []*Spec { return t.original }

// Walk calls fn for every command and subcommand of specs, parents first.
func Walk(specs []*Spec, fn func(*Spec)) {
	for _, spec := range specs {
		fn(spec)
		Walk(spec.Subcommands, fn)
	}
}

// lookupFold finds name in m (whose keys are lower case) without
// allocating: clients send upper-case names, which are lowered into a
// stack buffer first, for one map lookup.
func lookupFold(m map[string]*Spec, name []byte) *Spec {
	var buf [32]byte
	if len(name) > len(buf) {
		return m[strings.ToLower(string(name))]
	}
	low := buf[:len(name)]
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return m[string(low)]
}

// Rename applies rename-command entries, Redis's way: each command named
// by a key leaves the lookup and, unless its new name is empty, comes back
// under the new name. All removals happen before the additions, so two
// commands may swap names. A renamed command keeps its original name in
// COMMAND replies, NOPERM errors and ACL rules; a disabled one leaves
// COMMAND's list and answers as unknown.
func (t *Table) Rename(renames map[string]string) error {
	if len(renames) == 0 {
		return nil
	}
	olds := make([]string, 0, len(renames))
	for old := range renames {
		olds = append(olds, old)
	}
	moved := make(map[string]*Spec, len(olds))
	for _, old := range olds {
		key := strings.ToLower(old)
		spec := t.byName[key]
		if spec == nil {
			return fmt.Errorf("rename-command %s: No such command in rename-command", old)
		}
		delete(t.byName, key)
		moved[old] = spec
	}
	for _, old := range olds {
		name := strings.ToLower(renames[old])
		if name == "" {
			continue
		}
		if _, taken := t.byName[name]; taken {
			return fmt.Errorf("rename-command %s %s: Target command name already exists", old, renames[old])
		}
		t.byName[name] = moved[old]
	}
	kept := t.all[:0:0]
	for _, spec := range t.all {
		for _, s := range t.byName {
			if s == spec {
				kept = append(kept, spec)
				break
			}
		}
	}
	t.all = kept
	return nil
}
