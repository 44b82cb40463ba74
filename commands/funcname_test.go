package commands

import (
	"reflect"
	"runtime"
)

// runtimeFuncName is the linker's name of a function value.
func runtimeFuncName(h Handler) string {
	return runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name()
}
