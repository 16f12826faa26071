package validate

import "golang.org/x/sys/cpu"

// haveRouteMarks: routeMarksAVX2 may run here.
var haveRouteMarks = cpu.X86.HasAVX2

//go:noescape
func routeMarksAVX2(p *byte, blocks int, out *uint64)

//go:noescape
func structMarksAVX2(p *byte, blocks int, out *uint64)
