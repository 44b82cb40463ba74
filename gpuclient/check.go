package gpuclient

// The checks every Device runs before copying, exported so that devices
// outside this package (gpuclient/cudadev) refuse exactly the calls
// CPUDevice refuses, with the same errors (wrapping ErrLayout).

// CheckCopy validates the arguments of a Gather or Scatter: the chunk, one
// buffer of c.Paged.LayerBytes() per layer, one slot below c.Paged.Slots()
// per token, and a chunk buffer of c.Size() bytes.
func CheckCopy(c Chunk, layers [][]byte, slots []int64, chunk []byte) error {
	return checkCopy(c, layers, slots, chunk)
}

// CheckPaged is CheckCopy without the chunk buffer (DequantScatter reads a
// blob instead).
func CheckPaged(c Chunk, layers [][]byte, slots []int64) error {
	return checkPaged(c, layers, slots)
}

// CheckSlots validates the chunk and its slots alone, for devices whose
// paged buffers are not host slices (device memory).
func CheckSlots(c Chunk, slots []int64) error {
	if err := c.Validate(); err != nil {
		return err
	}
	return checkSlots(c, slots)
}
