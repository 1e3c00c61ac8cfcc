(component (import "acme:secret/vault@1.0.0" (instance (export "open" (func)))))
