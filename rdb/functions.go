package rdb

import (
	"encoding/binary"
	"errors"
)

// Function libraries as FUNCTION DUMP writes them (Redis 7.0's
// rdbSaveFunctions): for each library the opcode FUNCTION2 and its code as
// an RDB string, then the footer.

const (
	opcodeFunction2     = 245
	opcodeFunctionPreGA = 246
)

// Errors of RestoreFunctions, worded as FUNCTION RESTORE replies them.
var (
	ErrNotFunction   = errors.New("given type is not a function")
	ErrFunctionPreGA = errors.New("Pre-GA function format not supported")
	ErrFunctionData  = errors.New("failed loading the given functions payload")
)

// DumpFunctions serializes the libraries' code as FUNCTION DUMP does,
// strings LZF-compressed where Redis compresses them.
func DumpFunctions(codes [][]byte) []byte {
	var b []byte
	for _, code := range codes {
		b = append(b, opcodeFunction2)
		b = appendString(b, code)
	}
	return AppendFooter(b)
}

// RestoreFunctions reads the libraries' code from a FUNCTION DUMP payload.
func RestoreFunctions(payload []byte) ([][]byte, error) {
	body, err := payloadBody(payload)
	if err != nil {
		return nil, err
	}
	r := &reader{b: body}
	var codes [][]byte
	for len(r.b) > 0 {
		switch r.byte() {
		case opcodeFunction2:
		case opcodeFunctionPreGA:
			return nil, ErrFunctionPreGA
		default:
			return nil, ErrNotFunction
		}
		code := r.string()
		if r.err != nil {
			return nil, ErrFunctionData
		}
		codes = append(codes, code)
	}
	return codes, nil
}

// payloadBody checks a DUMP payload's footer, the RDB version and the
// CRC64, and returns what precedes it.
func payloadBody(payload []byte) ([]byte, error) {
	n := len(payload)
	if n < 10 ||
		binary.LittleEndian.Uint16(payload[n-10:]) > rdbVersion ||
		crc64Jones(0, payload[:n-8]) != binary.LittleEndian.Uint64(payload[n-8:]) {
		return nil, ErrPayload
	}
	return payload[:n-10], nil
}
