package main

import (
	"slices"
	"testing"
)

func TestZSetElementsCommandAddsNumberedMembers(t *testing.T) {
	got := elementTypes["zset"].add("k", 2, 2)
	want := []string{"ZADD", "k", "3", "member:000002", "4.5", "member:000003"}
	if !slices.Equal(got, want) {
		t.Fatalf("add = %q, want %q", got, want)
	}
}

func TestElementsFlagsRefuseUnknownTypesAndOddCounts(t *testing.T) {
	if _, _, err := parseElementsFlags([]string{"--types", "zset,bogus"}); err == nil {
		t.Error("unknown type accepted")
	}
	if _, _, err := parseElementsFlags([]string{"--elements", "150"}); err == nil {
		t.Error("150 elements accepted")
	}
	o, _, err := parseElementsFlags(nil)
	if err != nil || o.elements != 100000 || !slices.Equal(o.types, []string{"zset"}) {
		t.Errorf("defaults: %+v %v", o, err)
	}
}

func TestSetElementsCommandsAddNumberedMembers(t *testing.T) {
	for typ, want := range map[string][]string{
		"set":    {"SADD", "k", "member:000002", "member:000003"},
		"intset": {"SADD", "k", "2", "3"},
	} {
		if got := elementTypes[typ].add("k", 2, 2); !slices.Equal(got, want) || elementTypes[typ].count != "SCARD" {
			t.Errorf("%s: add = %q, want %q", typ, got, want)
		}
	}
}
