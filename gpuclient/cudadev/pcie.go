package cudadev

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// LinkBandwidth is the data rate, in bytes per second and per direction, of
// a PCIe link of generation gen and width lanes: the transfer rate times
// the line code's efficiency (8b/10b up to gen 2, 128b/130b for gens 3-5,
// 242/256 FLITs for gen 6). Packet headers cost another 5-15% in practice,
// so a good host-to-device copy reaches 80-90% of it. It is 0 for an
// unknown generation.
func LinkBandwidth(gen, width int) float64 {
	// Generations 1 to 6: transfer rate in GT/s, line-code efficiency.
	gens := [...]struct{ gts, eff float64 }{
		{2.5, 8.0 / 10}, {5, 8.0 / 10},
		{8, 128.0 / 130}, {16, 128.0 / 130}, {32, 128.0 / 130},
		{64, 242.0 / 256},
	}
	if gen < 1 || gen > len(gens) {
		return 0
	}
	g := gens[gen-1]
	return g.gts * 1e9 * g.eff * float64(width) / 8
}

// PCIeLink is a GPU's PCIe link as NVML reports it. Max is what the GPU and
// the slot can train to; Curr is the present state, which idle GPUs lower
// to save power, so bandwidth is compared against Max.
type PCIeLink struct {
	MaxGen, MaxWidth   int
	CurrGen, CurrWidth int
}

// Bandwidth is LinkBandwidth of the maximum link.
func (l PCIeLink) Bandwidth() float64 { return LinkBandwidth(l.MaxGen, l.MaxWidth) }

func (l PCIeLink) String() string {
	return fmt.Sprintf("PCIe gen %d x%d (now gen %d x%d), %.1f GB/s per direction",
		l.MaxGen, l.MaxWidth, l.CurrGen, l.CurrWidth, l.Bandwidth()/1e9)
}

// nvml is the part of NVML (libnvidia-ml.so.1, installed with the driver)
// PCIeLinkOf needs, bound with purego like the CUDA driver.
type nvml struct {
	init      func() int32
	shutdown  func() int32
	errString func(int32) string
	byBusID   func(busID string, dev *uintptr) int32
	maxGen    func(dev uintptr, v *uint32) int32
	maxWidth  func(dev uintptr, v *uint32) int32
	currGen   func(dev uintptr, v *uint32) int32
	currWidth func(dev uintptr, v *uint32) int32
}

// loadNVML binds NVML. Each call opens the library again, which the
// dynamic loader counts rather than loads; like the CUDA driver, it is
// never closed.
func loadNVML() (*nvml, error) {
	lib, err := purego.Dlopen("libnvidia-ml.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	n := &nvml{}
	for name, fptr := range map[string]any{
		"nvmlInit_v2":                         &n.init,
		"nvmlShutdown":                        &n.shutdown,
		"nvmlErrorString":                     &n.errString,
		"nvmlDeviceGetHandleByPciBusId_v2":    &n.byBusID,
		"nvmlDeviceGetMaxPcieLinkGeneration":  &n.maxGen,
		"nvmlDeviceGetMaxPcieLinkWidth":       &n.maxWidth,
		"nvmlDeviceGetCurrPcieLinkGeneration": &n.currGen,
		"nvmlDeviceGetCurrPcieLinkWidth":      &n.currWidth,
	} {
		sym, err := purego.Dlsym(lib, name)
		if err != nil {
			return nil, fmt.Errorf("%w: NVML has no %s: %w", ErrUnavailable, name, err)
		}
		purego.RegisterFunc(fptr, sym)
	}
	return n, nil
}

// PCIeLinkOf asks NVML for the PCIe link of the GPU at busID (the form
// cuDeviceGetPCIBusId and Info.PCIBusID give, "0000:41:00.0").
func PCIeLinkOf(busID string) (PCIeLink, error) {
	n, err := loadNVML()
	if err != nil {
		return PCIeLink{}, err
	}
	check := func(op string, res int32) error {
		if res != 0 {
			return fmt.Errorf("cudadev: %s: %s (%d)", op, n.errString(res), res)
		}
		return nil
	}
	if err := check("nvmlInit_v2", n.init()); err != nil {
		return PCIeLink{}, err
	}
	defer n.shutdown()
	var dev uintptr
	if err := check("nvmlDeviceGetHandleByPciBusId_v2("+busID+")", n.byBusID(busID, &dev)); err != nil {
		return PCIeLink{}, err
	}
	var v [4]uint32
	for i, q := range []struct {
		op string
		fn func(uintptr, *uint32) int32
	}{{"MaxPcieLinkGeneration", n.maxGen}, {"MaxPcieLinkWidth", n.maxWidth}, {"CurrPcieLinkGeneration", n.currGen}, {"CurrPcieLinkWidth", n.currWidth}} {
		if err := check("nvmlDeviceGet"+q.op, q.fn(dev, &v[i])); err != nil {
			return PCIeLink{}, err
		}
	}
	return PCIeLink{MaxGen: int(v[0]), MaxWidth: int(v[1]), CurrGen: int(v[2]), CurrWidth: int(v[3])}, nil
}

// PCIeLink is PCIeLinkOf the device's GPU.
func (d *Device) PCIeLink() (PCIeLink, error) { return PCIeLinkOf(d.info.PCIBusID) }
