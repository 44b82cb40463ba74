package commands

import (
	"math"
	"strconv"
)

// KeyFlags say what a command does with a key (Redis 7's key spec flags).
type KeyFlags uint16

// Key spec flags, in the order COMMAND INFO lists them.
const (
	// KeyRO: the value is only read.
	KeyRO KeyFlags = 1 << iota
	// KeyRW: the value is read and written.
	KeyRW
	// KeyOW: the value is overwritten without being read.
	KeyOW
	// KeyRM: the key is deleted.
	KeyRM
	// KeyAccess: the command returns, copies or uses the user data of the value.
	KeyAccess
	// KeyUpdate: the value is changed in place.
	KeyUpdate
	// KeyInsert: data is added to the value.
	KeyInsert
	// KeyDelete: data is removed from the value.
	KeyDelete
	// KeyNotKey: the argument is not a key, but is routed like one.
	KeyNotKey
	// KeyIncomplete: the spec may miss some keys.
	KeyIncomplete
	// KeyVariableFlags: the flags depend on the other arguments.
	KeyVariableFlags
)

// keyFlagNames are the COMMAND INFO names of the key flags, bit by bit.
var keyFlagNames = [...]string{
	"RO", "RW", "OW", "RM", "access", "update", "insert", "delete",
	"not_key", "incomplete", "variable_flags",
}

// Names lists the flag names set in f, in Redis's order.
func (f KeyFlags) Names() []string { return bitNames(f, keyFlagNames[:]) }

// KeySpec is one Redis 7 key specification: where a run of keys begins
// (BeginSearch), how many there are from there (FindKeys), and what the
// command does to them (Flags).
type KeySpec struct {
	// Notes is Redis's free-text remark on the spec, if any.
	Notes string
	// Flags say what the command does with these keys.
	Flags KeyFlags
	// ReadsValue marks keys whose stored value the handler reads (rather
	// than only their existence or expiry): dispatch loads such values
	// from disk, outside the engine lock, before the handler runs.
	// kvserver's own; not part of COMMAND INFO.
	ReadsValue bool
	// Begin finds the first key.
	Begin BeginSearch
	// Find finds the keys from the first.
	Find FindKeys
}

// BeginSearch is a key spec's begin_search: an argument index, or the
// argument after a keyword.
type BeginSearch struct {
	// Index is the first key's argument index (index type); 0 when
	// Keyword is used.
	Index int
	// Keyword, when set, is searched for case-insensitively from
	// StartFrom (from the end when negative); the keys follow it.
	Keyword   string
	StartFrom int
	// Unknown marks Redis's "unknown" begin_search (and find_keys): keys
	// no spec can locate, which a GetKeys function finds instead.
	Unknown bool
}

// FindKeys is a key spec's find_keys: a range or a key count.
type FindKeys struct {
	// KeyNum selects the keynum type: the key count is the argument
	// KeyNumIdx after the begin, the keys start FirstKey after it.
	KeyNum              bool
	KeyNumIdx, FirstKey int
	// LastKey (range type) is the last key relative to the begin; -1 is
	// the last argument, -2 the one before. Limit, with LastKey -1, stops
	// at 1/Limit of the remaining arguments.
	LastKey, Limit int
	// KeyStep is the distance between keys (both types).
	KeyStep int
}

// Index is a begin_search at argument i.
func Index(i int) BeginSearch { return BeginSearch{Index: i} }

// UnknownBegin is the begin_search of keys whose place in the arguments
// no spec can describe (SORT's BY, GET and STORE).
func UnknownBegin() BeginSearch { return BeginSearch{Unknown: true} }

// Keyword is a begin_search for the argument after keyword, searched from
// startFrom.
func Keyword(keyword string, startFrom int) BeginSearch {
	return BeginSearch{Keyword: keyword, StartFrom: startFrom}
}

// Range is a find_keys range: keys from the begin to lastKey (relative;
// negative counts from the end), every step, with Redis's limit.
func Range(lastKey, step, limit int) FindKeys {
	return FindKeys{LastKey: lastKey, KeyStep: step, Limit: limit}
}

// KeyNum is a find_keys keynum: the key count at keyNumIdx after the
// begin, the keys from firstKey after it, every step.
func KeyNum(keyNumIdx, firstKey, step int) FindKeys {
	return FindKeys{KeyNum: true, KeyNumIdx: keyNumIdx, FirstKey: firstKey, KeyStep: step}
}

// OneKey is the key spec of a command whose only key is argument i.
func OneKey(i int, flags KeyFlags) KeySpec {
	return KeySpec{Flags: flags, Begin: Index(i), Find: Range(0, 1, 0)}
}

// valueKey is OneKey for a command that reads the key's stored value (so
// the dispatcher loads it from disk first).
func valueKey(i int, flags KeyFlags) KeySpec {
	k := OneKey(i, flags)
	k.ReadsValue = true
	return k
}

// The key specs of the collection commands whose only key is argument 1
// and whose value they read, by what they do with it.
var (
	keyReadsRO     = []KeySpec{valueKey(1, KeyRO)}
	keyReadsAccess = []KeySpec{valueKey(1, KeyRO|KeyAccess)}
	keyReadsDelete = []KeySpec{valueKey(1, KeyRW|KeyDelete)}
)

// Keys returns the argument indexes of the command's keys, in order, the
// way Redis's getKeysFromCommandWithSpecs finds them: from GetKeys, or
// from every key spec. Arguments a variadic command lacks are skipped, as
// Redis does, leaving the handler to report the syntax error.
func (s *Spec) Keys(args [][]byte) []int { return s.AppendKeys(nil, args) }

// AppendKeys is Keys appending to dst, so that dispatch's checks (ACL,
// cluster routing) can find the keys of every command in a buffer on the
// stack.
func (s *Spec) AppendKeys(dst []int, args [][]byte) []int {
	if s.GetKeys != nil {
		return append(dst, s.GetKeys(args)...)
	}
	for i := range s.KeySpecs {
		dst = s.KeySpecs[i].appendKeys(dst, args)
	}
	return dst
}

// AppendAccessKeys is AppendKeys without the arguments that are not keys
// (KeyNotKey: shard channels), for the ACL key check.
func (s *Spec) AppendAccessKeys(dst []int, args [][]byte) []int {
	if s.GetKeys != nil {
		return append(dst, s.GetKeys(args)...)
	}
	for i := range s.KeySpecs {
		if s.KeySpecs[i].Flags&KeyNotKey == 0 {
			dst = s.KeySpecs[i].appendKeys(dst, args)
		}
	}
	return dst
}

// ValueKeys returns the arguments whose stored values the command reads
// (the keys of its ReadsValue key specs), nil when there are none. For the
// common shapes (one key, or every argument from one on) it returns a
// slice of args, without allocating.
func (s *Spec) ValueKeys(args [][]byte) [][]byte {
	if s.valueRun != nil {
		return s.valueRun.slice(args)
	}
	var out [][]byte
	for i := range s.KeySpecs {
		ks := &s.KeySpecs[i]
		if !ks.ReadsValue {
			continue
		}
		for _, j := range ks.appendKeys(nil, args) {
			out = append(out, args[j])
		}
	}
	return out
}

// RoutingKeys returns the argument indexes of the keys that route the
// command in cluster mode, appended to dst.
func (s *Spec) RoutingKeys(dst []int, args [][]byte) []int {
	keys := s.AppendKeys(dst, args)
	if s.Routing == RouteFirstKey && len(keys) > 1 {
		keys = keys[:1]
	}
	return keys
}

// appendKeys appends the indexes of the keys ks finds in args.
func (ks *KeySpec) appendKeys(out []int, args [][]byte) []int {
	if ks.Begin.Unknown {
		return out
	}
	argc := len(args)
	first := ks.Begin.Index
	if ks.Begin.Keyword != "" {
		first = ks.searchKeyword(args)
		if first == 0 {
			return out
		}
	}
	var last, step int
	f := ks.Find
	if f.KeyNum {
		if first+f.KeyNumIdx >= argc {
			return out
		}
		n, err := strconv.ParseInt(string(args[first+f.KeyNumIdx]), 10, 64)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return out
		}
		first += f.FirstKey
		last = first + int(n) - 1
		step = f.KeyStep
	} else {
		switch {
		case f.LastKey >= 0:
			last = first + f.LastKey
		case f.Limit == 0:
			last = argc + f.LastKey
		default:
			last = first + (argc-first)/f.Limit + f.LastKey
		}
		step = f.KeyStep
	}
	step = max(step, 1)
	for j := first; j <= last; j += step {
		if j >= argc || j < first {
			continue
		}
		out = append(out, j)
	}
	return out
}

// searchKeyword returns the index after ks's keyword, 0 when absent.
func (ks *KeySpec) searchKeyword(args [][]byte) int {
	argc := len(args)
	start, end, inc := ks.Begin.StartFrom, argc-1, 1
	if start < 0 {
		start, end, inc = argc+start, 0, -1
	}
	for i := start; i != end+inc && i > 0 && i < argc; i += inc {
		if bytesEqualFold(args[i], ks.Begin.Keyword) {
			return i + 1
		}
	}
	return 0
}

// deriveKeyRange is Redis's populateCommandLegacyRangeSpec: the first
// key, last key and step that COMMAND INFO reports, from the key specs
// that are plain index ranges, and whether the command has movable keys
// (some key spec is not such a range, or may miss keys).
func deriveKeyRange(specs []KeySpec) (first, last, step int, movable bool) {
	if len(specs) == 0 {
		return 0, 0, 0, false
	}
	plain := func(ks *KeySpec) bool { return ks.Begin.Keyword == "" && !ks.Begin.Unknown && !ks.Find.KeyNum }
	abs := func(ks *KeySpec) int {
		if ks.Find.LastKey >= 0 {
			return ks.Begin.Index + ks.Find.LastKey
		}
		return ks.Find.LastKey
	}
	if len(specs) == 1 && plain(&specs[0]) {
		ks := &specs[0]
		return ks.Begin.Index, abs(ks), ks.Find.KeyStep, ks.Flags&KeyIncomplete != 0
	}
	// Redis compares last keys as unsigned, so a negative (from the end)
	// last key wins over any absolute one.
	first = math.MaxInt
	var lastU, prev uint32
	for i := range specs {
		ks := &specs[i]
		if !plain(ks) || ks.Find.KeyStep != 1 || (prev != 0 && prev != uint32(ks.Begin.Index-1)) {
			movable = true
			continue
		}
		if ks.Flags&KeyIncomplete != 0 {
			movable = true
		}
		first = min(first, ks.Begin.Index)
		lastU = max(lastU, uint32(int32(abs(ks))))
		prev = lastU
	}
	if first == math.MaxInt {
		return 0, 0, 0, true
	}
	return first, int(int32(lastU)), 1, movable
}

// bytesEqualFold compares an argument with a keyword, ASCII
// case-insensitively on both sides.
func bytesEqualFold(arg []byte, keyword string) bool {
	if len(arg) != len(keyword) {
		return false
	}
	for i := 0; i < len(arg); i++ {
		a, k := arg[i], keyword[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= k && k <= 'Z' {
			k += 'a' - 'A'
		}
		if a != k {
			return false
		}
	}
	return true
}

// keyRun is a key spec whose keys are consecutive arguments: from first to
// last (a negative last counts from the end).
type keyRun struct{ first, last int }

// slice returns the run's arguments in args, nil when there are none.
func (r *keyRun) slice(args [][]byte) [][]byte {
	last := r.last
	if last < 0 {
		last += len(args)
	}
	last = min(last, len(args)-1)
	if r.first > last {
		return nil
	}
	return args[r.first : last+1]
}

// valueRunOf returns the run of the command's only ReadsValue key spec
// when its keys are consecutive arguments, nil otherwise.
func valueRunOf(specs []KeySpec) *keyRun {
	var run *keyRun
	for i := range specs {
		ks := &specs[i]
		if !ks.ReadsValue {
			continue
		}
		if run != nil || ks.Begin.Keyword != "" || ks.Find.KeyNum || ks.Find.KeyStep != 1 || ks.Find.Limit != 0 {
			return nil
		}
		last := ks.Find.LastKey
		if last >= 0 {
			last += ks.Begin.Index
		}
		run = &keyRun{first: ks.Begin.Index, last: last}
	}
	return run
}
