"""`polygon serve`: the local web app over the stored runs (docs/web.md).

Needs the `web` extra (FastAPI, uvicorn, python-multipart). `create_app` lives in
`polygon_voice.web.app`; importing this package alone loads neither FastAPI nor the store.
"""
