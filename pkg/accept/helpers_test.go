package accept

import "os"

func readTestdata(name string) ([]byte, error) { return os.ReadFile(name) }
