package main

import (
	"context"
	"testing"

	"github.com/kvserver/kvserver/gpuclient"
)

// TestLayerBenchVerifyCatchesEveryWrongByte: verify accepts exactly the
// cache a correct load produces (each token's rows moved from its source
// slot to its destination slot, everything else zero) and rejects a single
// wrong byte in a loaded row or in a slot no token maps to.
func TestLayerBenchVerifyCatchesEveryWrongByte(t *testing.T) {
	b, err := newLayerBench("127.0.0.1:1", 2, 1, 2, 8) // never connects
	if err != nil {
		t.Fatal(err)
	}
	defer b.client.Close()
	ctx := context.Background()
	c := b.src.LayerShape()
	buf := make([]byte, c.Size())
	for l := range b.layers {
		if err := (gpuclient.CPUDevice{}).Gather(ctx, c, b.srcKV[l:l+1], b.srcSlots[:c.Tokens], buf); err != nil {
			t.Fatal(err)
		}
		if err := (gpuclient.CPUDevice{}).Scatter(ctx, c, b.dstKV[l:l+1], b.dstSlots[:c.Tokens], buf); err != nil {
			t.Fatal(err)
		}
	}
	if !b.verify() {
		t.Fatal("verify rejects a correct load")
	}
	p := b.paged
	loaded := p.SlotOffset(1, b.dstSlots[17]) + 3
	free := -1
	used := map[int64]bool{}
	for _, s := range b.dstSlots {
		used[s] = true
	}
	for s := range int64(p.Slots()) {
		if !used[s] {
			free = p.SlotOffset(0, s)
			break
		}
	}
	if free < 0 {
		t.Fatal("no free slot in the destination cache")
	}
	for _, off := range []int{loaded, free} {
		b.dstKV[1][off] ^= 1
		if b.verify() {
			t.Fatalf("verify accepts a flipped byte at offset %d of layer 1", off)
		}
		b.dstKV[1][off] ^= 1
	}
}
