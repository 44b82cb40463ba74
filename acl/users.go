package acl

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// DefaultUserName is the user every connection starts as.
const DefaultUserName = "default"

// Users is the set of users of a server. The default user always exists.
// It is safe for concurrent use; the *User values it returns are never
// modified, changes replace them.
type Users struct {
	cat    *Catalog
	mu     sync.RWMutex
	byName map[string]*User
}

// NewUsers builds the users the way Redis 7.0 does at start: the default
// user is "on nopass ~* &* +@all"; requirepass, when set, replaces its
// nopass with that password; then each line ("name rules...") defines a
// user. A line for default resets the default user first, so its rules
// replace what requirepass did, as in Redis. A name defined twice is an
// error.
func NewUsers(cat *Catalog, requirePass string, lines []string) (*Users, error) {
	def := cat.NewUser(DefaultUserName)
	if err := def.SetRules("on", "nopass", "~*", "&*", "+@all"); err != nil {
		return nil, err
	}
	if requirePass != "" {
		def.SetRules("resetpass", ">"+requirePass)
	}
	us := &Users{cat: cat, byName: map[string]*User{DefaultUserName: def}}
	seen := map[string]bool{}
	for _, line := range lines {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		name := fields[0]
		if seen[name] {
			return nil, fmt.Errorf("user %s: Duplicate user found. A user can only be defined once in config files", name)
		}
		seen[name] = true
		u := cat.NewUser(name)
		if err := u.SetRules(fields[1:]...); err != nil {
			return nil, err
		}
		us.byName[name] = u
	}
	return us, nil
}

// Catalog is the command catalog the users' rules refer to.
func (us *Users) Catalog() *Catalog { return us.cat }

// Lookup returns the user named name, or nil.
func (us *Users) Lookup(name string) *User {
	us.mu.RLock()
	defer us.mu.RUnlock()
	return us.byName[name]
}

// Default returns the default user.
func (us *Users) Default() *User { return us.Lookup(DefaultUserName) }

// Authenticate returns the user that name and pass authenticate, or nil
// (unknown user, user off, wrong password: Redis gives one error for all).
func (us *Users) Authenticate(name, pass []byte) *User {
	u := us.Lookup(string(name))
	if u == nil || !u.CheckPassword(pass) {
		return nil
	}
	return u
}

// List returns every user, sorted by name (ACL LIST and ACL USERS order).
func (us *Users) List() []*User {
	us.mu.RLock()
	list := make([]*User, 0, len(us.byName))
	for _, u := range us.byName {
		list = append(list, u)
	}
	us.mu.RUnlock()
	slices.SortFunc(list, func(a, b *User) int { return strings.Compare(a.name, b.name) })
	return list
}

// SetDefaultPassword is CONFIG SET requirepass, Redis's
// ACLUpdateDefaultUserPassword: the default user's passwords are replaced
// by pass, or by nopass when pass is empty.
func (us *Users) SetDefaultPassword(pass string) {
	us.mu.Lock()
	defer us.mu.Unlock()
	u := us.byName[DefaultUserName].clone()
	u.SetRule("resetpass")
	if pass != "" {
		u.SetRule(">" + pass)
	} else {
		u.SetRule("nopass")
	}
	us.byName[DefaultUserName] = u
}

// ErrDefaultUser is ACL DELUSER's refusal to delete the default user.
var ErrDefaultUser = errors.New("The 'default' user cannot be removed")

// SetUser is ACL SETUSER: rules apply, left to right, to a copy of the
// named user, or to a new user (off, with no permissions) when there is
// none, and the result replaces it. On error nothing changes, and the
// error names the rule in Redis's words.
func (us *Users) SetUser(name string, rules []string) (*User, error) {
	us.mu.Lock()
	defer us.mu.Unlock()
	var u *User
	if old := us.byName[name]; old != nil {
		u = old.clone()
	} else {
		u = us.cat.NewUser(name)
	}
	for _, r := range rules {
		if err := u.SetRule(r); err != nil {
			return nil, fmt.Errorf("Error in ACL SETUSER modifier '%s': %w", r, err)
		}
	}
	us.byName[name] = u
	return u, nil
}

// Delete is ACL DELUSER: it removes the named users and returns the
// names that existed. Naming the default user deletes nothing and fails
// with ErrDefaultUser.
func (us *Users) Delete(names []string) ([]string, error) {
	if slices.Contains(names, DefaultUserName) {
		return nil, ErrDefaultUser
	}
	us.mu.Lock()
	defer us.mu.Unlock()
	var deleted []string
	for _, n := range names {
		if _, ok := us.byName[n]; ok {
			delete(us.byName, n)
			deleted = append(deleted, n)
		}
	}
	return deleted, nil
}

// Lines are the users as user lines without the leading "user" (the
// config file's form, which NewUsers and Replace read), sorted by name.
func (us *Users) Lines() []string {
	list := us.List()
	out := make([]string, len(list))
	for i, u := range list {
		out[i] = strings.TrimPrefix(u.Describe(), "user ")
	}
	return out
}

// Replace is ACL LOAD: the users become those built from requirePass and
// lines as at start (NewUsers); on error nothing changes.
func (us *Users) Replace(requirePass string, lines []string) error {
	next, err := NewUsers(us.cat, requirePass, lines)
	if err != nil {
		return err
	}
	us.mu.Lock()
	us.byName = next.byName
	us.mu.Unlock()
	return nil
}
