//go:build !amd64

package validate

const haveRouteMarks = false

func routeMarksAVX2(*byte, int, *uint64) { panic("validate: no vector kernel") }

func structMarksAVX2(*byte, int, *uint64) { panic("validate: no vector kernel") }
