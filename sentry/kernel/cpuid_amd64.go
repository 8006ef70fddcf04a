package kernel

func cpuidEDX1() uint32
