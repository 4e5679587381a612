"""The study web app: follow live studies and enter scores in a browser.

``combex dashboard STORAGE`` serves it (uvicorn); :func:`create_app` builds the Starlette
application for any ASGI server. Pages: the studies, one page per study (status, leader
and challenger by name, how sure the study is, the stopping statistic against its
threshold, per-member estimates with intervals, the certificate in words, pending
tickets, the told log with corrections) and the assistants' page (sign in with a token,
ask for a team, enter its score with a confirmation step, release a ticket, correct a
score). JSON endpoints beside the pages (``/api/studies``, ``/api/study/NAME``). The
security model is in :mod:`combex.web._security` and the user guide.

Needs the ``studies`` extra (``pip install 'combex[studies]'``: Starlette, Jinja2,
uvicorn, python-multipart, itsdangerous).
"""


from ._app import create_app
from ._cli import add_dashboard_command, serve

__all__ = ["create_app", "serve", "add_dashboard_command"]
