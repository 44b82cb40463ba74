package cluster

// Slots is the number of hash slots of a Redis cluster.
const Slots = 16384

// ScanBatch is how many keys a walk of the keyspace by slot (CLUSTER
// GETKEYSINSLOT and COUNTKEYSINSLOT, the foreign-slot purge) examines per
// engine step, so that other clients are served in between.
const ScanBatch = 1024

// crcTable is the CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0,
// no reflection) table Redis's crc16.c uses.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

// CRC16 returns the CRC16-CCITT (XMODEM) checksum of b, the function
// Redis Cluster hashes keys with.
func CRC16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^c]
	}
	return crc
}

// KeySlot returns the hash slot of key like Redis's keyHashSlot: when the
// key holds a '{' followed later by a '}' with at least one byte between
// them, only the bytes between the first '{' and the first '}' after it
// are hashed, so keys sharing a {tag} share a slot.
func KeySlot(key []byte) int {
	return int(CRC16(hashTag(key)) & (Slots - 1))
}

// hashTag returns the part of key that KeySlot hashes.
func hashTag(key []byte) []byte {
	for i, c := range key {
		if c != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j == i+1 {
					return key // "{}" hashes the whole key
				}
				return key[i+1 : j]
			}
		}
		return key
	}
	return key
}
