// Package datatype holds the in-memory forms of Redis's composite values
// (hashes, lists, sets, sorted sets, streams) and their binary encodings for the disk
// tier.
//
// A string is stored by the engine as plain bytes; every other kind of value
// is an Object: a structure the commands change in place under the engine
// lock, that knows the memory it uses (for maxmemory), the encoding name
// OBJECT ENCODING reports, and how to write itself as bytes when the engine
// demotes or persists it. Decode turns those bytes back into the Object.
package datatype
