"""The HTTP face and all network I/O: app, routes, request parsing, tenants, metrics,
the upstream client and regenerate hooks.  Talks to the engine through its seam only
and never imports torch."""
