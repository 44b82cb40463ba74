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

func TestGoValueRendersRESP3Types(t *testing.T) {
	reply := "~2\r\n%2\r\n$4\r\nname\r\n+key\r\n$5\r\nindex\r\n:-1\r\n*1\r\n_\r\n"
	_, v, err := respclient.NewReader(strings.NewReader(reply), 4096).ReadReply(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := goValue(v, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `resp.SetOf(resp.Map(resp.Bulk("name"), resp.Simple("key"), resp.Bulk("index"), resp.Int(-1)), resp.Array(resp.Value{Kind: resp.KindNull}))`
	if got != want {
		t.Errorf("goValue = %s\nwant %s", got, want)
	}
	if _, err := goValue(respclient.Reply{Type: ','}, 0); err == nil {
		t.Error("a double, which Value cannot hold, was accepted")
	}
}
