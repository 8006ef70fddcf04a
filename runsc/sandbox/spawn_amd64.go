package sandbox

func rawSpawn(args *cloneArgs, size uintptr, steps *spawnStep, n uintptr, res *[2]int64) (pid, errno uintptr)
