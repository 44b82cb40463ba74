package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/respclient"
)

// TestTableNamesReadsCommandsAndSubcommandsInOrder checks that the names
// read from the source of package commands are exactly the rows of its
// table, every family included.
func TestTableNamesReadsCommandsAndSubcommandsInOrder(t *testing.T) {
	names, err := tableNames("../..")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	commands.Walk(commands.Specs(), func(spec *commands.Spec) { rows = append(rows, spec.Name) })
	if got, want := slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(rows)); !slices.Equal(got, want) {
		t.Errorf("tableNames found %d names, the table has %d rows:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for _, want := range []string{"get", "client", "client|setinfo", "command|docs", "shutdown"} {
		if !slices.Contains(names, want) {
			t.Errorf("tableNames lacks %q", want)
		}
	}
	if i, j := slices.Index(names, "client"), slices.Index(names, "client|getname"); i < 0 || j != i+1 {
		t.Errorf("client at %d, client|getname at %d: want the subcommand right after its container", i, j)
	}
}

// TestEncodeKeepsEveryRESP3Kind checks that a reply of the kinds Redis
// uses in COMMAND INFO and DOCS is written back byte for byte, and that
// the kinds resp.Value cannot hold fail the run instead of changing kind.
func TestEncodeKeepsEveryRESP3Kind(t *testing.T) {
	reply := "*3\r\n~2\r\n%2\r\n$4\r\nname\r\n+key\r\n$5\r\nindex\r\n:-1\r\n*1\r\n_\r\n~0\r\n%0\r\n"
	_, v, err := respclient.NewReader(strings.NewReader(reply), 4096).ReadReply(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := encode(v)
	if err != nil {
		t.Fatal(err)
	}
	if got != reply {
		t.Errorf("encode = %q\nwant %q", got, reply)
	}
	for _, bad := range []respclient.Reply{
		{Type: ','},
		{Type: '#'},
		{Type: '='},
		{Type: '-', Str: "ERR x"},
		{Type: '*', Elems: []respclient.Reply{{Type: '%', Elems: []respclient.Reply{{Type: '$'}, {Type: ','}}}}},
		{Type: '+', Str: "two\nlines"},
	} {
		if s, err := encode(bad); err == nil {
			t.Errorf("%+v was encoded as %q", bad, s)
		}
	}
}
