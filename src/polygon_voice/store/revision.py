"""The schema revision this version of Polygon expects, importable without SQLAlchemy.

Opening an up-to-date database compares its stored revision with this one; `runs` does it
with the standard library alone (store/fast_read.py), so the constant lives apart from the
migration code.
"""

# The newest revision in migrations/versions; a test pins it to Alembic's own head.
HEAD_REVISION = "0007"
# Where Alembic records the revision a database is at.
VERSION_TABLE = "alembic_version"
