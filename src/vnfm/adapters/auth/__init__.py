"""Authentication adapters: the built-in authorization server's signing keys and tokens, and the
checks of tokens from an external one (JWKS, RFC 7662 introspection)."""
