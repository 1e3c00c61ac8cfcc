(module (func (export "call")))
