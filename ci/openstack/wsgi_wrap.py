"""gunicorn entry point for an OpenStack WSGI app: oslo.config must not see gunicorn's argv."""

import importlib
import os
import shlex
import sys

sys.argv = [os.environ.get("WSGI_PROG", "wsgi"), *shlex.split(os.environ.get("WSGI_ARGS", ""))]
application = importlib.import_module(os.environ["WSGI_MODULE"]).application
