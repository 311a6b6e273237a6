"""The web console under /console: server-rendered pages (Jinja2 templates, a small stylesheet and
one small script, all package data) over the same services, authentication and roles as the API.
session.py (how a browser's requests authenticate, CSRF), login.py, pages.py, render.py,
sources.py (cluster nodes, optional alarms), assets.py (the stylesheet and the script)."""
