package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Rule errors, worded like Redis's ACLSetUserStringError.
var (
	ErrUnknownCommand = errors.New("Unknown command or category name in ACL")
	ErrSyntax         = errors.New("Syntax error")
	ErrKeyAfterAll    = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	ErrChanAfterAll   = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	ErrNoSuchPassword = errors.New("The password you are trying to remove from the user does not exist")
	ErrBadHash        = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	ErrUnsupported    = errors.New("not supported by kvserver (no selectors, first-arg rules or %R~/%W~ key permissions)")
)

// User is one ACL user. A User handed out by Users is never modified
// (changes replace it), so connections may keep and read it freely.
type User struct {
	cat     *Catalog
	name    string
	enabled bool
	noPass  bool
	hashes  [][sha256.Size]byte
	// allowed has one bit per catalog id.
	allowed []uint64
	// allCommands is Redis's ALLCOMMANDS flag: +@all and no '-' rule since.
	allCommands bool
	allKeys     bool
	keys        []string
	allChannels bool
	channels    []string
	// baseAll and cmdRules are, for Describe, whether the last +@all or
	// -@all allowed everything, and the command rules given since.
	baseAll  bool
	cmdRules []string
	sanitize sanitizeMode
}

// NewUser returns a user as Redis creates one: off, without passwords,
// commands, keys or channels.
func (c *Catalog) NewUser(name string) *User {
	return &User{cat: c, name: name, allowed: make([]uint64, (c.Len()+63)/64)}
}

// clone returns a deep copy of u.
func (u *User) clone() *User {
	v := *u
	v.hashes = slices.Clone(u.hashes)
	v.allowed = slices.Clone(u.allowed)
	v.keys = slices.Clone(u.keys)
	v.channels = slices.Clone(u.channels)
	v.cmdRules = slices.Clone(u.cmdRules)
	return &v
}

// Name is the user name.
func (u *User) Name() string { return u.name }

// Enabled reports whether the user is on.
func (u *User) Enabled() bool { return u.enabled }

// NoPass reports whether any password authenticates the user.
func (u *User) NoPass() bool { return u.noPass }

// CheckPassword reports whether pass authenticates u, like Redis's
// ACLCheckUserCredentials: never for a user that is off, always for a
// nopass user, otherwise when its SHA-256 is one of the user's hashes
// (compared in constant time).
func (u *User) CheckPassword(pass []byte) bool {
	if !u.enabled {
		return false
	}
	if u.noPass {
		return true
	}
	sum := sha256.Sum256(pass)
	ok := 0
	for i := range u.hashes {
		ok |= subtle.ConstantTimeCompare(sum[:], u.hashes[i][:])
	}
	return ok == 1
}

// Unrestricted reports whether u may run every command on every key, so
// that a caller can skip the per-command checks.
func (u *User) Unrestricted() bool { return u.allCommands && u.allKeys }

// CanRun reports whether u may run the command with catalog id id.
func (u *User) CanRun(id int) bool {
	return u.allCommands || (id >= 0 && id < u.cat.Len() && u.allowed[id/64]&(1<<(id%64)) != 0)
}

// AllKeys reports whether u may access every key.
func (u *User) AllKeys() bool { return u.allKeys }

// KeyAllowed reports whether u may access key: some ~pattern matches it.
func (u *User) KeyAllowed(key []byte) bool {
	if u.allKeys {
		return true
	}
	for _, p := range u.keys {
		if u.cat.match([]byte(p), key) {
			return true
		}
	}
	return false
}

// Describe renders u like a line of Redis's ACL LIST: "user <name> on|off
// [nopass] [#<hash> ...] ~<patterns> channels <command rules>". The command
// rules are the ones given since the last +@all or -@all, not Redis's
// recomputed minimal form, so they may read differently from Redis's for
// the same permissions.
func (u *User) Describe() string {
	var b strings.Builder
	b.WriteString("user ")
	b.WriteString(u.name)
	for _, f := range u.Flags() {
		b.WriteString(" ")
		b.WriteString(f)
	}
	writeEach(&b, " #", u.PasswordHashes())
	if keys := u.KeyRules(); keys != "" {
		b.WriteString(" ")
		b.WriteString(keys)
	}
	if !u.allChannels {
		b.WriteString(" resetchannels")
	}
	if chans := u.ChannelRules(); chans != "" {
		b.WriteString(" ")
		b.WriteString(chans)
	}
	b.WriteString(" ")
	b.WriteString(u.CommandRules())
	return b.String()
}

// Flags are the user's flags as ACL GETUSER lists them: on or off, then
// nopass when set.
func (u *User) Flags() []string {
	flags := []string{choose(u.enabled, "on", "off")}
	if u.noPass {
		flags = append(flags, "nopass")
	}
	switch u.sanitize {
	case sanitizeSkip:
		flags = append(flags, "skip-sanitize-payload")
	case sanitizeOn:
		flags = append(flags, "sanitize-payload")
	}
	return flags
}

// sanitizeMode is the user's RESTORE payload flag: unset, or one of
// Redis's sanitize-payload and skip-sanitize-payload (kvserver always
// checks payloads; the flag is kept for ACL GETUSER and LIST).
type sanitizeMode uint8

const (
	sanitizeUnset sanitizeMode = iota
	sanitizeOn
	sanitizeSkip
)

// PasswordHashes are the SHA-256 digests of the user's passwords, in hex.
func (u *User) PasswordHashes() []string {
	out := make([]string, len(u.hashes))
	for i, h := range u.hashes {
		out[i] = hex.EncodeToString(h[:])
	}
	return out
}

// KeyRules are the user's key patterns as rules ("~*", "~a:* ~b:*"), ""
// for none.
func (u *User) KeyRules() string { return patternRules("~", u.allKeys, u.keys) }

// ChannelRules are the user's channel patterns as rules ("&*"), "" for
// none.
func (u *User) ChannelRules() string { return patternRules("&", u.allChannels, u.channels) }

// CommandRules are the user's command rules: +@all or -@all, then the
// rules given since (see Describe).
func (u *User) CommandRules() string {
	var b strings.Builder
	b.WriteString(choose(u.baseAll, "+@all", "-@all"))
	writeEach(&b, " ", u.cmdRules)
	return b.String()
}

// patternRules renders a pattern list with its rule prefix.
func patternRules(prefix string, all bool, patterns []string) string {
	if all {
		return prefix + "*"
	}
	var b strings.Builder
	for i, p := range patterns {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(prefix)
		b.WriteString(p)
	}
	return b.String()
}

// addPattern applies a ~pattern or &pattern rule to a pattern list and
// its "all" flag: "*" sets the flag and empties the list, another pattern
// is added once; after the flag is set, it fails with errAfterAll.
func addPattern(all *bool, patterns *[]string, arg string, errAfterAll error) error {
	if arg == "*" {
		*all, *patterns = true, nil
		return nil
	}
	if *all {
		return errAfterAll
	}
	if !slices.Contains(*patterns, arg) {
		*patterns = append(*patterns, arg)
	}
	return nil
}

// choose returns yes if cond holds, no otherwise.
func choose(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// writeEach writes each of items to b, prefix before each.
func writeEach(b *strings.Builder, prefix string, items []string) {
	for _, it := range items {
		b.WriteString(prefix)
		b.WriteString(it)
	}
}

// ruleAliases are the rules that stand for another rule.
var ruleAliases = map[string]string{
	"allkeys":     "~*",
	"allchannels": "&*",
	"allcommands": "+@all",
	"nocommands":  "-@all",
}

// SetRule applies one rule of Redis's ACL syntax to u: on, off, nopass,
// resetpass, >password, <password, #sha256hex, !sha256hex, ~pattern,
// allkeys, resetkeys, &pattern, allchannels, resetchannels, +@category,
// -@category, +command, -command, +command|subcommand,
// -command|subcommand, allcommands, nocommands, reset. Errors carry
// Redis's wording.
func (u *User) SetRule(rule string) error {
	lower := strings.ToLower(rule)
	if alias, ok := ruleAliases[lower]; ok {
		return u.SetRule(alias)
	}
	switch lower {
	case "", "clearselectors":
	case "on":
		u.enabled = true
	case "off":
		u.enabled = false
	case "nopass":
		u.noPass, u.hashes = true, nil
	case "resetpass":
		u.noPass, u.hashes = false, nil
	case "resetkeys":
		u.allKeys, u.keys = false, nil
	case "resetchannels":
		u.allChannels, u.channels = false, nil
	case "sanitize-payload":
		u.sanitize = sanitizeOn
	case "skip-sanitize-payload":
		u.sanitize = sanitizeSkip
	case "reset":
		for _, r := range []string{"resetpass", "resetkeys", "resetchannels", "off", "-@all", "sanitize-payload"} {
			u.SetRule(r)
		}
	default:
		return u.setOperatorRule(rule)
	}
	return nil
}

// setOperatorRule applies a rule that starts with an operator character:
// >password, <password, #hash, !hash, ~pattern, &pattern, +rule, -rule.
func (u *User) setOperatorRule(rule string) error {
	switch op, arg := rule[0], rule[1:]; op {
	case '>', '#':
		sum, err := ruleHash(op, arg)
		if err != nil {
			return err
		}
		if !slices.Contains(u.hashes, sum) {
			u.hashes = append(u.hashes, sum)
		}
		u.noPass = false
		return nil
	case '<', '!':
		sum, err := ruleHash(op, arg)
		if err != nil {
			return err
		}
		i := slices.Index(u.hashes, sum)
		if i < 0 {
			return ErrNoSuchPassword
		}
		u.hashes = slices.Delete(u.hashes, i, i+1)
		return nil
	case '~':
		return addPattern(&u.allKeys, &u.keys, arg, ErrKeyAfterAll)
	case '&':
		return addPattern(&u.allChannels, &u.channels, arg, ErrChanAfterAll)
	case '%', '(':
		return ErrUnsupported
	case '+', '-':
		return u.setCommandRule(op == '+', arg, rule)
	}
	return ErrSyntax
}

// setCommandRule applies +/-@category, +/-command and +/-command|sub the
// way Redis 7.0's ACLSetSelector does: a container command carries its
// subcommands with it, a category sets every command and subcommand in it.
func (u *User) setCommandRule(allow bool, arg, rule string) error {
	c := u.cat
	if cat, ok := strings.CutPrefix(arg, "@"); ok {
		if strings.EqualFold(cat, "all") {
			u.allCommands, u.baseAll = allow, allow
			fill := uint64(0)
			if allow {
				fill = ^uint64(0)
			}
			for i := range u.allowed {
				u.allowed[i] = fill
			}
			u.cmdRules = nil
			return nil
		}
		bit, ok := categoryBit(cat)
		if !ok {
			return ErrUnknownCommand
		}
		for id, bits := range c.cats {
			if bits&bit != 0 {
				u.setCommand(id, allow)
			}
		}
	} else {
		id, ok := c.ID(arg)
		if !ok {
			if parent, _, isSub := strings.Cut(arg, "|"); isSub {
				if pid, known := c.ID(parent); known && len(c.subs[pid]) == 0 {
					return ErrUnsupported // Redis's first-arg rules (+select|0)
				}
			}
			return ErrUnknownCommand
		}
		u.setCommand(id, allow)
	}
	if !allow {
		u.allCommands = false
	}
	u.cmdRules = append(u.cmdRules, strings.ToLower(rule))
	return nil
}

// setCommand sets or clears a command's bit and its subcommands' bits.
func (u *User) setCommand(id int, allow bool) {
	set := func(id int) {
		if allow {
			u.allowed[id/64] |= 1 << (id % 64)
		} else {
			u.allowed[id/64] &^= 1 << (id % 64)
		}
	}
	set(id)
	for _, sub := range u.cat.subs[id] {
		set(sub)
	}
}

// ruleHash is the SHA-256 digest a password rule names: of the password
// after > or <, or the one spelled in hex after # or !.
func ruleHash(op byte, arg string) ([sha256.Size]byte, error) {
	if op == '>' || op == '<' {
		return sha256.Sum256([]byte(arg)), nil
	}
	var sum [sha256.Size]byte
	if !parseHash(arg, &sum) {
		return sum, ErrBadHash
	}
	return sum, nil
}

// parseHash parses 64 lower-case hex digits, as Redis requires of #hash.
func parseHash(s string, out *[sha256.Size]byte) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if ch := s[i]; !('0' <= ch && ch <= '9' || 'a' <= ch && ch <= 'f') {
			return false
		}
	}
	_, err := hex.Decode(out[:], []byte(s))
	return err == nil
}

// ParseUser builds a user from a Redis ACL user line without the leading
// "user": a name, then rules ("alice on #<hash> ~cache:* +@read"). Rules
// are separated by spaces; passwords with spaces must be given as #hash.
func (c *Catalog) ParseUser(line string) (*User, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, errors.New("empty user definition")
	}
	u := c.NewUser(fields[0])
	if err := u.SetRules(fields[1:]...); err != nil {
		return nil, err
	}
	return u, nil
}

// SetRules applies rules in order, stopping at the first error, which
// names the rule as Redis's does ("Error in ACL SETUSER modifier ...").
func (u *User) SetRules(rules ...string) error {
	for _, r := range rules {
		if err := u.SetRule(r); err != nil {
			return fmt.Errorf("user %s: error in ACL modifier '%s': %w", u.name, r, err)
		}
	}
	return nil
}
