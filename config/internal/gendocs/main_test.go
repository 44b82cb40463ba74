package main

import "testing"

func TestReplaceFlagTableKeepsTheRestOfTheDocument(t *testing.T) {
	doc := "# T\n\ntext\n| flag | a |\n|---|---|\n| old | 1 |\n\nafter\n"
	got, err := replaceFlagTable(doc, "| flag | a |\n|---|---|\n| new | 2 |\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# T\n\ntext\n| flag | a |\n|---|---|\n| new | 2 |\n\nafter\n"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if _, err := replaceFlagTable("no table\n", "x"); err == nil {
		t.Error("a document without the table was accepted")
	}
}
