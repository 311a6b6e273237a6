"""Who may do what on the API: authentication (static development token, OAuth 2.0 bearer tokens
of the built-in or an external authorization server), the role each route needs (rules.py, one
table) and the built-in authorization server's endpoints (oauth2.py)."""
