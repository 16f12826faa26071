package validate

// spinPause tells the CPU that its caller polls (PAUSE): the core spends
// less on the loop, and a sibling hardware thread more.
func spinPause()
