package sandbox

func rawSpawn(flags uintptr, steps *spawnStep, n uintptr, res *[2]int64) (pid, errno uintptr)
