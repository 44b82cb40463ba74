package cudadev

import (
	"encoding/binary"
	"unsafe"
)

func leU64(b []byte) uint64 { return binary.NativeEndian.Uint64(b) }

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
